"""What a lock touches: its preview before it is taken, and its physical locks verified after.

``lock_preview`` answers "what would a lock at this level touch?": the
stack and its nested stacks, and at level ``all`` every physical object
with its protection now (locked or protected already, or not) and every
resource that cannot be locked (no physical lock, or its object is gone).
It changes nothing.

``stack_lock_verify`` (through the door: ``stack_action(stack,
"verify_lock")``) asks the cloud, for each physical lock a ``LOCK_COMPLETE``
stack holds, whether it is still in place. One removed behind heatweb's
back (a server unlocked, an image unprotected in the cloud's own tools) is
recorded as an event naming the object and in the lock history, and locked
again when ``HEATWEB["LOCK_HEAL"]`` is ``heal`` (the default; ``report``
only records). The engines verify every locked stack each
``LOCK_VERIFY_SECONDS`` (``lock_verify_sweep``, run by the recovery sweep).
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from heatweb.exceptions import BadRequest, HeatError, InvalidStackState
from stacks.models import LockRecord, Resource, Stack
from stacks.models import states as st
from stacks.models.events import resource_event
from stacks.plugins import plugin_for, stack_context
from stacks.resources.base import ResourceFailure
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG
from stacks.services.actions import stack_action
from stacks.services.drift import drift_while_locked
from stacks.services.lock_history import lock_record

log = logging.getLogger(__name__)
MAX_PREVIEW_STACKS = 200


def _live_resources(stack):
    return list(Resource.objects.filter(stack=stack, replaced_by__isnull=True)
                .exclude(state__in=("DELETE_COMPLETE", st.INIT_COMPLETE)).order_by("name"))


def _stack_tree(stack):
    """``stack`` and its nested stacks (not deleted), parents first."""
    tree, frontier, seen = [stack], [stack], {stack.pk}
    while frontier and len(tree) < MAX_PREVIEW_STACKS:
        children = list(Stack.objects.filter(parent__in=frontier, deleted_at__isnull=True)
                        .order_by("name"))
        frontier = [c for c in children if c.pk not in seen]
        seen.update(c.pk for c in frontier)
        tree.extend(frontier)
    return tree


def _object_state(plugin):
    """(state dict or None, why it cannot be locked or None)."""
    try:
        state = plugin.physical_lock_state()
    except (ResourceFailure, HeatError) as error:
        return None, str(error)
    if state is None:
        return None, "takes no physical lock"
    return state, None


def lock_preview(stack, *, level=None):
    """What a lock at ``level`` (default ``all``) would touch; changes nothing."""
    level = level or "all"
    if level not in ("all", "stacks"):
        raise BadRequest(f'Invalid lock level "{level}": must be "all" or "stacks".')
    stacks, objects, cannot = [], [], []
    for current in _stack_tree(stack):
        stacks.append({"id": str(current.pk), "stack_name": current.name,
                       "stack_status": current.state, "nested": current.pk != stack.pk,
                       "locked": current.is_locked,
                       "lock_level": current.lock_level or None})
        if level != "all":
            continue
        ctx = stack_context(current, with_definition=False)
        for res in _live_resources(current):
            plugin = plugin_for(ctx, res)
            if plugin.nested_stack:
                continue
            where = {"stack_name": current.name, "resource_name": res.name,
                     "resource_type": res.type,
                     "physical_resource_id": res.physical_resource_id or None}
            state, why = _object_state(plugin)
            if state is None:
                cannot.append({**where, "why": why})
                continue
            objects.append({**where, "object": state["object"], "protected_now": state["locked"],
                            "held_by_lock": bool(res.plugin_data.get(PHYSICAL_LOCK_FLAG)),
                            "detail": state["detail"] or None})
    return {"level": level, "stacks": stacks, "objects": objects, "cannot_lock": cannot}


def stack_lock_verify(stack, *, user=None):
    """Check each physical lock ``stack`` and its nested stacks hold; record (and heal) those
    removed, and what drifted (``drift_while_locked``). Returns the findings (one per lock
    not in place)."""
    heal = settings.HEATWEB["LOCK_HEAL"] == "heal"
    findings = []
    with transaction.atomic():
        stack = Stack.objects.select_for_update().get(pk=stack.pk)
        if stack.state != "LOCK_COMPLETE":
            raise InvalidStackState(f"Stack {stack.name} is {stack.state}: only a stack in "
                                    f"LOCK_COMPLETE has physical locks to verify.")
        for current in _stack_tree(stack):
            if current.state != "LOCK_COMPLETE":
                continue
            Stack.objects.filter(pk=current.pk).update(lock_verified_at=timezone.now())
            ctx = stack_context(current, with_definition=False)
            for res in _live_resources(current):
                if not res.plugin_data.get(PHYSICAL_LOCK_FLAG) or res.engine_id is not None:
                    continue
                finding = _verify_one(current, plugin_for(ctx, res), res, heal=heal, user=user)
                if finding is not None:
                    findings.append({"stack_name": current.name, **finding})
        drift_while_locked(stack)  # its report descends into the nested stacks
    return findings


def _verify_one(stack, plugin, res, *, heal, user):
    try:
        state = plugin.physical_lock_state()
    except (ResourceFailure, HeatError) as error:
        state, gone = None, str(error)
    else:
        if state is None or state["locked"]:
            return None  # no physical lock to hold, or still in place
        gone = None
    what = state["object"] if state else f"{res.type} {res.physical_resource_id or res.name}"
    healed = False
    if gone:
        text = f"Physical lock of {what} could not be verified: {gone}"
    elif heal and _relock(plugin, res):
        healed = True
        text = f"Physical lock of {what} was removed outside heatweb; locked it again"
    else:
        why = "LOCK_HEAL=report" if not heal else "the cloud refused"
        text = f"Physical lock of {what} was removed outside heatweb; not locked again ({why})"
    if not healed and _reported(stack, text):
        return None  # said once for this lock; not again every sweep
    resource_event(res, text, action="LOCK", status="COMPLETE" if healed else "FAILED").save()
    lock_record(stack, "heal", user=user, level=stack.lock_level, reason=stack.lock_reason,
                expires_at=stack.lock_expires_at, detail=text)
    log.warning("stack %s: %s", stack.pk, text)
    return {"resource_name": res.name, "object": what, "healed": healed, "detail": text}


def _reported(stack, text):
    return LockRecord.objects.filter(stack=stack, kind="heal", detail=text,
                                     at__gte=stack.locked_at or timezone.now()).exists()


def _relock(plugin, res):
    try:
        plugin.check_lock_complete(plugin.handle_lock())
    except (ResourceFailure, HeatError) as error:
        log.warning("relocking %s: %s", res.pk, error)
        return False
    Resource.objects.filter(pk=res.pk).update(plugin_data={**plugin.data,
                                                           PHYSICAL_LOCK_FLAG: True})
    return True


def lock_verify_sweep():
    """Verify the physical locks of each stack at level ``all`` not verified for a while.

    Each stack is claimed by a conditional update, so several engines
    sweeping at once verify it once.
    """
    now = timezone.now()
    stale = Q(lock_verified_at__isnull=True) | \
        Q(lock_verified_at__lt=now - timedelta(seconds=settings.HEATWEB["LOCK_VERIFY_SECONDS"]))
    due = Stack.objects.filter(stale, state="LOCK_COMPLETE", lock_level="all",
                               deleted_at__isnull=True)
    for stack in list(due.order_by("lock_verified_at")[:100]):
        claimed = Stack.objects.filter(stale, pk=stack.pk, state="LOCK_COMPLETE").update(
            lock_verified_at=now)
        if not claimed or st.ancestor_lock_holder(stack) is not None:
            continue  # another engine has it; or its parent's verification covers it
        try:
            stack_action(stack, "verify_lock", user=None)
        except HeatError as error:
            log.info("verifying the lock of stack %s: %s", stack.pk, error)
