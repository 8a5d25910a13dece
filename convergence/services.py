"""Traversals: starting one, propagating through it, finishing the stack.

A traversal is started inside the request's transaction (the stack row is
moved by compare-and-swap on its state and current traversal); its leaves
are written to the outbox in that transaction (``convergence.outbox``) and
published after it commits.
"""
import logging
import uuid
from collections import defaultdict

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from convergence.breakpoints import breakpoints_drop
from convergence.models import SyncPoint, Traversal
from convergence.outbox import outbox_add, outbox_discard
from convergence.sync_points import sync_points_create, sync_points_merge
from convergence.waiting import poke_parent_of, stack_stopped
from heatweb import written_sql
from heatweb.celery import app
from heatweb.exceptions import ConcurrentTransaction
from heatweb.keystone import stack_trust_delete
from heatweb.stack_users import stack_project_delete
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.models.events import stack_event

log = logging.getLogger(__name__)


# What the stack services do when a traversal fails a stack (roll it back):
# registered by the stacks app at start, as convergence imports no stack service.
_stack_failed_handlers = []


def on_stack_failed(handler):
    """Call ``handler(stack, action)`` after a traversal failed ``stack``'s ``action``."""
    if handler not in _stack_failed_handlers:
        _stack_failed_handlers.append(handler)


# What the stack services record when a traversal ends (a snapshot's data and status).
_traversal_finished_handlers = []


def on_traversal_finished(handler):
    """Call ``handler(stack, action, traversal_id, outcome)`` in the transaction that
    ends a traversal (``outcome``: COMPLETE or FAILED)."""
    if handler not in _traversal_finished_handlers:
        _traversal_finished_handlers.append(handler)


def _finished(stack, action, traversal_id, outcome):
    for handler in _traversal_finished_handlers:
        handler(stack, action, traversal_id, outcome)


# What the stack services do when a traversal ends, in its transaction (a lock waiting
# for the stack to settle is taken): registered by the stacks app at start.
_stack_settled_handlers = []


def on_stack_settled(handler):
    """Call ``handler(stack)`` in the transaction that completed or failed a traversal."""
    if handler not in _stack_settled_handlers:
        _stack_settled_handlers.append(handler)


def _settled(stack):
    for handler in _stack_settled_handlers:
        handler(stack)


def new_traversal_id():
    return str(uuid.uuid4())


def stack_save_cas(stack, *, expected_state, expected_traversal, **fields):
    """Write the stack only if nobody moved it since we read it (else 409)."""
    fields.setdefault("state", stack.state)
    updated = Stack.objects.filter(
        pk=stack.pk, state=expected_state, current_traversal=expected_traversal,
    ).update(**fields)
    if not updated:
        raise ConcurrentTransaction(stack_name=stack.name)
    for name, value in fields.items():
        setattr(stack, name, value)


def traversal_begin(stack, *, traversal_id, graph, reason):
    """Store the traversal's sync points, event and first tasks (in the outbox, same transaction).

    The tasks are published right after the commit, or by an engine's relay
    when the writer died first; the timeout is a delayed outbox message, so
    no long countdown sits in the broker.
    """
    Traversal.objects.create(id=traversal_id, stack=stack, action=stack.action,
                             node_count=len(graph.nodes))
    SyncPoint.objects.filter(stack=stack).exclude(traversal_id=traversal_id).delete()
    breakpoints_drop(stack, keep_traversal=traversal_id)
    sync_points_create(stack, traversal_id, graph)
    stack_event(stack, reason).save()
    # The reason line follows the action now running (not the previous action's end).
    Stack.objects.filter(pk=stack.pk, current_traversal=traversal_id).update(status_reason=reason)
    stack.status_reason = reason
    leaves = [[n[0], n[1], {}] for n in graph.leaves()]
    stack_id = str(stack.pk)
    if leaves:
        size = settings.HEATWEB["BATCH_SIZE"]
        messages = [("convergence.converge_nodes", [stack_id, traversal_id, leaves[i:i + size]])
                    for i in range(0, len(leaves), size)]
    else:
        messages = [("convergence.traversal_finish", [stack_id, traversal_id])]
    outbox_add(messages, stack_id=stack_id, traversal_id=traversal_id)
    if stack.timeout_mins:
        # Counted from the action's start: a restarted traversal keeps its deadline.
        started = stack.action_started_at or timezone.now()
        left = stack.timeout_mins * settings.HEATWEB["MINUTE_SECONDS"] - (timezone.now() - started).total_seconds()
        outbox_add([("convergence.stack_timeout", [stack_id, traversal_id])],
                   stack_id=stack_id, traversal_id=traversal_id, delay_seconds=max(left, 0.001))
    if stack.action == "ROLLBACK":
        # Waits of the traversal rolled back over are aborted by a poll round at once.
        stack_stopped(stack)  # looks for waiters after the commit


_TRAVERSAL_CURRENT = (f'SELECT 1 FROM "{Stack._meta.db_table}" WHERE "id" = %s AND '
                      '"current_traversal" = %s AND "state" IN '
                      f'({", ".join(["%s"] * len(st.IN_PROGRESS_STATES))}) LIMIT 1')


def traversal_current(stack_id, traversal_id):
    """Is the traversal still the stack's current one (a cheap check: no template load)?
    Written out: every batch of a traversal asks (the ORM's query cost ~1.8 ms of CPU)."""
    stack_pk = Stack._meta.pk.get_db_prep_value(stack_id, connection)
    return bool(written_sql.fetch(_TRAVERSAL_CURRENT,
                                  [stack_pk, traversal_id, *st.IN_PROGRESS_STATES]))


