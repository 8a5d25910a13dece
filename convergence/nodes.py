"""Entry points the Celery tasks call: run a batch of ready nodes, poll one."""
import logging

from django.conf import settings

from convergence.batch_calls import first_checks_run, handles_run
from convergence.check_resource import (
    CONVERGE_ACTIONS, DONE_EMPTY, PAUSED, STATELESS_ACTIONS, WALK_SKIP_WHEN_DONE, Outcome,
    action_abort, action_check, action_fail, action_start, locked_elsewhere, locks_run,
    metadata_update)
from convergence.breakpoints import pause_before
from convergence.models import Breakpoint
from convergence.services import nodes_enqueue, propagate, retrigger, traversal_complete, \
    traversal_current, traversal_fail
from convergence.sync_points import node_key, sync_point_merge, sync_points_for
from convergence.takeover import take_over_many
from convergence.waiting import waits_flush
from heatweb.exceptions import HeatError
from stacks import ownership
from stacks.definitions import definition_cache
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.models.events import EventRecorder
from stacks.plugins import REPLACE, UNCHANGED, InputLookup, NodeContext, node_data, \
    plugin_class, plugin_context, plugin_for, resolved_properties, update_decision
from stacks.resources.base import ResourceFailure
from stacks.resources.deletion_policy import deletion_policy, with_policy
from stacks.resources.external import refused_change
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG

log = logging.getLogger(__name__)


def node_context(stack, traversal_id):
    """The context a task runs nodes of ``traversal_id`` in: the stack's definition (for a
    converge action in progress; a stopped stack's waits are only aborted), the events and
    waits it buffers."""
    definition = None
    if stack.action in CONVERGE_ACTIONS and stack.status == st.IN_PROGRESS:
        definition = definition_cache.get(stack)
    return NodeContext(
        stack=stack, traversal_id=traversal_id, definition=definition, events=EventRecorder(),
        plugin_context=plugin_context(stack))


def context_flush(ctx):
    """Write the task's buffered events and waiters."""
    ctx.events.flush()
    waits_flush(ctx)


def _current_stack(stack_id, traversal_id):
    # The raw template's environment and files come along (plugin classes and hooks
    # read them); its template, which grows with the stack (a group of 10,000
    # members: megabytes of JSON), is read only when the definition is not cached.
    stack = Stack.objects.filter(pk=stack_id).select_related("raw_template").defer(
        "raw_template__template").first()
    if stack is None or stack.current_traversal != traversal_id or \
            stack.status != st.IN_PROGRESS:
        return None
    return stack


INLINE_NODES = 50  # ready successors one task runs itself before handing over
EVENTS_DUE_SECONDS = 1.0  # a task's events wait at most about this long (and a batch)
RECHECK_EVERY = 10  # inline nodes between checks that the traversal is still current


def nodes_run(stack_id, traversal_id, *, nodes):
    """Run ready nodes ``[[entity_id, is_update, input_data], ...]`` of a traversal.

    When nodes finish and exactly the next one becomes ready (a chain), it
    runs here too, up to ``INLINE_NODES``; others go back to the queue so
    independent branches spread across workers. Nodes whose resource was
    locked by a dead engine run again; if the stack moved on to a newer
    traversal meanwhile, finished nodes are retriggered there.
    """
    stack = _current_stack(stack_id, traversal_id)
    if stack is None:
        return
    ctx = node_context(stack, traversal_id)
    with ctx.plugin_context.cloud.task_reads():
        _nodes_run(ctx, stack_id, traversal_id, nodes)


def _nodes_run(ctx, stack_id, traversal_id, nodes):
    stack = ctx.stack
    for step in range(INLINE_NODES):
        if step and step % RECHECK_EVERY == 0 and not traversal_current(stack_id, traversal_id):
            break  # cancelled, timed out or superseded: the new traversal takes over
        finished, failure, again = _run_batch(ctx, nodes)
        if again:
            nodes_enqueue(str(stack_id), traversal_id, again)
        if failure:
            context_flush(ctx)
            traversal_fail(stack.pk, traversal_id, failure)
            return
        if finished and not traversal_current(stack_id, traversal_id):
            context_flush(ctx)
            for key, _, _ in finished:
                retrigger(stack.pk, int(key.split(":")[0]))
            return
        kept, stack_done = propagate(stack, traversal_id, finished,
                                     keep=_inline_keep(ctx) if step + 1 < INLINE_NODES
                                     else 0) if finished else (None, False)
        if stack_done:
            context_flush(ctx)
            traversal_complete(stack.pk, traversal_id)
        if not kept:
            break
        nodes = kept
        ctx.events.flush_due(EVENTS_DUE_SECONDS)
    context_flush(ctx)


