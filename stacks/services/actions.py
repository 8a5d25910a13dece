"""One door for every change to an existing stack.

The API, the pages, heatweb's ``heat`` command (through the API), Django
admin's actions, signals and webhooks, software deployment writes and
nested stacks all call ``stack_action``. A stack action starts one
django-fsm transition of the state table (``stacks.models.states``), whose
refusal is the error every way in answers; writes that are not a stack
transition (a signal, a deployment's PUT or DELETE) ask the same question,
``states.lock_holder``, and get the same refusal.
"""
from django.conf import settings
from django_fsm import can_proceed

from convergence.breakpoints import paused_resource
from heatweb.exceptions import EntityNotFound, Forbidden, InvalidActionRequest, \
    RequestLimitExceeded, StackLocked
from heatweb.tokens import is_cloud_admin
from softwareconfig import services as deployments
from stacks.models import Resource
from stacks.models import states as st
from stacks.services import drift, lifecycle, lock_healing, locking, resource_health, \
    signals, snapshots
from stacks.ownership import change_refusal
from stacks.services.lock_windows import lock_record
from stacks.models.events import resource_event
from stacks.selectors import stack_resource


def _refuse_if_locked(stack):
    refusal = st.lock_refusal(stack)
    if refusal is not None:
        raise refusal


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
    _record_refusal(stack, "signal", user, refusal, what=f"signal to {resource_name} ignored")
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


def _record_refusal(stack, action, user, refusal, *, what=None):
    """The lock history keeps every action a lock refused: who asked, what, and the answer."""
    holder = st.lock_holder(stack) or stack
    lock_record(stack, "refusal", user=user, level=holder.lock_level,
                reason=holder.lock_reason, allow=holder.lock_allow,
                detail=f"{what or action + ' refused'}: {refusal.message}")


def _deployment_update(stack, *, user, deployment, **fields):
    _refuse_if_locked(stack)
    return deployments.deployment_update(deployment, **fields)


def _deployment_delete(stack, *, user, deployment):
    _refuse_if_locked(stack)
    return deployments.deployment_delete(deployment)


def _mark_unhealthy(stack, *, user, **args):
    _refuse_if_locked(stack)
    return resource_health.resource_mark_unhealthy(stack, **args)


def _snapshot(stack, *, user, name=None):
    limit = settings.HEATWEB["MAX_SNAPSHOTS_PER_STACK"]
    if limit >= 0 and not (user is not None and is_cloud_admin(user)) and \
            stack.snapshots.count() >= limit:
        raise RequestLimitExceeded(message=f"You have reached the maximum snapshots per "
                                           f"stack, {limit}. Please delete some snapshots.")
    return snapshots.stack_snapshot(stack, name=name)


def _snapshot_delete(stack, *, user, snapshot):
    _refuse_if_locked(stack)
    return snapshots.snapshot_delete(stack, snapshot=snapshot)


def _walk(service):
    def run(stack, *, user):
        return service(stack)
    return run


ACTIONS = {
    "update": lambda stack, *, user, **args: lifecycle.stack_update(stack, user=user, **args),
    # A signal resizing a scaling group's members: an update a ``signal`` lock lets through.
    "scale": lambda stack, *, user, **args: lifecycle.stack_update(stack, scaling=True, **args),
    "delete": lambda stack, *, user: lifecycle.stack_delete(stack),
    "suspend": _walk(lifecycle.stack_suspend),
    "resume": _walk(lifecycle.stack_resume),
    "check": _walk(lifecycle.stack_check),
    "cancel_update": _walk(lifecycle.stack_cancel_update),
    "cancel_without_rollback": _walk(lifecycle.stack_cancel_without_rollback),
    "lock": lambda stack, *, user, **args: locking.stack_lock(stack, user=user, **args),
    "unlock": lambda stack, *, user, **args: locking.stack_unlock(stack, user=user, **args),
    "signal": _signal,
    # Not a transition: the stack stays LOCK_COMPLETE while its physical locks are checked.
    "verify_lock": lambda stack, *, user: lock_healing.stack_lock_verify(stack, user=user),
    "snapshot": _snapshot,
    "restore": lambda stack, *, user, snapshot: snapshots.stack_restore(stack, snapshot=snapshot),
    "snapshot_delete": _snapshot_delete,
    "abandon": lambda stack, *, user: snapshots.stack_abandon(stack),
    # Not a transition: reads the cloud, records a drift report (also on a locked stack).
    "detect_drift": lambda stack, *, user: drift.stack_drift_detect(stack, user=user),
    "deployment_update": _deployment_update,
    # Not a transition: one resource's state, refused while a lock holds over the stack.
    "mark_unhealthy": _mark_unhealthy,
    "deployment_delete": _deployment_delete,
}


