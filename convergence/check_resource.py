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
from dataclasses import dataclass

from django.db import transaction
from django_fsm import TransitionNotAllowed

from convergence import waiting
from convergence.breakpoints import pause_after
from convergence.engines import engine_alive, engine_id
from convergence.row_saves import RowSave, saves_flush
from convergence.rows import INCREMENT, row_update, rows_update
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
    where, values = _lock_terms(ctx, res, action=action, plugin=plugin)
    updated = row_update(Resource, where, values)
    if updated:
        _locked(res, values)
    return bool(updated)


def _lock_terms(ctx, res, *, action, plugin):
    """The lock's compare-and-swap, ``(where, values)``, after the state's transition."""
    if action not in STATELESS_ACTIONS:
        getattr(res, f"begin_{action.lower()}")()
    running = {"action": action, "entity": ctx.node, "traversal": ctx.traversal_id,
               "input": ctx.node_input or {}}
    fields = {}
    if action == "CREATE":  # kept until the create ends, so a rerun after a crash reuses it
        plugin.creation_key_reused = CREATION_KEY in plugin.data
        plugin.data.setdefault(CREATION_KEY, uuid.uuid4().hex)
        fields["plugin_data"] = plugin.data
    return ({"id": res.pk, "engine_id": None, "atomic_key": res.atomic_key},
            {"engine_id": engine_id(), "atomic_key": res.atomic_key + 1, "state": res.state,
             "status_reason": "state changed", "action_cookie": running, **fields})


def _locked(res, values):
    res.engine_id, res.atomic_key = values["engine_id"], values["atomic_key"]
    res.action_cookie = values["action_cookie"]


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


def _save_and_unlock(ctx, res, *, release=False):
    """Save the resource's result and unlock it; ``release``: its owner records go too
    (its delete completed). With the batch's saves when there are (``ctx.saves``)."""
    fields = dict(state=res.state, status_reason=res.status_reason, engine_id=None,
                  atomic_key=INCREMENT, action_cookie=None,
                  physical_resource_id=res.physical_resource_id, plugin_data=res.plugin_data,
                  properties_data=res.properties_data, attributes_data=res.attributes_data,
                  requires=res.requires, template_id=res.template_id,
                  rsrc_metadata=res.rsrc_metadata)
    where = {"id": res.pk, "engine_id": res.engine_id}
    if ctx is not None and ctx.saves is not None:
        ctx.saves.append(RowSave(res, where, fields, release=release,
                                 lost=lambda: _save_after_lock_broken(res, fields)))
        res.engine_id = None
        return
    if release:
        ownership.holds_release(res)
    if not row_update(Resource, where, fields):
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


def _held(res, action):
    """Another engine is working on the resource (as last read)."""
    return res.engine_id is not None or (res.status == st.IN_PROGRESS and action not in
                                         STATELESS_ACTIONS)


def _invalid_state(res, action):
    return Outcome("failed", reason=(
        f"Resource {action} failed: Error: resources.{res.name}: "
        f"State {res.state} invalid for {action.lower()}"))


def _begin(ctx, res, *, action, plugin):
    """Lock the resource and begin ``action`` (its IN_PROGRESS event): None, or the
    Outcome that says why not."""
    if _held(res, action):
        return locked_elsewhere(res)  # another engine is working on it
    try:
        if not _lock_and_begin(ctx, res, action=action, plugin=plugin):
            return locked_elsewhere(res)
    except TransitionNotAllowed:
        return _invalid_state(res, action)
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
    started = Started(res, action, plugin, args, props, pending or {}, ctx.node,
                      ctx.node_input)
    if ctx.locks is not None:
        return _lock_later(ctx, started)
    refused = _begin(ctx, res, action=action, plugin=plugin)
    if refused is not None:
        return refused
    return _locked_start(ctx, started)


def _lock_later(ctx, started):
    """In a batch (``ctx.locks``): the lock is taken with the batch's others (``locks_run``)."""
    res, action = started.res, started.action
    if _held(res, action) or any(other.res.pk == res.pk for other, _, _ in ctx.locks):
        return locked_elsewhere(res)
    try:
        where, values = _lock_terms(ctx, res, action=action, plugin=started.plugin)
    except TransitionNotAllowed:
        return _invalid_state(res, action)
    ctx.locks.append((started, where, values))
    return Outcome("locking")


def locks_run(ctx):
    """Take the locks of the batch's actions (``ctx.locks``) in one statement, then start
    each action whose lock was taken; one another engine took meanwhile is met as a
    single node meets it (``locked_elsewhere``). Returns ``[(started, outcome), ...]``.

    Each row keeps its own compare-and-swap (``engine_id`` NULL and its
    ``atomic_key`` as read), so two engines never both hold it; only the round
    trips are shared.
    """
    batch, ctx.locks[:] = list(ctx.locks), []
    if not batch:
        return []
    taken = rows_update(Resource, [(where, values) for _, where, values in batch])
    results = []
    for started, _, values in batch:
        res = started.res
        ctx.node, ctx.node_input = started.entity, started.node_input
        if res.pk not in taken:
            results.append((started, locked_elsewhere(res)))
            continue
        _locked(res, values)
        ctx.events.add(resource_event(res, "state changed", action=started.action))
        try:
            outcome = _locked_start(ctx, started)
        except HeatError as error:  # as the node's own run fails it, now that it is locked
            outcome = action_fail(ctx, res, action=started.action, error=error)
        results.append((started, outcome))
    return results


