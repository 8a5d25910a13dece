"""The actions the door (``stacks.services.actions``) starts, registered at start-up.

``register_actions`` is called once from ``StacksConfig.ready``: it fills the
door's table with the stack services that do each action, so the door itself
imports none of them, and they may start follow-up actions through the door.
The few lines of each handler here adapt the door's call
(``handler(stack, *, user, **args)``) to the service's own arguments.
"""
from django.conf import settings

from convergence.breakpoints import paused_resource
from heatweb.exceptions import EntityNotFound, RequestLimitExceeded
from heatweb.tokens import is_cloud_admin
from stacks.models import states as st
from stacks.models.events import resource_event
from stacks.selectors import stack_resource
from stacks.services import consent, drift, lifecycle, lock_healing, locking, \
    resource_health, signals, snapshots
from stacks.services.actions import action_register, refusal_record, refuse_if_locked


def _signal(stack, *, user, resource_name, details=None, refuse_when_locked=False):
    """A signal to a locked stack is not acted on, and an event says why. A signed webhook
    (an alarm, a wait condition's curl) is answered as Heat answers a scaling policy in
    cooldown: received, nothing done. ``refuse_when_locked`` (the token-authenticated
    signal API: the operator's CLI) raises the lock's refusal instead (docs/locking.md)."""
    res = _signalled_resource(stack, resource_name, details)
    refusal = st.lock_refusal(stack, "SIGNAL")
    if refusal is None:
        return signals.resource_signal(stack, res, details)
    if signals.unset_hook_of(details) is None:
        signals.check_signal_supported(stack, res)
    resource_event(res, f"signal ignored: stack is locked ({refusal.message})",
                   action="SIGNAL", status="COMPLETE").save()
    if refuse_when_locked:
        raise refusal  # stack_action records the refusal in the lock history
    refusal_record(stack, "signal", user, refusal, what=f"signal to {resource_name} ignored")
    return None


def _signalled_resource(stack, resource_name, details):
    """The resource a signal names; a hook clear also finds one already deleted that is
    paused on its ``post-delete`` hook."""
    try:
        return stack_resource(stack, resource_name)
    except EntityNotFound:
        paused = paused_resource(stack, resource_name) \
            if signals.unset_hook_of(details) is not None else None
        if paused is None:
            raise
        return paused


def _mark_unhealthy(stack, *, user, **args):
    refuse_if_locked(stack)
    return resource_health.resource_mark_unhealthy(stack, **args)


def _snapshot(stack, *, user, name=None):
    limit = settings.HEATWEB["MAX_SNAPSHOTS_PER_STACK"]
    if limit >= 0 and not (user is not None and is_cloud_admin(user)) and \
            stack.snapshots.count() >= limit:
        raise RequestLimitExceeded(message=f"You have reached the maximum snapshots per "
                                           f"stack, {limit}. Please delete some snapshots.")
    return snapshots.stack_snapshot(stack, name=name)


def _snapshot_delete(stack, *, user, snapshot):
    refuse_if_locked(stack)
    return snapshots.snapshot_delete(stack, snapshot=snapshot)


def _walk(service):
    def run(stack, *, user):
        return service(stack)
    return run


def register_actions():
    """Fill the door's table (safe to call twice: each call sets the same entries)."""
    action_register("update", lambda stack, *, user, **args:
                    lifecycle.stack_update(stack, user=user, **args), transition="update")
    # A signal resizing a scaling group's members: an update a ``signal`` lock lets through.
    action_register("scale", lambda stack, *, user, **args:
                    lifecycle.stack_update(stack, scaling=True, **args), transition="scale")
    action_register("delete", lambda stack, *, user: lifecycle.stack_delete(stack),
                    transition="delete")
    action_register("suspend", _walk(lifecycle.stack_suspend), transition="suspend")
    action_register("resume", _walk(lifecycle.stack_resume), transition="resume")
    action_register("check", _walk(lifecycle.stack_check), transition="check")
    action_register("cancel_update", _walk(lifecycle.stack_cancel_update),
                    transition="rollback")
    action_register("cancel_without_rollback", _walk(lifecycle.stack_cancel_without_rollback),
                    transition="rollback")
    # The parent's cascade, a lock taken again, one that interrupts: the lock chooses.
    action_register("lock", lambda stack, *, user, **args:
                    locking.stack_lock(stack, user=user, **args),
                    transition=locking.lock_transition,
                    argument_check=locking.check_lock_arguments)
    action_register("unlock", lambda stack, *, user, **args:
                    locking.stack_unlock(stack, user=user, **args), transition="unlock")
    action_register("signal", _signal)
    # Not a transition: the stack stays LOCK_COMPLETE while its physical locks are checked.
    action_register("verify_lock", lambda stack, *, user:
                    lock_healing.stack_lock_verify(stack, user=user))
    action_register("snapshot", _snapshot, transition="snapshot")
    action_register("restore", lambda stack, *, user, snapshot:
                    snapshots.stack_restore(stack, snapshot=snapshot), transition="restore")
    action_register("snapshot_delete", _snapshot_delete)
    action_register("abandon", lambda stack, *, user: snapshots.stack_abandon(stack),
                    transition="abandon", argument_check=snapshots.check_abandon_enabled)
    # Not a transition: reads the cloud, records a drift report (also on a locked stack).
    action_register("detect_drift", lambda stack, *, user:
                    drift.stack_drift_detect(stack, user=user))
    # Not a transition: one resource's state, refused while a lock holds over the stack.
    action_register("mark_unhealthy", _mark_unhealthy)
    # Not a transition: an imported stack's owner consents to heatweb acting for it.
    action_register("reauthorise", lambda stack, *, user:
                    consent.stack_reauthorise(stack, user=user))