# Bad arguments are refused before the state is asked (a 400 before a 409).
ARGUMENT_CHECKS = {"lock": locking.check_lock_arguments,
                   "abandon": snapshots.check_abandon_enabled}
# The transition each action starts (cancel_update starts a rollback).
TRANSITIONS = {"update": "update", "scale": "scale", "delete": "delete", "suspend": "suspend",
               "resume": "resume", "check": "check", "cancel_update": "rollback",
               "cancel_without_rollback": "rollback", "lock": "lock", "unlock": "unlock",
               "snapshot": "snapshot", "restore": "restore", "abandon": "abandon"}


def stack_action(stack, action, /, *, user=None, **args):
    """Do ``action`` (a key of ``ACTIONS``) to ``stack`` for ``user``, or raise the refusal.

    ``args`` are the action's own (an update's template, a lock's level and
    reason, a signal's resource name and details). ``user`` is None for the
    engine (nested stacks) and for signed webhooks.
    """
    handler = ACTIONS.get(action)
    if handler is None:
        raise InvalidActionRequest(f"Invalid action {action} specified")
    if action in ARGUMENT_CHECKS:
        ARGUMENT_CHECKS[action](**args)
    transition = TRANSITIONS.get(action)
    if action == "lock":  # the parent's cascade, a lock taken again, one that interrupts
        transition = locking.lock_transition(stack, **args)
    try:
        if transition and not can_proceed(getattr(stack, f"begin_{transition}")):
            # Refused before any validation or work: the state table's answer.
            raise st.refusal_for(stack, action.upper())
        return handler(stack, user=user, **args)
    except StackLocked as refusal:
        _record_refusal(stack, action, user, refusal)
        raise
    except Forbidden as refusal:
        if action in ("lock", "unlock") and stack.is_locked:
            _record_refusal(stack, action, user, refusal)
        raise


def deployment_stack(deployment):
    """The stack whose ``OS::Heat::SoftwareDeployment`` resource made ``deployment``, or None."""
    row = (Resource.objects.filter(type="OS::Heat::SoftwareDeployment",
                                   physical_resource_id=str(deployment.pk))
           .exclude(state="DELETE_COMPLETE").select_related("stack").first())
    return row.stack if row is not None and row.stack.deleted_at is None else None


def deployment_action(deployment, action, /, *, user=None, **fields):
    """PUT (``update``) or DELETE (``delete``) a deployment: through its stack's door if a
    stack owns it, directly if it was made through the API."""
    stack = deployment_stack(deployment)
    if stack is not None:
        return stack_action(stack, f"deployment_{action}", user=user, deployment=deployment,
                            **fields)
    if action == "delete" or fields.get("config_id") or fields.get("input_values") is not None:
        # What the server's agent runs changes: not on a server a locked stack holds (a
        # status or outputs report from the agent is not a change of the server).
        refused = change_refusal([("server", deployment.server_id)],
                                 project_id=deployment.project_id, user=user)
        if refused is not None:
            raise refused
    if action == "update":
        return deployments.deployment_update(deployment, **fields)
    return deployments.deployment_delete(deployment)
