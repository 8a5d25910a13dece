"""Resource signals: from the API, from signed webhook URLs, from agents.

Every signal goes through the door (``stacks.services.actions.stack_action``
with ``"signal"``): a signal to a stack a lock holds over is ignored
without an error, because alarm services retry on errors; an event records
it. Otherwise ``resource_signal`` clears a hook (``{"unset_hook": ...}``) or has
the resource's plugin handle it
(``handle_signal``), saves what it keeps on the resource row and wakes the
waiting resources the plugin names (``signal_wakes``: a wait condition).
"""
from django.db import transaction

from convergence.breakpoints import hook_clear
from convergence.waiting import wait_poke
from heatweb.exceptions import BadRequest, EntityNotFound
from stacks.models import Resource
from stacks.models import states as st
from stacks.models.events import resource_event
from stacks.plugins import plugin_for, stack_context
from stacks.resources.signal_urls import signature_valid


def check_signal_supported(stack, res, plugin=None):
    """BadRequest when the resource's plugin takes no signals; returns the plugin."""
    plugin = plugin or plugin_for(stack_context(stack), res)
    if not hasattr(plugin, "handle_signal"):
        raise BadRequest(f"Signal resource during {res.action} is not supported "
                         f"for resource {res.name} of type {res.type}.")
    return plugin


def unset_hook_of(details):
    """The hook a signal ``{"unset_hook": hook}`` clears, or None for any other signal."""
    if isinstance(details, dict) and "unset_hook" in details:
        return details["unset_hook"]
    return None


def resource_signal(stack, res, details):
    """Deliver a signal to a stack no lock holds (the door, ``stack_action``, asked);
    returns what the plugin answered (None when ignored).

    ``{"unset_hook": hook}`` clears a hook (breakpoint) the resource is paused
    on, whatever its type, also during a delete (``convergence.breakpoints``).
    """
    if unset_hook_of(details) is not None:
        hook_clear(stack, res, details["unset_hook"])
        return None
    plugin = check_signal_supported(stack, res)
    if stack.action == "DELETE" and stack.status == st.IN_PROGRESS and \
            not getattr(plugin, "signal_while_deleting", False):
        return None  # e.g. an alarm for a group that is going away
    before = dict(plugin.data)
    answer = plugin.handle_signal(details if details is not None else {})
    if plugin.data != before:
        Resource.objects.filter(pk=res.pk).update(plugin_data=plugin.data)
    woken = plugin.signal_wakes()
    if woken:
        transaction.on_commit(lambda: wait_poke(woken))
    reason = answer if isinstance(answer, str) else "Signal: received"
    resource_event(res, reason, action="SIGNAL", status="COMPLETE").save()
    return answer


# Signed webhook URLs (alarm_url, see stacks.resources.signal_urls) -----------------------

def webhook_resource(resource_uuid, signature):
    """The resource a signed URL names (404 for a forged signature or a deleted resource)."""
    if not signature_valid(resource_uuid, signature):
        raise EntityNotFound(entity="Signal URL", name=str(resource_uuid))
    res = Resource.objects.filter(uuid=resource_uuid).select_related("stack__raw_template").first()
    if res is None or res.state == "DELETE_COMPLETE" or res.stack.deleted_at is not None:
        raise EntityNotFound(entity="Signal URL", name=str(resource_uuid))
    return res
