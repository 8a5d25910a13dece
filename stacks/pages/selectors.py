"""Reads the pages need beyond ``stacks.selectors``: a searchable, pageable list."""
from django.db.models import Q

from heatweb.exceptions import HeatError
from heatweb.models import Role
from stacks.models import Stack
from stacks.models import states as st
from stacks.plugins import plugin_for, stack_context
from stacks.selectors import resource_attributes
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG
from stacks.resources.registry import plugin_or_base

# Whole states, not suffixes: the (project, state, created_at) index serves them.
STATUS_FILTERS = {
    "IN_PROGRESS": Q(state__in=st.states(statuses=(st.IN_PROGRESS,))),
    "COMPLETE": Q(state__in=st.states(statuses=(st.COMPLETE,))),
    "FAILED": Q(state__in=st.states(statuses=(st.FAILED,))),
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


def physical_object(stack, res):
    """``(live state, lock held before)`` of the resource's cloud object, as the driver says now.

    ``live state`` is ``{label: value}`` (None for a resource with no cloud
    object; ``{"error": ...}`` when the cloud could not be asked).
    """
    if not res.physical_resource_id or res.state == st.INIT_COMPLETE:
        return None, None
    try:
        plugin = plugin_for(stack_context(stack), res)
        return plugin.physical_state(), plugin.lock_held_before()
    except HeatError as error:
        return {"error": error.message}, None
    except Exception as error:  # noqa: BLE001 - the cloud's refusal is shown, not a 500
        return {"error": f"{type(error).__name__}: {error}"}, None


def physical_locks(stack, rows):
    """``{resource name: (word, held before)}`` for the cloud objects the stack lock holds:
    ``word`` is "locked" (a server) or "protected" (an image), ``held before`` whether it
    already was before the stack lock. From the stored lock records, no cloud call (the
    resource page asks the cloud)."""
    held = [r for r in rows if (r.plugin_data or {}).get(PHYSICAL_LOCK_FLAG)]
    if not held:
        return {}
    try:
        ctx = stack_context(stack)
    except HeatError:
        return {}
    result = {}
    for res in held:
        plugin = plugin_for(ctx, res)
        if plugin.physical_lock_word is not None:
            result[res.name] = (plugin.physical_lock_word, plugin.lock_held_before())
    return result


def attribute_rows(stack, res, *, user, role):
    """``[(name, value, masked), ...]`` of the resource's attributes for the page.

    A signed URL (a scaling policy's ``alarm_url``) acts with no token: only
    the stack's owner and the project's admins see it; for others it is
    masked.
    """
    signed = set(plugin_or_base(res.type).signed_url_attributes)
    visible = role == Role.ADMIN or (stack.user_id is not None and stack.user_id == user.pk)
    return [(name, value, name in signed and bool(value) and not visible)
            for name, value in resource_attributes(res).items()]