def nodes_enqueue(stack_id, traversal_id, nodes):
    """Send ready nodes to the workers, ``BATCH_SIZE`` a task (``convergence.tasks``, by name)."""
    size = settings.HEATWEB["BATCH_SIZE"]
    for start in range(0, len(nodes), size):
        app.send_task("convergence.converge_nodes",
                      args=[stack_id, traversal_id, nodes[start:start + size]])


def propagate(stack, traversal_id, finished, *, keep=0):
    """Pass each finished node's data to its successors; enqueue the ready ones.

    ``finished``: list of (node key, data, successors). A successor with one
    predecessor is ready at once; others merge into their sync point.
    Returns ``(kept, stack_done)``: up to ``keep`` ready nodes are not enqueued
    but returned (a list, or None), for the caller to run next in the same task
    (a chain then costs no broker round trip; on a cloud whose calls overlap, a
    fan-out's calls go out together); ``stack_done`` means the
    stack's own sync point is satisfied and the caller completes the
    traversal (after writing its events).
    """
    ready, merges = [], defaultdict(dict)
    for key, data, successors in finished:
        for entity, is_update, npreds in successors:
            if entity is None:
                merges[(str(stack.pk), True)][key] = None
            elif npreds == 1:
                ready.append([entity, is_update, {key: data}])
            else:
                merges[(entity, is_update)][key] = data
    stack_done = False
    for (entity, is_update), (became_ready, merged) in \
            sync_points_merge(traversal_id, merges).items():
        if not became_ready:
            continue
        if entity == str(stack.pk):
            stack_done = True
        else:
            ready.append([entity, is_update, merged])
    kept = None
    if keep and ready:
        kept, ready = ready[-keep:], ready[:-keep]
    if ready:
        nodes_enqueue(str(stack.pk), traversal_id, ready)
    return kept, stack_done


def traversal_complete(stack_id, traversal_id):
    """Every node is done: the stack's action completed."""
    with transaction.atomic():
        stack = Stack.objects.select_for_update().filter(pk=stack_id).first()
        if stack is None or stack.current_traversal != traversal_id or \
                stack.status != st.IN_PROGRESS:
            return
        action = stack.action
        stack.mark_complete()
        now = timezone.now()
        fields = {"state": stack.state,
                  "status_reason": f"Stack {action} completed successfully"}
        if action != "CREATE":  # as Heat: updated_time stays null until the first update
            fields["updated_at"] = now
        if action == "DELETE":
            fields["deleted_at"] = now
            # The engine needs the owner's Keystone trust no more (Keystone mode).
            transaction.on_commit(lambda: stack_trust_delete(stack_id))
            if not stack.parent_id:  # its stack users' project (heatweb/stack_users.py)
                transaction.on_commit(lambda: stack_project_delete(stack_id))
        if action == "UNLOCK":
            fields.update(lock_level="", lock_reason="", locked_by=None,
                          locked_by_admin=False, locked_at=None, lock_expires_at=None,
                          lock_allow=[], lock_pending=None)
        Stack.objects.filter(pk=stack.pk).update(**fields)
        stack.status_reason = fields["status_reason"]
        stack_event(stack, stack.status_reason).save()
        _finished(stack, action, traversal_id, "COMPLETE")
        _purge(stack, traversal_id, outcome="COMPLETE")
        _settled(stack)
    poke_parent_of(stack)
    log.info("stack %s %s complete", stack.name, action)


def traversal_fail(stack_id, traversal_id, reason, *, allow_rollback=True):
    """Fail the stack's current action (a resource failed, timed out, cancelled)."""
    with transaction.atomic():
        stack = Stack.objects.select_for_update().filter(pk=stack_id).first()
        if stack is None or stack.current_traversal != traversal_id or \
                stack.status != st.IN_PROGRESS:
            return
        action = stack.action
        stack.mark_failed()
        Stack.objects.filter(pk=stack.pk).update(
            state=stack.state, status_reason=reason,
            **({} if action == "CREATE" else {"updated_at": timezone.now()}))
        stack.status_reason = reason
        stack_event(stack, reason).save()
        _finished(stack, action, traversal_id, "FAILED")
        _purge(stack, traversal_id, outcome="FAILED", purge_sync_points=False)
        if allow_rollback:
            for handler in _stack_failed_handlers:
                handler(stack, action)
        _settled(stack)
    stack_stopped(stack)
    poke_parent_of(stack)
    log.info("stack %s %s failed: %s", stack.name, action, reason)


def _purge(stack, traversal_id, *, outcome, purge_sync_points=True):
    Traversal.objects.filter(pk=traversal_id).update(finished_at=timezone.now(), outcome=outcome)
    outbox_discard(traversal_id)
    breakpoints_drop(stack, traversal_id=traversal_id)
    if purge_sync_points:
        SyncPoint.objects.filter(traversal_id=traversal_id).delete()
    Resource.objects.filter(stack=stack, state="DELETE_COMPLETE").delete()


def retrigger(stack_id, entity_id):
    """A node of an older traversal finished: rerun it in the current one if ready.

    Heat's convergence: the newer traversal found this resource locked and
    skipped it; now that the lock is free, its node there runs with the
    data its predecessors left in its sync point.
    """
    stack = Stack.objects.filter(pk=stack_id).only("current_traversal", "state").first()
    if stack is None or stack.status != st.IN_PROGRESS:
        return
    rows = SyncPoint.objects.filter(traversal_id=stack.current_traversal,
                                    entity_id=str(entity_id)).order_by("-is_update")
    for row in rows:
        if set(row.predecessors) <= set(row.input_data):
            nodes_enqueue(str(stack_id), stack.current_traversal,
                          [[int(entity_id), row.is_update, row.input_data]])
            return
