"""Recovering from dead engines: breaking their resource locks, failing stalled stacks.

A resource locked by a dead engine is marked ``<ACTION>_FAILED`` "Worker
went down during resource <ACTION>" and its node is processed again in the
current traversal (lock and unlock walks fail the stack instead, so that
unlock can bring it back). A stack in progress that holds no live engine's
lock and has written no event for ``STALL_SECONDS`` is failed with a reason.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Max
from django.utils import timezone

from convergence.engines import dead_engines, engine_alive
from convergence.waiting import rounds_revive
from stacks.models import Event, Resource, Stack
from stacks.models import states as st
from stacks.services.events import resource_event

log = logging.getLogger(__name__)
STATELESS = ("LOCK", "UNLOCK")


def lock_break(res, holder):
    """Clear ``holder``'s lock on ``res`` and mark the action failed; True if it was ours to break."""
    action = (res.action_cookie or {}).get("action") or res.action
    reason = f"Worker went down during resource {action}"
    fields = dict(engine_id=None, atomic_key=F("atomic_key") + 1, action_cookie=None,
                  status_reason=reason)
    if action not in STATELESS and res.status == st.IN_PROGRESS:
        res.mark_failed()
        fields["state"] = res.state
    broken = Resource.objects.filter(pk=res.pk, engine_id=holder).update(**fields)
    if broken:
        res.engine_id, res.status_reason = None, reason
        resource_event(res, reason, action=action, status=st.FAILED).save()
        log.warning("broke the lock of dead engine %s on resource %s", holder, res.pk)
    return bool(broken), action, reason


def recover_resource(res, holder):
    """Break a dead holder's lock, then rerun the node (or fail a lock walk)."""
    from convergence.services import retrigger, traversal_fail

    broken, action, reason = lock_break(res, holder)
    if not broken:
        return
    stack = Stack.objects.filter(pk=res.stack_id).first()
    if stack is None or stack.status != st.IN_PROGRESS:
        return
    if action in STATELESS or stack.action in STATELESS:
        traversal_fail(stack.pk, stack.current_traversal,
                       f"Resource {action} failed: {reason}")
    else:
        retrigger(stack.pk, res.pk)


def sweep():
    """Break every lock held by a dead engine; fail stacks nobody is working on."""
    from convergence.models import Engine

    dead = dead_engines()
    for res in Resource.objects.filter(engine_id__in=dead):
        recover_resource(res, res.engine_id)
    if dead:
        Engine.objects.filter(pk__in=dead).update(stopped_at=timezone.now())
    rounds_revive()
    _fail_stalled()


def _fail_stalled():
    from convergence.services import traversal_fail

    stall = settings.HEATWEB.get("STALL_SECONDS", 300)
    limit = timezone.now() - timedelta(seconds=stall)
    candidates = Stack.objects.filter(state__in=st.IN_PROGRESS_STATES, deleted_at__isnull=True,
                                      action_started_at__lt=limit)
    for stack in candidates:
        last = Event.objects.filter(stack=stack).aggregate(at=Max("created_at"))["at"]
        if last and last >= limit:
            continue
        holders = set(Resource.objects.filter(stack=stack, engine_id__isnull=False)
                      .values_list("engine_id", flat=True))
        if any(engine_alive(h) for h in holders) or _children_busy(stack):
            continue
        traversal_fail(stack.pk, stack.current_traversal,
                       f"Stack {stack.action} stalled: no engine made progress for {stall:.0f} s")


def _children_busy(stack):
    return Stack.objects.filter(parent=stack, deleted_at__isnull=True,
                                state__in=st.IN_PROGRESS_STATES).exists()
