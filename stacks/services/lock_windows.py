"""Locks that expire.

A lock may be taken for a window: ``expires_at`` (ISO 8601) or ``duration``
(``"90s"``, ``"2h"``, ``"1d12h"``, or a number of seconds) in the lock body.
The lock records when its window closes (``Stack.lock_expires_at``) and, in
the same transaction, a delayed outbox message (``stacks.lock_expire``) that
the engines' relay publishes when it is due, so no countdown waits in a
worker that may be killed. The recovery sweep (``lock_expiry_sweep``,
registered with ``convergence.recovery.on_sweep`` at start) is the backstop:
a stack still in progress when its window closed, or whose unlock failed,
is unlocked again later. Either way the engine unlocks through the one door
(``stack_action(stack, "unlock", expired=True)``); each try is recorded in
the stack's lock history and its event says the window closed. After
``LOCK_EXPIRY_ATTEMPTS`` failed tries the engine reports that it gave up.
"""
import logging
import math
import re
from datetime import timedelta
from datetime import timezone as dt_timezone

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from convergence.outbox import outbox_add
from convergence.services import new_traversal_id
from heatweb.exceptions import BadRequest, HeatError
from stacks.models import LockRecord, Stack
from stacks.models.events import stack_event
from stacks.models import states as st
from stacks.services.actions import stack_action
from stacks.services.lock_history import lock_record

log = logging.getLogger(__name__)

UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
EXPIRABLE_STATES = ("LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_FAILED")


def heat_time(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def parse_duration(value):
    """Seconds in ``value`` (``"2h"``, ``"1h30m"``, ``"45s"``, ``90``); BadRequest otherwise."""
    seconds = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and len(value) <= 32:
        text = value.replace(" ", "").lower()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            seconds = float(text)
        elif re.fullmatch(r"(\d+[wdhms])+", text):
            seconds = float(sum(int(n) * UNITS[u] for n, u in re.findall(r"(\d+)([wdhms])", text)))
    limit = settings.HEATWEB["MAX_LOCK_SECONDS"]
    if not math.isfinite(seconds) or not 0 < seconds <= limit:
        raise BadRequest(f"Invalid lock duration {str(value)[:40]!r}: must be like \"90s\", "
                         f"\"30m\", \"2h\" or \"1d12h\", more than 0 and at most "
                         f"{limit:.0f} seconds.")
    return seconds


def parse_time(value, what):
    """An aware datetime from ISO 8601 text (UTC when it has no zone); BadRequest otherwise."""
    when = None
    if isinstance(value, str) and len(value) <= 64:
        try:
            when = parse_datetime(value.strip())
        except ValueError:
            when = None
    if when is None:
        raise BadRequest(f"Invalid {what} {str(value)[:40]!r}: must be an ISO 8601 "
                         f"date and time, e.g. 2026-11-23T22:00:00Z.")
    return when.replace(tzinfo=dt_timezone.utc) if timezone.is_naive(when) else when


def lock_window_end(*, expires_at=None, duration=None, now=None):
    """When a lock's window closes: a datetime, or None for a lock without an end.

    BadRequest for both at once, a value that is not a time or a duration,
    a time in the past, or a window longer than ``MAX_LOCK_SECONDS``.
    """
    if expires_at in (None, "") and duration in (None, ""):
        return None
    if expires_at not in (None, "") and duration not in (None, ""):
        raise BadRequest("Give the lock either expires_at or duration, not both.")
    now = now or timezone.now()
    if duration not in (None, ""):
        return now + timedelta(seconds=parse_duration(duration))
    when = parse_time(expires_at, "expires_at")
    if when <= now:
        raise BadRequest(f"expires_at {expires_at} is not in the future.")
    if (when - now).total_seconds() > settings.HEATWEB["MAX_LOCK_SECONDS"]:
        raise BadRequest(f"expires_at {expires_at} is too far ahead: a lock's window lasts at "
                         f"most {settings.HEATWEB['MAX_LOCK_SECONDS']:.0f} seconds.")
    return when


def lock_expiry_schedule(stack, when):
    """In the lock's transaction: have an engine look at ``stack`` when its window closes."""
    delay = max((when - timezone.now()).total_seconds(), 0.001)
    outbox_add([("stacks.lock_expire", [str(stack.pk)])], stack_id=str(stack.pk),
               traversal_id=new_traversal_id(), delay_seconds=delay)


def held_for(stack):
    return (timezone.now() - stack.locked_at).total_seconds() if stack.locked_at else None


def expiry_note(stack):
    """Why the engine unlocks ``stack`` now: the window closed (and what it found)."""
    setter = stack.locked_by.username if stack.locked_by_id else "unknown"
    note = (f"the lock window closed at {heat_time(stack.lock_expires_at)} "
            f"(expiry set by {setter})")
    if stack.state == "LOCK_FAILED":
        note += f"; the lock had failed ({stack.status_reason}): unlocking what it took"
    elif stack.state == "UNLOCK_FAILED":
        tries = _expiry_tries(stack)
        note += f"; retrying the unlock that failed ({stack.status_reason}), attempt {tries + 1}"
    return note


def _expiry_tries(stack):
    return LockRecord.objects.filter(stack=stack, kind="expiry",
                                     at__gte=stack.lock_expires_at).count()


def lock_expire(stack_id):
    """Unlock ``stack_id`` as the engine if its lock's window has closed; True if it started.

    Safe to run twice and from several engines at once: the door's
    compare-and-swap lets one unlock begin; the others find the stack moved.
    """
    stack = Stack.objects.select_related("locked_by").filter(
        pk=stack_id, deleted_at__isnull=True, lock_expires_at__lte=timezone.now(),
        state__in=EXPIRABLE_STATES).first()
    if stack is None or st.ancestor_lock_holder(stack) is not None:
        return False
    tries, limit = _expiry_tries(stack), settings.HEATWEB["LOCK_EXPIRY_ATTEMPTS"]
    if tries >= limit:
        if tries == limit:
            _give_up(stack, limit)
        return False
    try:
        stack_action(stack, "unlock", user=None, expired=True)
    except HeatError as error:
        log.info("lock expiry of stack %s: %s", stack_id, error)
        return False
    return True


def _give_up(stack, limit):
    detail = (f"The lock window closed at {heat_time(stack.lock_expires_at)} but {limit} "
              f"unlocks failed (last: {stack.status_reason}); the engine gave up: unlock "
              f"the stack by hand.")
    lock_record(stack, "expiry", level=stack.lock_level, reason=stack.lock_reason,
                expires_at=stack.lock_expires_at, held_seconds=held_for(stack), detail=detail)
    stack_event(stack, detail).save()
    log.warning("stack %s: %s", stack.pk, detail)


def lock_expiry_sweep():
    """Expire every lock whose window has closed (the recovery sweep's backstop)."""
    due = Stack.objects.filter(deleted_at__isnull=True, lock_expires_at__lte=timezone.now(),
                               state__in=EXPIRABLE_STATES).values_list("pk", flat=True)
    for stack_id in list(due[:200]):
        lock_expire(stack_id)
