"""Reads about locks, used by the API and the pages: a stack's lock history, what is locked now."""
from heatweb.api import page_limit
from heatweb.exceptions import BadRequest
from stacks.models import LockRecord, Stack
from stacks.models import states as st

HISTORY_PAGE = 200


def lock_history(stack, *, params):
    """``stack``'s lock records, newest first (``sort_dir=asc``: oldest), Heat's limit/marker paging.

    The marker is the ``id`` of the last record of the previous page.
    """
    direction = params.get("sort_dir") or "desc"
    if direction not in ("asc", "desc"):
        raise BadRequest(f"Unknown sort direction {direction}, must be 'desc' or 'asc'.")
    qs = LockRecord.objects.filter(stack=stack).order_by("id" if direction == "asc" else "-id")
    marker = params.get("marker")
    if marker not in (None, ""):
        if not str(marker).isdigit() or not qs.filter(pk=int(marker)).exists():
            raise BadRequest(f"Marker {str(marker)[:40]} not found.")
        qs = qs.filter(**{"id__gt" if direction == "asc" else "id__lt": int(marker)})
    return list(qs[:page_limit(params.get("limit"), default=HISTORY_PAGE)])


def locked_now(projects=None):
    """Stacks locked now (themselves; nested ones too), of ``projects`` (None: every project)."""
    qs = Stack.objects.select_related("locked_by", "parent").filter(
        deleted_at__isnull=True, state__in=st.LOCKED_STATES).order_by("project_id", "locked_at")
    if projects is not None:
        qs = qs.filter(project__in=projects)
    return list(qs[:1000])