def _inline_keep(ctx):
    """How many of the nodes that became ready this task runs itself next: one (a chain
    costs no broker round trip; the others spread across workers), or on a cloud whose
    calls overlap (``parallel_calls`` > 1) a whole batch, so a fan-out's cloud calls go
    out together (20 servers on their 20 ports: one batch's calls in flight at once,
    not one alone and then the other 19 from a new task)."""
    return settings.HEATWEB["BATCH_SIZE"] if ctx.parallel_calls > 1 else 1


def _run_batch(ctx, nodes):
    """Run the nodes; their resource locks are taken together, and actions that wait on the
    cloud get their first look together, at the end."""
    own = sync_points_for(ctx.traversal_id, [(n[0], n[1]) for n in nodes])
    rows = Resource.objects.in_bulk([n[0] for n in nodes])
    ctx.batch_holds = ownership.BatchHolds(rows)  # a delete's holder check: one query
    batch = _BatchOutcomes(ctx)
    ctx.first_checks, ctx.locks = [], []
    ctx.parallel_calls = getattr(ctx.plugin_context.cloud, "parallel_calls", 1)
    ctx.handles = [] if ctx.parallel_calls > 1 else None
    try:
        for entity, is_update, data in nodes:
            sync_point = own.get((str(entity), bool(is_update)))
            if sync_point is None:
                continue  # a newer traversal replaced this one
            ctx.node, ctx.node_input = [entity, bool(is_update)], data
            batch.successors[node_key(entity, is_update)] = sync_point.successors
            outcome = node_run(ctx, rows.get(entity), is_update=bool(is_update), data=data,
                               sync_point=sync_point)
            batch.note(entity, is_update, data, outcome)
            if batch.failure:
                break
    finally:
        # Every action started here is locked, called and looked at, also after a
        # failure or an error in a later node: none is left locked without a wait.
        outcomes = locks_run(ctx)
        outcomes += handles_run(ctx) if ctx.handles is not None else []
        outcomes += first_checks_run(ctx)
    for started, outcome in outcomes:
        batch.note(*started.entity, started.node_input, outcome)
    ctx.first_checks = ctx.handles = ctx.batch_holds = ctx.locks = None
    return batch.finished, batch.failure, batch.again


