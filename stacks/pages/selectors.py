"""Reads the pages need beyond ``stacks.selectors``: a searchable, pageable list."""
from django.db.models import Q

from stacks.models import Stack
from stacks.models import states as st

STATUS_FILTERS = {
    "IN_PROGRESS": Q(state__endswith="_IN_PROGRESS"),
    "COMPLETE": Q(state__endswith="_COMPLETE"),
    "FAILED": Q(state__endswith="_FAILED"),
    "LOCKED": Q(state__in=st.LOCKED_STATES),
}


def stack_page_list(project, *, name="", status=""):
    """Top-level live stacks of the project, newest first; ``name`` matches a part."""
    qs = (Stack.objects.select_related("locked_by")
          .filter(project=project, deleted_at__isnull=True, parent__isnull=True))
    if name:
        qs = qs.filter(name__icontains=name)
    if status in STATUS_FILTERS:
        qs = qs.filter(STATUS_FILTERS[status])
    return qs.order_by("-created_at", "-id")


def stack_rows(project, ids):
    """The stacks of the project with these ids, deleted ones included (for live rows)."""
    return list(Stack.objects.select_related("locked_by")
                .filter(project=project, pk__in=ids).order_by("-created_at", "-id"))


def stack_children(stack):
    """``{resource name: child stack}`` for the stack's live nested stacks."""
    return {child.parent_resource_name: child
            for child in Stack.objects.filter(parent=stack, deleted_at__isnull=True)}
