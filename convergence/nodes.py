"""Entry points the Celery tasks call: run a batch of ready nodes, poll one."""
import logging

from django.db.models import F

from convergence.check_resource import (
    CONVERGE_ACTIONS, DONE_EMPTY, STATELESS_ACTIONS, WALK_SKIP_WHEN_DONE, InputLookup, NodeContext, Outcome,
    action_abort, action_check, action_fail, action_start, node_data, plugin_class, plugin_for)
from convergence.engines import engine_id
from convergence.services import propagate, retrigger, traversal_fail
from convergence.sync_points import node_key, sync_points_for
from heatweb.exceptions import HeatError
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.resources.base import PluginContext
from stacks.services.definitions import definition_cache
from stacks.services.events import EventRecorder
from stacks.services.locking_flags import PHYSICAL_LOCK_FLAG

log = logging.getLogger(__name__)


def _context(stack, traversal_id):
    definition = None
    if stack.action in CONVERGE_ACTIONS:
        definition = definition_cache.get(stack.raw_template, stack)
    return NodeContext(
        stack=stack, traversal_id=traversal_id, definition=definition, events=EventRecorder(),
        plugin_context=PluginContext(cloud=_cloud(), stack_id=str(stack.pk),
                                     stack_name=stack.name, project_id=stack.project_id))


def _cloud():
    from stacks.cloud import get_cloud_driver

    return get_cloud_driver()


def _current_stack(stack_id, traversal_id):
    stack = Stack.objects.select_related("raw_template").filter(pk=stack_id).first()
    if stack is None or stack.current_traversal != traversal_id or \
            stack.status != st.IN_PROGRESS:
        return None
    return stack


def nodes_run(stack_id, traversal_id, nodes):
    """Run ready nodes ``[[entity_id, is_update, input_data], ...]`` of a traversal."""
    stack = _current_stack(stack_id, traversal_id)
    if stack is None:
        return
    ctx = _context(stack, traversal_id)
    own = sync_points_for(traversal_id, [(n[0], n[1]) for n in nodes])
    rows = Resource.objects.in_bulk([n[0] for n in nodes])
    finished, failure = [], None
    for entity, is_update, data in nodes:
        sync_point = own.get((str(entity), bool(is_update)))
        if sync_point is None:
            continue  # a newer traversal replaced this one
        ctx.node = [entity, bool(is_update)]
        outcome = node_run(ctx, rows.get(entity), bool(is_update), data, sync_point)
        if outcome.kind == "done":
            finished.append((node_key(entity, is_update), outcome.data, sync_point.successors))
        elif outcome.kind == "failed":
            failure = outcome.reason
            break
    ctx.events.flush()
    if failure:
        traversal_fail(stack.pk, traversal_id, failure)
    elif finished:
        propagate(stack, traversal_id, finished)


def node_run(ctx, res, is_update, data, sync_point):
    if res is None:
        return DONE_EMPTY
    action = ctx.action
    try:
        if action in CONVERGE_ACTIONS:
            if is_update:
                return converge_update(ctx, res, data)
            kept = node_key(res.pk, True) in sync_point.predecessors
            return converge_cleanup(ctx, res, delete=not kept or res.replaced_by_id is not None)
        if action == "DELETE":
            return converge_cleanup(ctx, res, delete=True)
        return walk_action(ctx, res, action)
    except HeatError as error:
        return _fail_unstarted(ctx, res, error)


def _fail_unstarted(ctx, res, error):
    """A resource that failed before its plugin ran (e.g. a property error)."""
    action = "CREATE" if res.state in (st.INIT_COMPLETE, "CREATE_FAILED") else "UPDATE"
    getattr(res, f"begin_{action.lower()}")()
    return action_fail(ctx, res, action, error)


def converge_update(ctx, res, data):
    definition = ctx.definition
    defn = definition.resources.get(res.name)
    if defn is None:
        return DONE_EMPTY
    lookup = InputLookup(data)
    cls = definition.plugins[res.name]
    raw = definition.template.resolve(defn.properties, definition.params, lookup)
    props = cls.validate_properties(raw or {}, resource_name=res.name)
    pending = {"requires": lookup.requires, "template_id": ctx.stack.raw_template_id}
    if res.state in (st.INIT_COMPLETE, "CREATE_FAILED"):
        return action_start(ctx, res, "CREATE", plugin_for(ctx, res, props, cls),
                            props=props, pending=pending)
    old = res.properties_data or {}
    changed = {k for k in set(props) | set(old) if props.get(k) != old.get(k)}
    if res.type != defn.type or res.action == "DELETE" or \
            (changed and cls.needs_replacement(changed)):
        return replace(ctx, res, defn, cls, props, pending)
    if not changed and res.status != st.FAILED:
        if res.requires != pending["requires"] or res.template_id != pending["template_id"]:
            Resource.objects.filter(pk=res.pk).update(**pending)
        return Outcome("done", data=node_data(res, plugin_for(ctx, res, cls=cls)))
    return action_start(ctx, res, "UPDATE", plugin_for(ctx, res, cls=cls), props=props,
                        pending=pending, args=(props, changed))


