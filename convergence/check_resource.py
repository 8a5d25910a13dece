"""Running graph nodes: one resource action per node, under the resource lock.

A node is ``(resource_id, is_update)``. What it does depends on the
traversal's action: converge (create, update in place or replace) for
update nodes and delete-if-unneeded for cleanup nodes in create/update/
rollback/delete traversals; suspend, resume, check, lock or unlock in walks.
Plugins do the work in two phases; a phase that is not complete yet is
polled again by a delayed task, never by sleeping.
"""
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.db import connections, transaction
from django_fsm import TransitionNotAllowed

from convergence import waiting
from convergence.breakpoints import pause_after
from convergence.engines import engine_alive, engine_id
from convergence.rows import INCREMENT, row_update
from convergence.takeover import lock_break, resume_waiting
from heatweb.exceptions import HeatError
from stacks import ownership
from stacks.models import Resource
from stacks.models import states as st
from stacks.models.events import resource_event
from stacks.models.states import STATELESS_ACTIONS
from stacks.plugins import node_data, plugin_class, plugin_for
from stacks.resources.base import CREATION_KEY, ResourcePlugin
from stacks.resources.registry import get_plugin, has_type
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG

log = logging.getLogger(__name__)

CONVERGE_ACTIONS = ("CREATE", "UPDATE", "ROLLBACK", "RESTORE", "ADOPT")
WALK_SKIP_WHEN_DONE = ("SUSPEND", "RESUME", "LOCK", "UNLOCK")


@dataclass
class Outcome:
    kind: str  # done | waiting | failed | locked | retry | paused
    data: dict | None = None
    reason: str = ""


DONE_EMPTY = Outcome("done")
PAUSED = Outcome("paused")  # parked on a hook (convergence.breakpoints) until it is cleared


# Running one action --------------------------------------------------------------

def _lock_and_begin(ctx, res, *, action, plugin):
    """Take the resource lock and move to ACTION_IN_PROGRESS in one UPDATE.

    The lock records the node and its input (``action_cookie`` without a
    ``cookie`` key), so if this engine dies a live one runs the node again;
    a create also stores its creation key before the plugin calls the cloud.
    """
    if action not in STATELESS_ACTIONS:
        getattr(res, f"begin_{action.lower()}")()
    me = engine_id()
    running = {"action": action, "entity": ctx.node, "traversal": ctx.traversal_id,
               "input": ctx.node_input or {}}
    fields = {}
    if action == "CREATE":  # kept until the create ends, so a rerun after a crash reuses it
        plugin.creation_key_reused = CREATION_KEY in plugin.data
        plugin.data.setdefault(CREATION_KEY, uuid.uuid4().hex)
        fields["plugin_data"] = plugin.data
    updated = row_update(
        Resource, {"id": res.pk, "engine_id": None, "atomic_key": res.atomic_key},
        {"engine_id": me, "atomic_key": res.atomic_key + 1, "state": res.state,
         "status_reason": "state changed", "action_cookie": running, **fields})
    if updated:
        res.engine_id, res.atomic_key, res.action_cookie = me, res.atomic_key + 1, running
    return bool(updated)


def locked_elsewhere(res):
    """Another engine holds the resource: if it is dead, take its work up.

    Alive: do nothing and do not propagate; the holder retriggers this
    node in the current traversal when it finishes. Dead while waiting for
    the cloud: a live engine polls on (and retriggers). Dead while
    starting the action: break its lock and run the node again.
    """
    fresh = Resource.objects.filter(pk=res.pk).first()
    if fresh is None:
        return DONE_EMPTY
    if fresh.engine_id is None:
        if fresh.status == st.IN_PROGRESS and fresh.action_cookie is None:
            return Outcome("locked")  # its holder is finishing; it retriggers this node
        return Outcome("retry")  # it was released meanwhile: read it again and retry
    if engine_alive(fresh.engine_id) or resume_waiting(fresh):
        return Outcome("locked")  # the holder (or the engine polling on for a dead one) retriggers
    lock_break(fresh, fresh.engine_id)
    return Outcome("retry")