class _BatchOutcomes:
    """What a batch's nodes came to: finished (to propagate), to run again, the failure."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.finished, self.again, self.failure = [], [], None
        self.successors = {}

    def note(self, entity, is_update, data, outcome):
        key = node_key(entity, is_update)
        if outcome.kind == "done":
            self.finished.append((key, outcome.data, self.successors[key]))
        elif outcome.kind == "retry":
            self.again.append([entity, is_update, data])
        elif outcome.kind == "locked" and data:
            # The holder retriggers this node from its sync point when it is done:
            # keep the input there (a node with one predecessor was sent it directly).
            sync_point_merge(traversal_id=self.ctx.traversal_id, entity_id=entity,
                             is_update=bool(is_update), additions=data)
        elif outcome.kind == "failed" and self.failure is None:
            self.failure = outcome.reason


def node_run(ctx, res, *, is_update, data, sync_point):
    if res is None:
        return DONE_EMPTY
    action = ctx.action
    try:
        if action in CONVERGE_ACTIONS:
            if is_update:
                return converge_update(ctx, res, data=data)
            kept = node_key(res.pk, True) in sync_point.predecessors
            return converge_cleanup(ctx, res, delete=not kept or res.replaced_by_id is not None)
        if action == "DELETE":
            return converge_cleanup(ctx, res, delete=True)
        return walk_action(ctx, res, action=action)
    except HeatError as error:
        return _fail_unstarted(ctx, res, error=error)


def _fail_unstarted(ctx, res, *, error):
    """A resource that failed before its plugin ran (e.g. a property error)."""
    action = "CREATE" if res.state in (st.INIT_COMPLETE, "CREATE_FAILED") else "UPDATE"
    getattr(res, f"begin_{action.lower()}")()
    return action_fail(ctx, res, action=action, error=error)


def converge_update(ctx, res, *, data):
    definition = ctx.definition
    defn = definition.resources.get(res.name)
    if defn is None:
        return DONE_EMPTY
    if res.action != "DELETE" and (res.engine_id is not None or res.status == st.IN_PROGRESS):
        # An older traversal's action is still running on it: wait for its retrigger
        # (or break the lock of a dead engine) before deciding update or replace.
        return locked_elsewhere(res)
    if res.action != "DELETE" and pause_before(
            ctx, res, action="CREATE" if res.state == st.INIT_COMPLETE else "UPDATE", data=data):
        return PAUSED
    lookup = InputLookup(data, definition.plugins)
    cls = definition.plugins[res.name]
    raw = resolved_properties(definition, res.name, lookup)
    props = cls.validate_properties(raw or {}, resource_name=res.name)
    metadata = definition.template.resolve(defn.metadata, definition.params, lookup,
                                           f"resources.{res.name}.metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    pending = {"requires": lookup.requires, "template_id": ctx.stack.raw_template_id}
    if ctx.stack.action != "ADOPT":  # an adopted resource keeps the metadata it was given
        pending["metadata"] = metadata
    policy = cls.validate_update_policy(
        definition.template.resolve(defn.update_policy, definition.params, lookup),
        resource_name=res.name) if cls.update_policy_schema else None
    if res.state in (st.INIT_COMPLETE, "CREATE_FAILED"):
        # An adopted stack's resources take the physical objects they were given.
        first = "ADOPT" if ctx.stack.action == "ADOPT" else "CREATE"
        return action_start(ctx, res, action=first,
                            plugin=plugin_for(ctx, res, props, cls, update_policy=policy),
                            props=props, pending=pending)
    old = res.properties_data or {}
    refused = refused_change(old, props, resource_name=res.name, type_name=defn.type)
    if refused:  # external_id added, changed or removed: Heat refuses it
        return _fail_unstarted(ctx, res, error=refused)
    decision, changed = update_decision(res, resource_type=defn.type, cls=cls, props=props)
    if decision == REPLACE:
        return replace(ctx, res, defn=defn, cls=cls, props=props, pending=pending,
                       policy=policy)
    if decision == UNCHANGED:
        if "metadata" in pending and res.rsrc_metadata != metadata:
            # Heat updates a resource whose metadata alone changed (with its events)
            return metadata_update(ctx, res, plugin=plugin_for(ctx, res, cls=cls),
                                   pending=pending)
        if res.requires != pending["requires"]:  # no action: only its references changed
            Resource.objects.filter(pk=res.pk).update(
                requires=pending["requires"], template_id=pending["template_id"])
        return Outcome("done", data=node_data(res, plugin_for(ctx, res, cls=cls)))
    return action_start(ctx, res, action="UPDATE",
                        plugin=plugin_for(ctx, res, cls=cls, update_policy=policy),
                        props=props, pending=pending, args=(props, changed))


def replace(ctx, res, *, defn, cls, props, pending, policy=None):
    """Create a new resource for ``res``; its cleanup node deletes the old one.

    The old one first hands over what its replacement takes (a server's
    ports); when it cannot, the update fails before anything new is made.
    """
    try:
        plugin_for(ctx, res).prepare_for_replace()
    except ResourceFailure as error:
        return _fail_unstarted(ctx, res, error=error)
    new = Resource.objects.create(stack_id=res.stack_id, name=res.name, type=defn.type,
                                  replaces=res, template_id=pending["template_id"],
                                  requires=pending["requires"])
    Resource.objects.filter(pk=res.pk).update(replaced_by=new)
    return action_start(ctx, new, action="CREATE",
                        plugin=plugin_for(ctx, new, props, cls, update_policy=policy),
                        props=props, pending=pending)


def converge_cleanup(ctx, res, *, delete):
    if not delete or res.state == "DELETE_COMPLETE":
        return DONE_EMPTY
    if res.state != st.INIT_COMPLETE and pause_before(ctx, res, action="DELETE",
                                                      data=ctx.node_input):
        return PAUSED
    plugin = plugin_for(ctx, res)
    if res.plugin_data.get(PHYSICAL_LOCK_FLAG) and not plugin.nested_stack:
        # A stack deleted from LOCK_FAILED/UNLOCK_FAILED: release the lock first.
        try:
            plugin.check_unlock_complete(plugin.handle_unlock())
        except Exception as error:  # noqa: BLE001
            return _fail_unstarted_delete(ctx, res, error=error)
        res.plugin_data = {**plugin.data, PHYSICAL_LOCK_FLAG: False}
        Resource.objects.filter(pk=res.pk).update(plugin_data=res.plugin_data)
    if res.action != "DELETE":  # (a DELETE's own plugin_class applies it already)
        policy = deletion_policy(res)
        if policy != "Delete":  # Retain / Snapshot: the physical object stays
            plugin = plugin_for(ctx, res, cls=with_policy(type(plugin), policy,
                                                          state=(res.action, res.status)))
    return action_start(ctx, res, action="DELETE", plugin=plugin, pending={})


def _fail_unstarted_delete(ctx, res, *, error):
    res.begin_delete()
    return action_fail(ctx, res, action="DELETE", error=error)


def walk_action(ctx, res, *, action):
    if action in STATELESS_ACTIONS:
        return lock_action(ctx, res, action=action)
    if res.state == st.INIT_COMPLETE or \
            (action in WALK_SKIP_WHEN_DONE and res.state == f"{action}_COMPLETE"):
        return Outcome("done", data=node_data(res, plugin_for(ctx, res)))
    return action_start(ctx, res, action=action, plugin=plugin_for(ctx, res), pending={})


def lock_action(ctx, res, *, action):
    """Lock or unlock one resource as the stack's lock level asks.

    Child stacks follow the parent's lock at the same level; other resources
    take a physical lock (``handle_lock``) only at level ``all``, and release
    it on unlock or when the level drops to ``stacks``.
    """
    plugin = plugin_for(ctx, res)
    held = bool(res.plugin_data.get(PHYSICAL_LOCK_FLAG))
    if plugin.nested_stack:
        step = action
        want = action == "LOCK"
    else:
        want = action == "LOCK" and ctx.stack.lock_level == "all"
        if want == held:
            return Outcome("done", data=node_data(res, plugin))
        step = "LOCK" if want else "UNLOCK"
    return action_start(ctx, res, action=step, plugin=plugin,
                        pending={"stateless_action": step, "physical_lock": want})


def node_poll(stack_id, traversal_id, *, resource_id):
    """Ask a waiting resource's plugin whether its action has completed."""
    res = Resource.objects.filter(pk=resource_id).first()
    if res is None or "cookie" not in (res.action_cookie or {}):
        return  # already finished (a duplicate delivery), or not waiting
    stack = Stack.objects.get(pk=res.stack_id)
    ctx = node_context(stack, traversal_id)
    if not _take_over(res):
        return
    moved = stack.current_traversal != traversal_id
    if stack.status != st.IN_PROGRESS or stack.deleted_at is not None or \
            (moved and stack.action in ("ROLLBACK", "DELETE", "LOCK")):
        # Cancelled, timed out, failed, rolled back or being deleted: stop
        # waiting. A newer update instead lets the action finish and then
        # retriggers it.
        entity = (res.action_cookie or {}).get("entity")
        action_abort(ctx, res)
        context_flush(ctx)
        if moved:
            retrigger(stack.pk, entity[0] if entity else res.pk)
        return
    pending = res.action_cookie
    cls = plugin_class(ctx, res)
    plugin = plugin_for(ctx, res, pending["props"], cls)
    outcome = action_check(ctx, res, action=pending["action"], plugin=plugin,
                           cookie=pending["cookie"],
                           props=pending["props"], pending=pending["pending"],
                           entity=pending.get("entity"))
    context_flush(ctx)
    _after_single(ctx, res, outcome=outcome, entity=pending.get("entity"))