def replace(ctx, res, defn, cls, props, pending):
    """Create a new resource for ``res``; its cleanup node deletes the old one."""
    new = Resource.objects.create(stack_id=res.stack_id, name=res.name, type=defn.type,
                                  replaces=res, template_id=pending["template_id"],
                                  requires=pending["requires"])
    Resource.objects.filter(pk=res.pk).update(replaced_by=new)
    return action_start(ctx, new, "CREATE", plugin_for(ctx, new, props, cls), props=props,
                        pending=pending)


def converge_cleanup(ctx, res, *, delete):
    if not delete or res.state == "DELETE_COMPLETE":
        return DONE_EMPTY
    plugin = plugin_for(ctx, res)
    if res.plugin_data.get(PHYSICAL_LOCK_FLAG):
        # A stack deleted from LOCK_FAILED/UNLOCK_FAILED: release the lock first.
        try:
            plugin.check_unlock_complete(plugin.handle_unlock())
        except Exception as error:  # noqa: BLE001
            return _fail_unstarted_delete(ctx, res, error)
        res.plugin_data = {**plugin.data, PHYSICAL_LOCK_FLAG: False}
        Resource.objects.filter(pk=res.pk).update(plugin_data=res.plugin_data)
    return action_start(ctx, res, "DELETE", plugin, pending={})


def _fail_unstarted_delete(ctx, res, error):
    res.begin_delete()
    return action_fail(ctx, res, "DELETE", error)


def walk_action(ctx, res, action):
    if action in STATELESS_ACTIONS:
        return lock_action(ctx, res, action)
    if res.state == st.INIT_COMPLETE or \
            (action in WALK_SKIP_WHEN_DONE and res.state == f"{action}_COMPLETE"):
        return Outcome("done", data=node_data(res, plugin_for(ctx, res)))
    return action_start(ctx, res, action, plugin_for(ctx, res), pending={})


def lock_action(ctx, res, action):
    """Lock or unlock one resource as the stack's lock level asks.

    Child stacks follow the parent's lock at the same level; other resources
    take a physical lock (``handle_lock``) only at level ``all``, and release
    it on unlock or when the level drops to ``stacks``.
    """
    from stacks.resources.stack import _ChildStack

    plugin = plugin_for(ctx, res)
    held = bool(res.plugin_data.get(PHYSICAL_LOCK_FLAG))
    if isinstance(plugin, _ChildStack):
        step = action
        want = action == "LOCK"
    else:
        want = action == "LOCK" and ctx.stack.lock_level == "all"
        if want == held:
            return Outcome("done", data=node_data(res, plugin))
        step = "LOCK" if want else "UNLOCK"
    return action_start(ctx, res, step, plugin,
                        pending={"stateless_action": step, "physical_lock": want})


def node_poll(stack_id, traversal_id, resource_id):
    """Ask a waiting resource's plugin whether its action has completed."""
    res = Resource.objects.filter(pk=resource_id).first()
    if res is None or res.action_cookie is None:
        return  # already finished: a duplicate delivery
    stack = Stack.objects.select_related("raw_template").get(pk=res.stack_id)
    ctx = _context_any(stack, traversal_id)
    if not _take_over(res):
        return
    if stack.status != st.IN_PROGRESS or stack.current_traversal != traversal_id:
        action_abort(ctx, res)
        ctx.events.flush()
        entity = (res.action_cookie or {}).get("entity")
        retrigger(stack.pk, entity[0] if entity else res.pk)
        return
    pending = res.action_cookie
    cls = plugin_class(ctx, res)
    plugin = plugin_for(ctx, res, pending["props"], cls)
    outcome = action_check(ctx, res, pending["action"], plugin, cookie=pending["cookie"],
                           props=pending["props"], pending=pending["pending"],
                           entity=pending.get("entity"))
    ctx.events.flush()
    _after_single(ctx, res, outcome, entity=pending.get("entity"))


def _context_any(stack, traversal_id):
    if stack.action in CONVERGE_ACTIONS and stack.status == st.IN_PROGRESS:
        return _context(stack, traversal_id)
    return NodeContext(
        stack=stack, traversal_id=traversal_id, definition=None, events=EventRecorder(),
        plugin_context=PluginContext(cloud=_cloud(), stack_id=str(stack.pk),
                                     stack_name=stack.name, project_id=stack.project_id))


def _take_over(res):
    """Continue a waiting action here: move its lock to this engine."""
    updated = Resource.objects.filter(
        pk=res.pk, atomic_key=res.atomic_key, engine_id=res.engine_id,
    ).update(engine_id=engine_id(), atomic_key=F("atomic_key") + 1)
    if updated:
        res.engine_id, res.atomic_key = engine_id(), res.atomic_key + 1
    return bool(updated)


def _after_single(ctx, res, outcome, *, entity):
    if outcome.kind == "failed":
        traversal_fail(ctx.stack.pk, ctx.traversal_id, outcome.reason)
    elif outcome.kind == "done":
        node_entity, is_update = entity or [res.pk, res.action != "DELETE"]
        own = sync_points_for(ctx.traversal_id, [(node_entity, is_update)])
        sync_point = own.get((str(node_entity), bool(is_update)))
        if sync_point is not None:
            propagate(ctx.stack, ctx.traversal_id,
                      [(node_key(node_entity, is_update), outcome.data, sync_point.successors)])