# The actions after which the objects a resource changes are described again.
DESCRIBING_ACTIONS = ("CREATE", "UPDATE", "DELETE", "ADOPT")


def _save_and_unlock(res, **extra):
    fields = dict(state=res.state, status_reason=res.status_reason, engine_id=None,
                  atomic_key=INCREMENT, action_cookie=None,
                  physical_resource_id=res.physical_resource_id, plugin_data=res.plugin_data,
                  properties_data=res.properties_data, attributes_data=res.attributes_data,
                  requires=res.requires, template_id=res.template_id,
                  rsrc_metadata=res.rsrc_metadata, **extra)
    if not row_update(Resource, {"id": res.pk, "engine_id": res.engine_id}, fields):
        _save_after_lock_broken(res, fields)
    res.engine_id = None


def _save_after_lock_broken(res, fields):
    """Our lock was broken (this engine was taken for dead) before we saved: keep the result.

    Saved under a fresh claim when no engine holds the row and it has no
    other physical resource (the rerun of the node then finds it done and
    creates nothing twice); otherwise at least the physical id is kept
    where the row has none. Never silently dropped: a warning says which.
    """
    physical_id = res.physical_resource_id or ""
    fresh = Resource.objects.filter(pk=res.pk).values("engine_id", "atomic_key",
                                                      "physical_resource_id").first()
    if fresh is None:
        return
    if fresh["engine_id"] is None and fresh["physical_resource_id"] in ("", physical_id):
        if row_update(Resource, {"id": res.pk, "engine_id": None,
                                 "atomic_key": fresh["atomic_key"]}, fields):
            log.warning("resource %s: lock broken before saving; saved under a new claim",
                        res.pk)
            return
    if physical_id:
        Resource.objects.filter(pk=res.pk, physical_resource_id="").update(
            physical_resource_id=physical_id)
    log.warning("resource %s: lock broken before saving; kept physical id %r only", res.pk,
                physical_id)


def _begin(ctx, res, *, action, plugin):
    """Lock the resource and begin ``action`` (its IN_PROGRESS event): None, or the
    Outcome that says why not."""
    if res.engine_id is not None or (res.status == st.IN_PROGRESS and action not in
                                      STATELESS_ACTIONS):
        return locked_elsewhere(res)  # another engine is working on it
    try:
        if not _lock_and_begin(ctx, res, action=action, plugin=plugin):
            return locked_elsewhere(res)
    except TransitionNotAllowed:
        return Outcome("failed", reason=(
            f"Resource {action} failed: Error: resources.{res.name}: "
            f"State {res.state} invalid for {action.lower()}"))
    ctx.events.add(resource_event(res, "state changed", action=action))
    return None


def metadata_update(ctx, res, *, plugin, pending):
    """Heat's update of a resource whose template ``metadata`` alone changed: UPDATE
    IN_PROGRESS then COMPLETE (two events), the new metadata stored; the plugin's
    ``handle_update`` is not called and its attributes are not read again (nothing of
    the physical object changes)."""
    refused = _begin(ctx, res, action="UPDATE", plugin=plugin)
    if refused is not None:
        return refused
    return action_finish(ctx, res, plugin=plugin, props=None, pending=pending,
                         keep_attributes=True)