def _locked_start(ctx, started):
    """The locked resource's action: its plugin's ``handle_<action>`` (now, or beside the
    batch's others), after the ownership checks."""
    res, action, plugin, props = started.res, started.action, started.plugin, started.props
    locked = ownership.action_change_refusal(
        res, plugin, action=action, stack=ctx.stack,
        properties=props if props is not None else res.properties_data)
    if locked is not None:  # it would change an object a stack locked at level all holds
        return action_fail(ctx, res, action=action, error=locked)
    if action == "DELETE" and not ownership.holds_object(
            res, type(plugin), batch=getattr(ctx, "batch_holds", None)):
        # The object is not this resource's: the engine deletes only through its holder.
        ctx.events.add(resource_event(
            res, f"{res.physical_resource_id} is not held by this resource: left in place",
            action="DELETE"))
        return action_finish(ctx, res, plugin=plugin, props=None, pending=started.pending)
    if "metadata" in started.pending:
        plugin.metadata = started.pending["metadata"]
    if ctx.handles is not None and plugin.cloud_calls_only:
        ctx.handles.append(started)  # called beside the batch's others (handles_run)
        return Outcome("checking")
    cookie, error = plugin_handle(started)
    return handled(ctx, started, cookie=cookie, error=error)


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
    node_input: dict | None = None


def plugin_handle(started):
    """The plugin's ``handle_<action>``: ``(cookie, None)``, or ``(None, error)``."""
    try:
        return getattr(started.plugin, f"handle_{started.action.lower()}")(*started.args), None
    except Exception as error:  # noqa: BLE001 - any plugin error fails the resource
        return None, error


def handled(ctx, started, *, cookie, error):
    res, action = started.res, started.action
    if error is not None:
        return action_fail(ctx, res, action=action, error=error)
    if ctx.first_checks is not None and isinstance(cookie, dict) and cookie.get("await"):
        ctx.first_checks.append((started, cookie))
        return Outcome("checking")
    return action_check(ctx, res, action=action, plugin=started.plugin, cookie=cookie,
                        props=started.props, pending=started.pending, entity=started.entity)


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
    until = plugin.wake_at(cookie)

    def saved():
        waiting.wait_add(ctx, res, cookie=cookie, until=until)

    def lost():  # the lock was broken: keep the physical id for the node's rerun
        res.physical_resource_id = fields["physical_resource_id"]
        _save_after_lock_broken(res, {"physical_resource_id": res.physical_resource_id})

    where = {"id": res.pk, "engine_id": res.engine_id}
    # The physical id and its owner record together; inside a batch's transaction
    # (first_checks_run) without a savepoint of its own: an error here leaves the
    # batch's transaction as it leaves this one (a hold's conflict is no error). There
    # the batch's owner records and row saves are written together at its end
    # (``pending_holds``, ``saves``).
    with transaction.atomic(savepoint=False):
        if ownership.holds_changed(res, plugin):
            if ctx.pending_holds is not None:
                ctx.pending_holds.append((res, type(plugin), plugin.physical_id))
            else:
                ownership.hold_take(res, type(plugin), plugin.physical_id)
        if ctx.saves is not None:
            ctx.saves.append(RowSave(res, where, fields, saved=saved, lost=lost))
            return
        done = row_update(Resource, where, fields)
    (saved if done else lost)()


def action_finish(ctx, res, *, plugin, props, pending, keep_attributes=False):
    """The action is complete: the resource's new state, data and attributes saved, and
    its owner records with them (the object it now holds; none after its delete)."""
    action = pending.get("stateless_action") or res.action
    if not ownership.holds_changed(res, plugin) and \
            (action != "DELETE" or ownership.held_key(type(plugin)) is None):
        return _finish(ctx, res, plugin=plugin, props=props, pending=pending,
                       keep_attributes=keep_attributes)
    if action == "DELETE":  # nothing in it raises what would be caught here: no savepoint
        with transaction.atomic(savepoint=False):
            return _finish(ctx, res, plugin=plugin, props=props, pending=pending,
                           keep_attributes=keep_attributes, release=True)
    try:
        with transaction.atomic():
            ownership.hold_take(res, type(plugin), plugin.physical_id)
            return _finish(ctx, res, plugin=plugin, props=props, pending=pending,
                           keep_attributes=keep_attributes)
    except ownership.ObjectHeld as error:  # an external_id another resource holds
        return action_fail(ctx, res, action=action, error=error)


def _finish(ctx, res, *, plugin, props, pending, keep_attributes, release=False):
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
    _save_and_unlock(ctx, res, release=release)
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
    stays ``available`` as made, though attached since). Not the holders in a stack
    being deleted (they go too); a nested stack deleted by its parent's update (a group
    shrinking: its member's pool, in the parent, stays) still has its pool read again.
    Only a row no engine holds is written; a failed read leaves the old value (best
    effort, as attributes are)."""
    objects = ownership.described_objects(type(plugin), plugin.properties)
    if not objects:
        return
    if ctx.saves:
        saves_flush(ctx)  # the holders' rows as saved so far (one may be of this batch)
    holders = ownership.holders_in_project(objects, project_id=ctx.stack.project_id) - \
        {res.pk}
    for row in Resource.objects.filter(pk__in=holders, replaced_by__isnull=True,
                                       engine_id__isnull=True) \
            .exclude(stack__state__startswith="DELETE_"):
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
    _save_and_unlock(ctx, res)
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
    _save_and_unlock(ctx, res)
    ctx.events.add(resource_event(res, res.status_reason, action=action, status=st.FAILED))
