"""Marking a resource unhealthy (Heat's ``PATCH .../resources/<name>``).

Reached only through the door (``stacks.services.actions.stack_action`` with
``"mark_unhealthy"``), which refuses it on a stack a lock holds over.
"""
from django.db import transaction

from heatweb.exceptions import ActionInProgress, EntityNotFound
from stacks.models import Resource
from stacks.models import states as st
from stacks.models.events import resource_event

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"


def _find(stack, name):
    """The stack's current resource by logical name, or by physical id (as Heat)."""
    current = (Resource.objects.filter(stack=stack, replaced_by__isnull=True)
               .exclude(state="DELETE_COMPLETE"))
    res = current.filter(name=name).first() or \
        current.filter(physical_resource_id=name).exclude(physical_resource_id="").first()
    if res is None:
        raise EntityNotFound(entity="Resource", name=name)
    return res


def resource_mark_unhealthy(stack, *, resource_name, mark_unhealthy, reason=""):
    """``mark_unhealthy``: the resource becomes CHECK_FAILED with ``reason`` (the next
    update replaces it); false: a CHECK_FAILED resource becomes CHECK_COMPLETE. A resource
    an engine is working on is refused (409), as Heat's resource lock refuses it."""
    res = _find(stack, resource_name)
    reason = reason or DEFAULT_REASON
    if mark_unhealthy:
        if res.action == "DELETE":
            return res
        target = "CHECK_FAILED"
    elif res.state == "CHECK_FAILED":
        target = "CHECK_COMPLETE"
    else:
        return res
    if not resource_health_set(res, target, reason):
        raise ActionInProgress(stack_name=stack.name, action=stack.action)
    return res


def resource_health_set(res, target, reason):
    """``res`` becomes ``target`` (CHECK_FAILED or CHECK_COMPLETE) with ``reason`` and an
    event; False when an engine holds it (its convergence lock) or acts on it."""
    with transaction.atomic():
        changed = (Resource.objects.filter(pk=res.pk, engine_id__isnull=True, state=res.state)
                   .exclude(state__in=st.IN_PROGRESS_STATES)
                   .update(state=target, status_reason=reason))
        if changed != 1:
            return False
        res.state, res.status_reason = target, reason
        resource_event(res, reason).save()
    return True