def action_start(ctx, res, *, action, plugin, props=None, pending=None, args=()):
    refused = _begin(ctx, res, action=action, plugin=plugin)
    if refused is not None:
        return refused
    locked = ownership.action_change_refusal(
        res, plugin, action=action, stack=ctx.stack,
        properties=props if props is not None else res.properties_data)
    if locked is not None:  # it would change an object a stack locked at level all holds
        return action_fail(ctx, res, action=action, error=locked)
    if action == "DELETE" and not ownership.holds_object(res, type(plugin)):
        # The object is not this resource's: the engine deletes only through its holder.
        ctx.events.add(resource_event(
            res, f"{res.physical_resource_id} is not held by this resource: left in place",
            action="DELETE"))
        return action_finish(ctx, res, plugin=plugin, props=None, pending=pending or {})
    started = Started(res, action, plugin, args, props, pending or {}, ctx.node)
    if ctx.handles is not None and plugin.cloud_calls_only:
        ctx.handles.append(started)  # called beside the batch's others (handles_run)
        return Outcome("checking")
    cookie, error = _handle(started)
    return _handled(ctx, started, cookie=cookie, error=error)


@dataclass
class Started:
    """An action whose resource is locked and whose plugin's ``handle_<action>`` is due."""

    res: object
    action: str
    plugin: object
    args: tuple
    props: dict | None
    pending: dict
    entity: list


def _handle(started):
    """The plugin's ``handle_<action>``: ``(cookie, None)``, or ``(None, error)``."""
    try:
        return getattr(started.plugin, f"handle_{started.action.lower()}")(*started.args), None
    except Exception as error:  # noqa: BLE001 - any plugin error fails the resource
        return None, error


def _handled(ctx, started, *, cookie, error):
    res, action = started.res, started.action
    if error is not None:
        return action_fail(ctx, res, action=action, error=error)
    if ctx.first_checks is not None and isinstance(cookie, dict) and cookie.get("await"):
        ctx.first_checks.append((started, cookie))
        return Outcome("checking")
    return action_check(ctx, res, action=action, plugin=started.plugin, cookie=cookie,
                        props=started.props, pending=started.pending, entity=started.entity)


def _handle_in_thread(started):
    try:
        return _handle(started)
    finally:
        connections.close_all()  # this thread's own, should a plugin have opened one


def handles_run(ctx):
    """Call the batch's deferred ``handle_<action>``s side by side, then go on with each.

    Only for a cloud whose calls are round trips (the driver's
    ``parallel_calls`` > 1) and plugins that call nothing but the cloud in
    them: every resource is already locked, with its creation key stored,
    so a crash here leaves what any crash after a cloud call leaves.
    Returns ``[(started, outcome), ...]``.
    """
    batch, ctx.handles[:] = list(ctx.handles), []
    if not batch:
        return []
    with ThreadPoolExecutor(max_workers=min(len(batch), ctx.parallel_calls)) as pool:
        results = list(pool.map(_handle_in_thread, batch))
    return [(started, _handled(ctx, started, cookie=cookie, error=error))
            for started, (cookie, error) in zip(batch, results)]


def first_checks_run(ctx):
    """Look at the batch's new waits with one list call per kind, then check each.

    Returns ``[(started, outcome), ...]``: each is done, failed or waiting
    (a Waiter row, as if it had been checked alone). Where the list call
    fails, the plugin asks the cloud itself, as it would have.
    """
    checks, ctx.first_checks[:] = list(ctx.first_checks), []
    if not checks:
        return []
    seen = waiting.observe(ctx.plugin_context.cloud, [
        (cookie["await"]["kind"], cookie["await"]["id"]) for _, cookie in checks])
    results = []
    # One commit for the batch's waits: a crash before it leaves each resource
    # locked with its creation key, as a crash right after its cloud call would.
    with transaction.atomic():
        for started, cookie in checks:
            target = cookie["await"]
            status, listed = seen.get((target["kind"], target["id"]), (None, None))
            results.append((started, action_check(
                ctx, started.res, action=started.action, plugin=started.plugin,
                cookie=waiting.with_observed(cookie, status, listed),
                props=started.props, pending=started.pending, entity=started.entity)))
    return results