def _take_over(res):
    """Continue a waiting action here: move its lock to this engine."""
    return res.pk in take_over_many([res])


def _after_single(ctx, res, *, outcome, entity):
    """After a polled action: propagate in its traversal, or retrigger in a newer one."""
    if outcome.kind not in ("done", "failed"):
        return
    node_entity, is_update = entity or [res.pk, res.action != "DELETE"]
    if not traversal_current(ctx.stack.pk, ctx.traversal_id):
        retrigger(ctx.stack.pk, node_entity)
        return
    if outcome.kind == "failed":
        traversal_fail(ctx.stack.pk, ctx.traversal_id, outcome.reason)
        return
    own = sync_points_for(ctx.traversal_id, [(node_entity, is_update)])
    sync_point = own.get((str(node_entity), bool(is_update)))
    if sync_point is None:
        retrigger(ctx.stack.pk, node_entity)
        return
    _, stack_done = propagate(
        ctx.stack, ctx.traversal_id,
        [(node_key(node_entity, is_update), outcome.data, sync_point.successors)])
    if stack_done:
        traversal_complete(ctx.stack.pk, ctx.traversal_id)


def hook_release(stack_id, traversal_id, *, resource_id, hook):
    """A hook was cleared: run its node again (``pre-``) or pass its output on (``post-``)."""
    row = Breakpoint.objects.filter(resource_id=resource_id, hook=hook,
                                    traversal_id=traversal_id, cleared=True).first()
    if row is None or not traversal_current(stack_id, traversal_id):
        return  # its traversal ended or was superseded (which dropped the row)
    entity, is_update = row.entity
    if hook.startswith("pre-"):
        nodes_enqueue(str(stack_id), traversal_id, [[entity, is_update, row.data or {}]])
        return
    own = sync_points_for(traversal_id, [(entity, is_update)])
    sync_point = own.get((str(entity), bool(is_update)))
    if sync_point is None:
        retrigger(stack_id, entity)
        return
    stack = Stack.objects.get(pk=stack_id)
    _, stack_done = propagate(stack, traversal_id,
                              [(node_key(entity, is_update), row.data, sync_point.successors)])
    if stack_done:
        traversal_complete(stack_id, traversal_id)
