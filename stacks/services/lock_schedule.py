"""Scheduled maintenance windows: a lock set ahead of time, taken and released by the engine.

A window (``starts_at``, ``ends_at``, level, reason) is stored with a
delayed outbox message for its start (``stacks.lock_window_start``); the
engines' sweep (``lock_window_sweep``) is the backstop and retries windows
that wait. At the start the engine locks the stack through the door, for
the window's owner, with the window's end as the lock's ``expires_at``, so
the lock expires as any lock with a window does (``lock_windows``). A
stack that cannot be locked yet (an action in progress, or locked by
someone else) makes the window wait, with an event that says so, until it
can or the window closes (then it failed, with an event too). A window
can be changed or cancelled while scheduled or waiting; cancelling an
active window unlocks the stack.
"""
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from convergence.outbox import outbox_add
from convergence.services import new_traversal_id
from heatweb.exceptions import BadRequest, EntityNotFound, HeatError, InvalidStackState
from stacks.models import LockWindow, Stack
from stacks.models import states as st
from stacks.models.events import stack_event
from stacks.services.actions import stack_action
from stacks.services.lock_history import lock_record
from stacks.services.lock_windows import heat_time, parse_time
from stacks.services.locking import check_lock_arguments

log = logging.getLogger(__name__)
OPEN_STATES = ("scheduled", "waiting")
MAX_WINDOWS_PER_STACK = 50


def _times(starts_at, ends_at):
    starts, ends = parse_time(starts_at, "starts_at"), parse_time(ends_at, "ends_at")
    if ends <= starts:
        raise BadRequest("A window's ends_at must be after its starts_at.")
    if ends <= timezone.now():
        raise BadRequest("The window is over already: ends_at is not in the future.")
    if (ends - max(starts, timezone.now())).total_seconds() > settings.HEATWEB["MAX_LOCK_SECONDS"]:
        raise BadRequest(f"A window lasts at most {settings.HEATWEB['MAX_LOCK_SECONDS']:.0f} "
                         f"seconds.")
    return starts, ends


def _check_overlap(stack, starts, ends, *, exclude=None):
    clash = LockWindow.objects.filter(stack=stack, state__in=(*OPEN_STATES, "active"),
                                      starts_at__lt=ends, ends_at__gt=starts)
    if exclude is not None:
        clash = clash.exclude(pk=exclude.pk)
    other = clash.first()
    if other is not None:
        raise BadRequest(f"The window overlaps window {other.pk} "
                         f"({heat_time(other.starts_at)} to {heat_time(other.ends_at)}).")


def _schedule_start(window):
    delay = max((window.starts_at - timezone.now()).total_seconds(), 0.001)
    outbox_add([("stacks.lock_window_start", [window.pk])], stack_id=str(window.stack_id),
               traversal_id=new_traversal_id(), delay_seconds=delay)


def window_create(stack, *, user, starts_at=None, ends_at=None, level=None, reason=""):
    """Schedule a window on ``stack``; BadRequest for bad times, overlaps, too many."""
    check_lock_arguments(level=level, reason=reason)
    starts, ends = _times(starts_at, ends_at)
    if stack.deleted_at is not None or stack.state == "DELETE_IN_PROGRESS":
        raise InvalidStackState(f"Stack {stack.name} is being deleted.")
    with transaction.atomic():
        Stack.objects.select_for_update().filter(pk=stack.pk).first()
        if LockWindow.objects.filter(stack=stack, state__in=OPEN_STATES).count() >= \
                MAX_WINDOWS_PER_STACK:
            raise BadRequest(f"A stack has at most {MAX_WINDOWS_PER_STACK} windows ahead.")
        _check_overlap(stack, starts, ends)
        window = LockWindow.objects.create(
            stack=stack, starts_at=starts, ends_at=ends, level=level or "all",
            reason=reason or "", user=user, username=user.username if user else "")
        _schedule_start(window)
    return window


def window_get(stack, window_id):
    window = LockWindow.objects.filter(stack=stack, pk=window_id).first() \
        if str(window_id).isdigit() else None
    if window is None:
        raise EntityNotFound(entity="Lock window", name=str(window_id)[:40])
    return window