def action_check(ctx, res, *, action, plugin, cookie, props, pending, entity=None):
    try:
        done = getattr(plugin, f"check_{action.lower()}_complete")(cookie)
    except Exception as error:  # noqa: BLE001
        return action_fail(ctx, res, action=action, error=error)
    if not done:
        _wait(ctx, res, action=action, plugin=plugin, cookie=cookie, props=props, pending=pending,
              entity=entity)
        return Outcome("waiting")
    outcome = action_finish(ctx, res, plugin=plugin, props=props, pending=pending)
    if pause_after(ctx, res, action=action, entity=entity, data=outcome.data):
        return PAUSED
    return outcome


def _wait(ctx, res, *, action, plugin, cookie, props, pending, entity):
    """Leave the action waiting: no task per resource, a poll round checks it (waiting.py)."""
    res.action_cookie = {"action": action, "cookie": waiting.unobserved(cookie), "props": props,
                         "pending": pending, "entity": entity or ctx.node,
                         "traversal": ctx.traversal_id,
                         "since": waiting.wait_since(res, action)}
    reason = plugin.waiting_reason(cookie)
    fields = {"action_cookie": res.action_cookie, "physical_resource_id": plugin.physical_id or "",
              "plugin_data": plugin.data, **({"status_reason": reason} if reason else {})}
    with transaction.atomic():  # the physical id and its owner record together
        if ownership.holds_changed(res, plugin):
            ownership.hold_take(res, type(plugin), plugin.physical_id)
        saved = row_update(Resource, {"id": res.pk, "engine_id": res.engine_id}, fields)
    if not saved:
        # The lock was broken: keep the physical id for the node's rerun.
        res.physical_resource_id = fields["physical_resource_id"]
        _save_after_lock_broken(res, {"physical_resource_id": res.physical_resource_id})
        return
    waiting.wait_add(ctx, res, cookie=cookie, until=plugin.wake_at(cookie))


def action_finish(ctx, res, *, plugin, props, pending, keep_attributes=False):
    """The action is complete: the resource's new state, data and attributes saved, and
    its owner records with them (the object it now holds; none after its delete)."""
    action = pending.get("stateless_action") or res.action
    if not ownership.holds_changed(res, plugin) and \
            (action != "DELETE" or ownership.held_key(type(plugin)) is None):
        return _finish(ctx, res, plugin=plugin, props=props, pending=pending,
                       keep_attributes=keep_attributes)
    try:
        with transaction.atomic():
            if action == "DELETE":
                ownership.holds_release(res)
            else:
                ownership.hold_take(res, type(plugin), plugin.physical_id)
            return _finish(ctx, res, plugin=plugin, props=props, pending=pending,
                           keep_attributes=keep_attributes)
    except ownership.ObjectHeld as error:  # an external_id another resource holds
        return action_fail(ctx, res, action=action, error=error)


def _finish(ctx, res, *, plugin, props, pending, keep_attributes):
    action = pending.get("stateless_action") or res.action
    if action not in STATELESS_ACTIONS:
        res.mark_complete()
        res.status_reason = "state changed"
    res.physical_resource_id = plugin.physical_id or ""
    res.plugin_data = plugin.data
    if props is not None:
        res.properties_data = props
        plugin.properties = props
    if "requires" in pending:
        res.requires = pending["requires"]
    if "template_id" in pending:
        res.template_id = pending["template_id"]
    if "metadata" in pending:  # the template's, resolved (Heat's metadata_set at create/update)
        res.rsrc_metadata = pending["metadata"]
    if "physical_lock" in pending:
        res.plugin_data = {**res.plugin_data, PHYSICAL_LOCK_FLAG: pending["physical_lock"]}
    if action != "DELETE" and not (action in STATELESS_ACTIONS and plugin.nested_stack) \
            and not _left_alone(plugin, action) and not keep_attributes:
        # After a lock or unlock too: the ``show`` attribute then says locked/protected.
        res.attributes_data = _attributes(plugin)
    _save_and_unlock(res)
    if action in DESCRIBING_ACTIONS:
        _describe_again(ctx, res, plugin)
    reason = "state changed" if action not in STATELESS_ACTIONS else \
        plugin.lock_note or (f"Nested stack {action.lower()}ed with its parent"
                             if plugin.nested_stack else
                             f"Resource {action.lower()}ed (no physical object to lock)")
    ctx.events.add(resource_event(res, reason, action=action, status=st.COMPLETE))
    return Outcome("done", data=None if action == "DELETE" else node_data(res, plugin))


