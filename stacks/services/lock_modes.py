"""Lock modes and locks that interrupt: what a lock lets through, and a lock that does
not wait for the action in progress.

A lock's mode (``{"lock": {"allow": ["signal", "suspend_resume", "check"]}}``,
``Stack.lock_allow``) names what stays permitted while it holds; the state
table asks it (``states.lock_permits``), so every refusal is still the one
door's. An action a mode allows starts from ``LOCK_COMPLETE`` and keeps the
lock (``Stack.lock_pending``: the lock holds while it is set); when the
action's traversal settles, the engine takes the lock again
(``stack_lock_resume``), which puts back the physical locks and the state
``LOCK_COMPLETE``.

A lock with ``interrupt`` (``cancel`` or ``rollback``) on a stack in progress
supersedes the running traversal as a convergence update does: ``cancel``
fails the action where it is (Heat's ``cancel_without_rollback``; waiting
resources are aborted), ``rollback`` converges back to the previous
template (Heat's ``cancel_update``). The lock is recorded at once and holds
from the request on; it is taken when the stack has settled: its traversal
ended and none of its resources is still in progress (the superseded ones
are aborted by the next poll round).

Taking the lock again is an outbox message written in the transaction that
settled the stack (``lock_settled``, called by the engine), so a killed
worker loses nothing; every engine's sweep is the backstop
(``lock_resume_sweep``).
"""
import logging

from django.db import transaction
from django.db.models import Q

from convergence.outbox import outbox_add
from convergence.services import new_traversal_id, stack_save_cas, traversal_fail
from heatweb.exceptions import BadRequest, ConcurrentTransaction, HeatError
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.services.actions import stack_action
from stacks.services.lifecycle import stack_rollback
from stacks.services.lock_history import lock_record
from stacks.services.lock_windows import lock_expiry_schedule
from stacks.services.traversals import stop_waiting_if_superseded

log = logging.getLogger(__name__)

INTERRUPTS = ("cancel", "rollback")
# The transition of the action in progress a lock with ``interrupt`` starts.
INTERRUPT_TRANSITIONS = {"cancel": "interrupt", "rollback": "rollback"}
# After these, the lock taken again says the stack is what the action made it
# (suspended or resumed); after any other (a check, a scaling, a failure) it is
# what it was when first locked.
STATE_SETTING = ("SUSPEND_COMPLETE", "RESUME_COMPLETE")
# How soon a lock waiting for resources still finishing looks again.
SETTLE_RECHECK_SECONDS = 1.0


def check_allow(allow):
    """BadRequest unless ``allow`` is None or a list of lock modes."""
    if allow is None:
        return
    if not isinstance(allow, list) or not all(isinstance(m, str) for m in allow):
        raise BadRequest('The lock\'s "allow" is a list of modes, e.g. ["signal", '
                         '"suspend_resume", "check"].')
    unknown = [m for m in allow if m not in st.LOCK_MODES]
    if unknown:
        raise BadRequest(f'Invalid lock mode "{unknown[0][:40]}": allow takes '
                         f'{", ".join(st.LOCK_MODES)}.')


def check_interrupt(interrupt):
    if interrupt is not None and interrupt not in INTERRUPTS:
        raise BadRequest(f'Invalid lock interrupt "{str(interrupt)[:40]}": must be "cancel" '
                         f'or "rollback".')


def normal_allow(allow):
    """The modes in their table order, each once."""
    return [m for m in st.LOCK_MODES if m in (allow or [])]


def allow_note(allow):
    return f", allowing {', '.join(allow)}" if allow else ""


def stack_lock_interrupt(stack, *, how, user, lock_fields):
    """Supersede ``stack``'s action in progress (``how``: cancel or rollback) and record
    the lock, which holds at once and is taken when the stack settles."""
    action = stack.action
    who = user.username if user else "the engine"
    with transaction.atomic():
        if how == "cancel":
            traversal_fail(stack.pk, stack.current_traversal,
                           f"Stack {action} cancelled: interrupted by a lock ({who})",
                           allow_rollback=False)
            stack.refresh_from_db()
            if stack.status == st.IN_PROGRESS:  # moved on meanwhile: the door's answer
                raise st.refusal_for(stack, "LOCK")
        else:
            stack_rollback(stack)
            stop_waiting_if_superseded(stack, f"{action}_IN_PROGRESS")
        pending = {"pre_lock_state": None, "interrupted": f"{action} ({how})"}
        stack_save_cas(stack, expected_state=stack.state,
                       expected_traversal=stack.current_traversal,
                       lock_pending=pending, **lock_fields)
        detail = (f"interrupted the {action} in progress ({how}); the lock is taken when "
                  f"the stack settles")
        lock_record(stack, "interrupt", user=user, level=stack.lock_level,
                    reason=stack.lock_reason, expires_at=stack.lock_expires_at, detail=detail)
        if stack.lock_expires_at is not None:
            lock_expiry_schedule(stack, stack.lock_expires_at)
        lock_settled(stack)
    return stack


