"""Stack lock and unlock: maintenance mode for a stack, its nested stacks and
(at level ``all``) its physical resources.

Both are walks of the stack's graph on the convergence engine; the states
they may start from are the state table's (``stacks.models.states``).
"""
from django.db import transaction
from django.utils import timezone

from convergence.graph import walk_graph
from convergence.services import new_traversal_id, stack_save_cas, traversal_begin
from heatweb.exceptions import BadRequest, Forbidden
from heatweb.tokens import is_cloud_admin
from stacks.models import Resource
from stacks.models import states as st
from stacks.services import lock_modes
from stacks.services.traversals import stack_begin
from stacks.services.lock_windows import expiry_note, held_for, lock_expiry_schedule, \
    lock_record, lock_window_end

LEVELS = ("all", "stacks")


def lock_change_refusal(stack, user):
    """Forbidden when only a cloud admin may unlock or relock ``stack`` (as Nova's lock), else None."""
    if stack.locked_by_admin and stack.is_locked and not (user and is_cloud_admin(user)):
        return Forbidden(f"Stack {stack.name} was locked by a cloud admin; only a cloud "
                         f"admin can unlock it or change its lock.")
    return None


def _require_may_change(stack, user):
    refusal = lock_change_refusal(stack, user)
    if refusal is not None:
        raise refusal


def _walk_start(stack, action, *, reason, transition=None, **fields):
    old_state, old_traversal = stack.state, stack.current_traversal
    stack_begin(stack, action, transition=transition)
    existing = list(Resource.objects.filter(stack=stack, replaced_by__isnull=True)
                    .exclude(state__in=("DELETE_COMPLETE", st.INIT_COMPLETE)))
    ids = {r.pk for r in existing}
    graph = walk_graph({r.pk: [x for x in r.requires if x in ids] for r in existing},
                       reverse=False)
    traversal_id = new_traversal_id()
    stack_save_cas(stack, expected_state=old_state, expected_traversal=old_traversal,
                   current_traversal=traversal_id, action_started_at=timezone.now(), **fields)
    traversal_begin(stack, traversal_id=traversal_id, graph=graph, reason=reason)


def check_lock_arguments(*, level=None, reason="", expires_at=None, duration=None, allow=None,
                         interrupt=None, **_):
    """BadRequest for a lock level, reason, window, mode or interrupt a lock cannot take."""
    if level is not None and level not in LEVELS:
        raise BadRequest(f'Invalid lock level "{level}": must be "all" or "stacks".')
    if reason is not None and not isinstance(reason, str):
        raise BadRequest("The lock reason must be a string.")
    lock_modes.check_allow(allow)
    lock_modes.check_interrupt(interrupt)
    lock_window_end(expires_at=expires_at, duration=duration)


def lock_transition(stack, *, cascade_from=None, resume=False, interrupt=None, **_):
    """The transition a lock starts: the parent's cascade, a lock taken again after an
    action under it, one interrupting the action in progress, or a plain lock."""
    if cascade_from is not None:
        return "lock_from_parent"
    if resume:
        return "lock_resume"
    if interrupt is not None and stack.status == st.IN_PROGRESS:
        return lock_modes.INTERRUPT_TRANSITIONS[interrupt]
    return "lock"


def stack_lock(stack, *, level=None, reason="", user=None, cascade_from=None, expires_at=None,
               duration=None, allow=None, interrupt=None, resume=False):
    """Lock the stack (and nested stacks); at level ``all`` lock/protect resources too.

    ``cascade_from``: the parent stack taking its lock; the child copies its
    level, reason, mode, locker and whether a cloud admin locked it (not its
    window: the parent's unlock releases it). ``expires_at`` (ISO 8601) or
    ``duration`` (``"2h"``): the engine unlocks the stack when the window
    closes (``stacks.services.lock_windows``); without either, a relock
    ends any window the lock had. ``allow``: what stays permitted while the
    lock holds (``states.LOCK_MODES``). ``interrupt`` (``cancel`` or
    ``rollback``) on a stack in progress: supersede its action and take the
    lock when it settles (``lock_modes.stack_lock_interrupt``). ``resume``:
    the engine takes the lock again once the action under it settled.
    """
    if resume:
        return lock_modes.stack_lock_resume(stack, walk_start=_walk_start)
    if cascade_from is not None:
        level, reason, user = cascade_from.lock_level, cascade_from.lock_reason, \
            cascade_from.locked_by
        allow = cascade_from.lock_allow
        by_admin = cascade_from.locked_by_admin
    else:
        _require_may_change(stack, user)
        by_admin = bool(user and is_cloud_admin(user))
    check_lock_arguments(level=level, reason=reason, expires_at=expires_at, duration=duration,
                         allow=allow, interrupt=interrupt)
    ends = lock_window_end(expires_at=expires_at, duration=duration) \
        if cascade_from is None else None
    level = level or "all"
    allow = lock_modes.normal_allow(allow)
    lock_fields = dict(lock_level=level, lock_reason=reason or "", lock_allow=allow,
                       locked_by_id=user.pk if user else None, locked_by_admin=by_admin,
                       locked_at=timezone.now(), lock_expires_at=ends)
    if interrupt is not None and stack.status == st.IN_PROGRESS:
        return lock_modes.stack_lock_interrupt(stack, how=interrupt, user=user,
                                               lock_fields=lock_fields)
    kind = "relock" if stack.is_locked else "lock"
    relocking = stack.state in st.LOCKED_STATES or stack.state == "UNLOCK_COMPLETE"
    pre_lock_state = stack.pre_lock_state if relocking else stack.state
    who = user.username if user else "the engine"
    who = f"{who} (through its parent stack)" if cascade_from is not None else who
    note = f": {reason}" if reason else ""
    with transaction.atomic():
        _walk_start(stack, "LOCK",
                    reason=f"Stack LOCK started (level {level}{lock_modes.allow_note(allow)}) "
                           f"by {who}{note}",
                    transition="lock_from_parent" if cascade_from is not None else None,
                    pre_lock_state=pre_lock_state, lock_pending=None, **lock_fields)
        if ends is not None:
            lock_expiry_schedule(stack, ends)
        if cascade_from is None:
            lock_record(stack, kind, user=user, level=level, reason=reason, expires_at=ends,
                        allow=allow)
    return stack


def stack_unlock(stack, *, user=None, cascade=False, expired=False):
    """Release the lock, restoring each resource's protection as it was before.

    ``expired``: the engine unlocks because the lock's window closed (a lock
    set by a cloud admin too: the admin set its end).
    """
    if not cascade and not expired:
        _require_may_change(stack, user)
    who = user.username if user else ("its parent stack" if cascade else "the engine")
    reason = f"Stack UNLOCK started by {who}"
    note = expiry_note(stack) if expired else ""
    if expired:
        reason += f": {note}"
    level, lock_reason, held = stack.lock_level, stack.lock_reason, held_for(stack)
    ends = stack.lock_expires_at
    with transaction.atomic():
        _walk_start(stack, "UNLOCK", reason=reason)
        if not cascade:
            lock_record(stack, "expiry" if expired else "unlock", user=user, level=level,
                        reason=lock_reason, expires_at=ends, held_seconds=held, detail=note)
    return stack