def _describe_again(ctx, res, plugin):
    """The resources of the project holding objects this one's action changed the cloud's
    description of (``changes_objects``, ``shown_in``: a member and its pool, in this
    stack or another of its tree) have their ``show`` attribute read again: Heat resolves
    ``show`` live on every read (its cache mode is none), while the other attributes
    keep the values stored at the holder's own action (Heat's cached ones: a volume
    stays ``available`` as made, though attached since). Not while the stack itself is
    being deleted (the holders go too). Only a row no engine holds is written; a failed
    read leaves the old value (best effort, as attributes are)."""
    if ctx.stack.action == "DELETE":
        return
    objects = ownership.described_objects(type(plugin), plugin.properties)
    if not objects:
        return
    holders = ownership.holders_in_project(objects, project_id=ctx.stack.project_id) - \
        {res.pk}
    for row in Resource.objects.filter(pk__in=holders, replaced_by__isnull=True,
                                       engine_id__isnull=True):
        if not has_type(row.type) or "show" not in (row.attributes_data or {}):
            continue
        try:
            shown = plugin_for(ctx, row, cls=get_plugin(row.type)).get_attribute("show")
        except Exception:  # noqa: BLE001 - attributes are best effort, as in Heat
            log.exception("show of %s after %s", row.name, res.name)
            continue
        Resource.objects.filter(pk=row.pk, engine_id__isnull=True) \
            .update(attributes_data={**row.attributes_data, "show": shown})


def _left_alone(plugin, action):
    """A suspend or resume of a type that does nothing for it (a port, a network: the
    base class's ``handle_<action>``) left its object as it was: its stored attributes
    stand, with no read of the cloud (Heat reads none either)."""
    if action not in ("SUSPEND", "RESUME"):
        return False
    name = f"handle_{action.lower()}"
    return getattr(type(plugin), name) is getattr(ResourcePlugin, name)


def _attributes(plugin):
    try:
        return plugin.attributes()
    except Exception:  # noqa: BLE001 - attributes are best effort, as in Heat
        log.exception("attributes of %s", plugin.name)
        return {}


def action_fail(ctx, res, *, action, error):
    if action not in STATELESS_ACTIONS:
        res.mark_failed()
    # A create that failed (not one whose engine died) is retried with a new object.
    res.plugin_data = {k: v for k, v in (res.plugin_data or {}).items() if k != CREATION_KEY}
    detail = error.message if isinstance(error, HeatError) else str(error)
    res.status_reason = f"{type(error).__name__}: resources.{res.name}: {detail}"
    _save_and_unlock(res)
    ctx.events.add(resource_event(res, res.status_reason, action=action, status=st.FAILED))
    return Outcome("failed", reason=f"Resource {action} failed: {res.status_reason}")


def action_abort(ctx, res):
    """The stack stopped (timeout, cancel) while this resource was waiting; its plugin
    is told (Heat's ``handle_<action>_cancel``)."""
    action = res.action_cookie["action"] if res.action_cookie else res.action
    if res.action_cookie:
        try:
            plugin_for(ctx, res, res.action_cookie.get("props"), plugin_class(ctx, res)) \
                .handle_cancel(action, res.action_cookie.get("cookie"))
        except Exception:  # noqa: BLE001 - the abort goes on, as Heat's cancel does
            log.exception("cancelling %s of %s", action, res.name)
    if res.status == st.IN_PROGRESS:
        res.mark_failed()
    res.status_reason = f"{action} aborted: stack is {ctx.stack.state}"
    _save_and_unlock(res)
    ctx.events.add(resource_event(res, res.status_reason, action=action, status=st.FAILED))
