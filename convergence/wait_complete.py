"""Completing waiting resources that a poll round (or a poke) found ready, in batches.

The batch form of running a node: each resource's lock moves to this
engine, its plugin's ``check_<action>_complete`` runs (with the status the
round observed), and the finished nodes propagate together, so a thousand
servers that became ACTIVE cost a few tasks and one sync-point merge per
batch. A resource whose stack stopped is aborted; one whose stack moved
to a newer traversal finishes its action and is retriggered there.
"""
from django.db import transaction

from convergence.check_resource import action_abort, action_check
from convergence.nodes import context_flush, node_context
from convergence.row_saves import saves_flush
from convergence.services import propagate, retrigger, traversal_complete, traversal_current, \
    traversal_fail
from convergence.sync_points import node_key, sync_points_for
from convergence.takeover import take_over_many
from convergence.waiting import with_observed
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.plugins import plugin_class, plugin_for


def waits_complete(stack_id, traversal_id, *, items):
    """Check ``items`` (``[[resource_id, observed_status, listed_object], ...]``) of a traversal."""
    stack = Stack.objects.filter(pk=stack_id).first()
    if stack is None:
        return
    rows = Resource.objects.in_bulk([item[0] for item in items])
    ctx = node_context(stack, traversal_id)
    moved = stack.current_traversal != traversal_id
    # Stopped, rolled back or being deleted: stop waiting (a newer update
    # instead lets the action finish and then retriggers it).
    stopped = stack.status != st.IN_PROGRESS or stack.deleted_at is not None or \
        (moved and stack.action in ("ROLLBACK", "DELETE", "LOCK"))
    finished, failed, aborted = [], [], []
    # One commit for the batch: a crash before it leaves every resource waiting as
    # it was, and the redelivered task (or the recovery sweep) completes them.
    # Their resources' saves (finish, fail, abort or wait again) go in one statement too.
    with transaction.atomic():
        ctx.saves = []
        # Finished already, or its lock was broken meanwhile: left out.
        taken = take_over_many([res for res in rows.values() if res.action_cookie is not None])
        for resource_id, observed, *listed in items:  # (older messages carry no listed object)
            res = rows.get(resource_id)
            if res is None or res.pk not in taken:
                continue
            entity = res.action_cookie.get("entity") or [res.pk, res.action != "DELETE"]
            if stopped:
                action_abort(ctx, res)
                aborted.append(entity)
                continue
            outcome = _check(ctx, res, observed=observed, listed=listed[0] if listed else None,
                             entity=entity)
            if outcome.kind == "done":
                finished.append((entity, outcome.data))
            elif outcome.kind == "failed":
                failed.append((entity, outcome.reason))
        saves_flush(ctx)
    ctx.saves = None
    context_flush(ctx)
    if moved:
        for entity in aborted:
            retrigger(stack.pk, entity[0])
    _propagate(ctx, finished, failed=failed)


def _check(ctx, res, *, observed, listed, entity):
    pending = res.action_cookie
    plugin = plugin_for(ctx, res, pending["props"], plugin_class(ctx, res))
    cookie = with_observed(pending["cookie"], observed, listed)
    return action_check(ctx, res, action=pending["action"], plugin=plugin, cookie=cookie,
                        props=pending["props"], pending=pending["pending"], entity=entity)


def _propagate(ctx, finished, *, failed):
    """Pass the finished nodes on in their traversal, or retrigger them in a newer one."""
    if not finished and not failed:
        return
    stack_id, traversal_id = ctx.stack.pk, ctx.traversal_id
    if not traversal_current(stack_id, traversal_id):
        for entity, _ in (*finished, *failed):
            retrigger(stack_id, entity[0])
        return
    if failed:
        traversal_fail(stack_id, traversal_id, failed[0][1])
        return
    own = sync_points_for(traversal_id, [(e[0], bool(e[1])) for e, _ in finished])
    batch = []
    for (entity, is_update), data in finished:
        sync_point = own.get((str(entity), bool(is_update)))
        if sync_point is None:
            retrigger(stack_id, entity)
            continue
        batch.append((node_key(entity, is_update), data, sync_point.successors))
    _, stack_done = propagate(ctx.stack, traversal_id, batch) if batch else (None, False)
    if stack_done:
        traversal_complete(stack_id, traversal_id)