def stack_lock_resume(stack, *, walk_start):
    """Take the lock again (its level, mode, reason, locker and window are the stack's)
    now that the action under it, or the one it interrupted, settled."""
    pending = stack.lock_pending or {}
    settled = stack.state
    pre_lock_state = pending.get("pre_lock_state") or settled
    if settled in STATE_SETTING:
        pre_lock_state = settled
    interrupted = pending.get("interrupted")
    if interrupted:
        detail = f"the interrupted {interrupted} settled ({settled}): the lock is taken"
    else:
        detail = f"the action under the lock settled ({settled}): the lock holds again"
    with transaction.atomic():
        walk_start(stack, "LOCK", transition="lock_resume",
                   reason=f"Stack LOCK started (level {stack.lock_level}"
                          f"{allow_note(stack.lock_allow)}) by the engine: {detail}",
                   pre_lock_state=pre_lock_state, lock_pending=None)
        lock_record(stack, "lock" if interrupted else "resume", level=stack.lock_level,
                    reason=stack.lock_reason, expires_at=stack.lock_expires_at, detail=detail)
    return stack


def _resources_busy(stack):
    """A resource of ``stack`` is still in progress or held by an engine."""
    return Resource.objects.filter(stack=stack).filter(
        Q(state__endswith="_IN_PROGRESS") | Q(engine_id__isnull=False)).exists()


def lock_settled(stack):
    """Engine hook, in the transaction that ended a traversal: when a lock waits for
    ``stack`` to settle, have an engine take it (an outbox message)."""
    if not stack.lock_pending or stack.status == st.IN_PROGRESS:
        return
    outbox_add([("stacks.lock_resume", [str(stack.pk)])], stack_id=str(stack.pk),
               traversal_id=new_traversal_id())


def lock_resume(stack_id, *, look_again=True):
    """Take the lock that waits for ``stack_id`` to settle; True when it started.

    Safe to run twice and from several engines: the door's compare-and-swap
    lets one begin; the others find the stack moved. ``look_again``: when the
    stack is not settled yet, look again in a second (the sweep does not: it
    comes back anyway, and a new chain of looks at each sweep grew to 36 tasks
    a second while 50 resources were being aborted).
    """
    stack = Stack.objects.select_related("locked_by").filter(
        pk=stack_id, deleted_at__isnull=True, lock_pending__isnull=False).first()
    if stack is None or stack.status == st.IN_PROGRESS:
        return False
    if _resources_busy(stack):
        # The stack's traversal ended, but resources it superseded still finish or are
        # being aborted: look again soon (the sweep is the backstop).
        if look_again:
            _look_again(stack)
        return False
    try:
        stack_action(stack, "lock", user=None, resume=True)
    except ConcurrentTransaction as error:
        # Another engine changed the stack meanwhile (an abort's last write): not a
        # refusal, look again (seen: the lock then waited for the sweep, past 2 min).
        log.info("taking the lock of stack %s again: %s; trying again", stack_id, error)
        if look_again:
            _look_again(stack)
        return False
    except HeatError as error:
        log.info("taking the lock of stack %s again: %s", stack_id, error)
        return False
    return True


def _look_again(stack):
    outbox_add([("stacks.lock_resume", [str(stack.pk)])], stack_id=str(stack.pk),
               traversal_id=new_traversal_id(), delay_seconds=SETTLE_RECHECK_SECONDS)


def lock_resume_sweep():
    """Take every lock that waits for a settled stack (the recovery sweep's backstop)."""
    waiting = Stack.objects.filter(deleted_at__isnull=True, lock_pending__isnull=False) \
        .exclude(state__in=st.IN_PROGRESS_STATES).values_list("pk", flat=True)
    for stack_id in list(waiting[:200]):
        lock_resume(stack_id, look_again=False)