def window_update(window, *, user, **fields):
    """Change a scheduled or waiting window's times, level or reason."""
    unknown = set(fields) - {"starts_at", "ends_at", "level", "reason"}
    if unknown:
        raise BadRequest(f"Unknown window field {sorted(unknown)[0]}.")
    if window.state not in OPEN_STATES:
        raise InvalidStackState(f"Window {window.pk} is {window.state}: only a scheduled or "
                                f"waiting window can be changed.")
    level = fields.get("level", window.level)
    reason = fields.get("reason", window.reason)
    check_lock_arguments(level=level, reason=reason)
    starts, ends = _times(fields.get("starts_at", heat_time(window.starts_at)),
                          fields.get("ends_at", heat_time(window.ends_at)))
    with transaction.atomic():
        _check_overlap(window.stack, starts, ends, exclude=window)
        changed = LockWindow.objects.filter(pk=window.pk, state__in=OPEN_STATES).update(
            starts_at=starts, ends_at=ends, level=level, reason=reason or "",
            updated_at=timezone.now())
        if not changed:
            raise InvalidStackState(f"Window {window.pk} has just started.")
        window.refresh_from_db()
        _schedule_start(window)
    return window


def window_cancel(window, *, user):
    """Cancel a window ahead; an active one ends now (the stack is unlocked through the door)."""
    if window.state in OPEN_STATES:
        if LockWindow.objects.filter(pk=window.pk, state__in=OPEN_STATES).update(
                state="cancelled", note=f"cancelled by {user.username if user else 'the engine'}"):
            window.refresh_from_db()
            return window
        window.refresh_from_db()
    if window.state != "active":
        raise InvalidStackState(f"Window {window.pk} is {window.state} already.")
    stack_action(window.stack, "unlock", user=user)
    LockWindow.objects.filter(pk=window.pk).update(
        state="cancelled", note=f"ended early by {user.username if user else 'the engine'}")
    window.refresh_from_db()
    return window


def window_start(window_id):
    """Lock the stack of a due window (or make it wait, or fail it); safe to run twice."""
    now = timezone.now()
    window = LockWindow.objects.select_related("stack", "stack__locked_by", "user").filter(
        pk=window_id, state__in=OPEN_STATES, starts_at__lte=now).first()
    if window is None:
        return False
    stack = window.stack
    if window.ends_at <= now or stack.deleted_at is not None:
        why = "the stack was deleted" if stack.deleted_at else \
            f"it closed before the stack could be locked ({window.note or 'never free'})"
        return _close(window, "failed", f"Lock window {window.pk} failed: {why}")
    blocker = _blocker(stack, window)
    if blocker:
        return _wait(window, blocker)
    try:
        # One transaction: "active" is seen only with the lock it started.
        with transaction.atomic():
            if not LockWindow.objects.filter(pk=window.pk, state=window.state).update(
                    state="active", note=""):
                return False  # another engine took it
            stack_action(stack, "lock", user=window.user, level=window.level,
                         reason=window.reason, expires_at=window.ends_at.isoformat())
    except HeatError as error:
        log.info("window %s of stack %s: %s", window.pk, stack.pk, error.message)
        return _wait(window, error.message[:500])
    return True


def _blocker(stack, window):
    """Why ``stack`` cannot take the window's lock now, or None."""
    if stack.status == st.IN_PROGRESS:
        return f"waits for the {stack.action} in progress to end"
    holder = st.lock_holder(stack)
    if holder is not None:
        who = holder.locked_by.username if holder.locked_by_id else "unknown"
        return f"waits: stack {holder.name} is locked by {who}"
    return None


def _wait(window, blocker):
    if window.state == "waiting" and window.note == blocker:
        return False
    if LockWindow.objects.filter(pk=window.pk, state=window.state, note=window.note).update(
            state="waiting", note=blocker):
        stack_event(window.stack, f"Lock window {window.pk} {blocker}").save()
    return False


def _close(window, state, text):
    if LockWindow.objects.filter(pk=window.pk, state=window.state).update(state=state,
                                                                         note=text[:500]):
        stack_event(window.stack, text).save()
        lock_record(window.stack, "refusal" if state == "failed" else "expiry",
                    user=None, level=window.level, reason=window.reason,
                    expires_at=window.ends_at, detail=text)
    return False


def _finish_active():
    """Active windows whose lock is gone (expired, unlocked, relocked): done."""
    for window in LockWindow.objects.select_related("stack").filter(state="active"):
        stack = window.stack
        ours = stack.is_locked and stack.lock_expires_at == window.ends_at
        if not ours and stack.state != "LOCK_IN_PROGRESS":
            LockWindow.objects.filter(pk=window.pk, state="active").update(
                state="done", note=f"closed: stack {stack.state}")


def lock_window_sweep():
    """Start due windows (and retry waiting ones); close those whose lock is gone."""
    due = LockWindow.objects.filter(state__in=OPEN_STATES, starts_at__lte=timezone.now())
    for window_id in list(due.values_list("pk", flat=True)[:200]):
        window_start(window_id)
    _finish_active()


def window_list(stack):
    return list(LockWindow.objects.filter(stack=stack).order_by("starts_at", "id")[:200])

