"""Recovering from dead engines: taking up their work, failing stalled stacks.

A dead engine's work is run again by a live one. A resource that was
waiting for its action to complete (its ``action_cookie`` has a cookie)
is polled on by a live engine, which takes the lock over. A resource
whose action was starting is marked ``<ACTION>_FAILED`` "Worker went down
during resource <ACTION>" (both in ``convergence.takeover``, which the node
runner uses too when it meets a dead engine's lock) and its node runs
again at once in the current traversal, with the input its lock recorded
(the plugin's create is idempotent, so the cloud object a crashed create
made is found again); lock and unlock walks fail the stack instead, so
that unlock can bring it back. Messages the dead worker took from the broker go back to the queue
after the visibility timeout (``heatweb.broker.broker_restore_unacked``).
A stack in progress that nobody works on (no lock, no waiter, no task
due, no event for ``RESTART_AFTER_SECONDS``: a task was lost between two
nodes) has its action started over in a new traversal
(``stacks.services.restart``). One that holds no live engine's lock and
has written no event for ``STALL_SECONDS`` is failed with a reason. A
stack paused on a hook (``convergence.breakpoints``) is neither: it waits
for a user.
Neither happens while the broker still holds a task of the stack's
current traversal: its work is late (a backlog after a crash), not lost,
and restarting it only added traversals and stale messages to the backlog.
"""
import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from convergence.breakpoints import paused_stack_ids
from convergence.engines import dead_engines, engine_alive, engine_row_alive, live_engines
from convergence.models import Engine, OutboxMessage, Traversal, Waiter
from convergence.services import nodes_enqueue, retrigger, traversal_fail
from convergence.takeover import lock_break, resume_waiting
from convergence.waiting import rounds_revive
from heatweb.broker import broker_queued_tasks, broker_restore_unacked
from heatweb.celery import app
from heatweb.exceptions import Conflict
from stacks.models import Event, Resource, Stack
from stacks.models import states as st

log = logging.getLogger(__name__)
MAX_RESTARTS = 3
# Tasks whose second argument is a traversal id.
TRAVERSAL_TASKS = {"convergence.converge_nodes", "convergence.poll_node",
                   "convergence.waits_complete", "convergence.traversal_finish",
                   "convergence.stack_timeout"}

# More work for every sweep, registered by the apps at start (the stacks app
# expires locks and verifies physical locks): convergence imports no stack service.
_sweep_handlers = []


def on_sweep(handler):
    """Call ``handler()`` at the end of every sweep (an error in it is logged, not raised)."""
    if handler not in _sweep_handlers:
        _sweep_handlers.append(handler)


def recover_resource(res, holder):
    """Take up a dead holder's work on ``res``: poll on, or run its node again (or fail a lock walk)."""
    if resume_waiting(res):
        return
    running = res.action_cookie or {}
    broken, action, reason = lock_break(res, holder)
    if not broken:
        return
    stack = Stack.objects.filter(pk=res.stack_id).first()
    if stack is None or stack.status != st.IN_PROGRESS:
        return
    entity = running.get("entity")
    if action in st.STATELESS_ACTIONS or stack.action in st.STATELESS_ACTIONS:
        traversal_fail(stack.pk, stack.current_traversal,
                       f"Resource {action} failed: {reason}")
    elif entity and running.get("traversal") == stack.current_traversal:
        nodes_enqueue(str(stack.pk), stack.current_traversal,
                      [[entity[0], entity[1], running.get("input") or {}]])
    else:
        retrigger(stack.pk, entity[0] if entity else res.pk)


def engine_locks_release(engine):
    """Take up the work of one dead ``engine`` now (Django admin's action), as the sweep would.

    Refused with a Conflict while the engine is alive: its locks are its
    work in progress. Returns how many resource locks were taken up.
    """
    if engine_row_alive(engine):
        raise Conflict(f"Engine {engine.pk} is alive: its locks were kept.")
    held = list(Resource.objects.filter(engine_id=engine.pk))
    for res in held:
        recover_resource(res, engine.pk)
    return len(held)


def sweep():
    """Take up the work of dead engines; fail stacks nobody is working on."""
    dead = dead_engines()
    if dead:
        Engine.objects.filter(pk__in=dead).update(stopped_at=timezone.now())
    for res in Resource.objects.filter(engine_id__isnull=False).exclude(
            engine_id__in=live_engines()):
        recover_resource(res, res.engine_id)
    broker_restore_unacked(app)
    rounds_revive()
    queued = QueuedTraversals()
    _restart_quiet(queued)
    _fail_stalled(queued)
    for handler in _sweep_handlers:
        try:
            handler()
        except Exception:  # noqa: BLE001 - one handler's failure must not stop the others
            log.exception("sweep handler %s", getattr(handler, "__name__", handler))


# How a quiet stack's action starts over (a stack service): registered by the
# stacks app at start, as convergence imports no stack service.
_restarter = {}


def on_stack_quiet(restart, *, actions):
    """Call ``restart(stack_id, reason=...)`` for a quiet stack whose action is in ``actions``."""
    _restarter.update(restart=restart, actions=tuple(actions))


class QueuedTraversals:
    """The traversals the broker holds tasks of, listed once per sweep and only when asked."""

    def __init__(self):
        self._ids = None
        self._listed = False

    def __contains__(self, traversal_id):
        if not self._listed:
            self._listed = True
            tasks = broker_queued_tasks(app)
            if tasks is not None:
                self._ids = {args[1] for name, args in tasks
                             if name in TRAVERSAL_TASKS and len(args) > 1}
        return self._ids is not None and traversal_id in self._ids


def _restart_quiet(queued=None):
    """Start over the action of a stack in progress that nobody works on (a task was lost).

    Quiet: no event for ``RESTART_AFTER_SECONDS``, no resource locked (a
    dead engine's locks are taken up above), no waiter, no outbox row due,
    no child in progress and no task of its traversal in the broker. At
    most ``MAX_RESTARTS`` per action; after that the stall sweep fails the stack.
    """
    queued = queued or QueuedTraversals()
    if not _restarter:
        return
    restart, restartable = _restarter["restart"], _restarter["actions"]
    quiet = settings.HEATWEB["RESTART_AFTER_SECONDS"]
    now = timezone.now()
    limit = now - timedelta(seconds=quiet)
    for stack in Stack.objects.filter(state__in=[f"{a}_IN_PROGRESS" for a in restartable],
                                      deleted_at__isnull=True, action_started_at__lt=limit):
        if _worked_on(stack, since=limit, now=now) or stack.current_traversal in queued:
            continue
        traversals = Traversal.objects.filter(stack=stack,
                                              created_at__gte=stack.action_started_at).count()
        if traversals > MAX_RESTARTS:
            continue
        log.warning("stack %s: %s was quiet for %s s; restarting its traversal", stack.pk,
                    stack.action, quiet)
        restart(stack.pk, reason=f"Stack {stack.action} restarted: no engine "
                                                 f"worked on it for {quiet:.0f} s")


def _worked_on(stack, *, since, now):
    last = Event.objects.filter(stack=stack).aggregate(at=Max("created_at"))["at"]
    return bool(last and last >= since) or \
        Resource.objects.filter(stack=stack, engine_id__isnull=False).exists() or \
        Waiter.objects.filter(stack_id=stack.pk).exists() or \
        OutboxMessage.objects.filter(stack_id=stack.pk, due_at__lte=now).exists() or \
        _children_busy(stack) or bool(paused_stack_ids([stack.pk]))


def _fail_stalled(queued=None):
    queued = queued or QueuedTraversals()
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
        if any(engine_alive(h) for h in holders) or _children_busy(stack) or \
                paused_stack_ids([stack.pk]) or stack.current_traversal in queued:
            continue  # busy, paused on a hook until a user clears it, or its work is queued
        traversal_fail(stack.pk, stack.current_traversal,
                       f"Stack {stack.action} stalled: no engine made progress for {stall:.0f} s")


def _children_busy(stack):
    return Stack.objects.filter(parent=stack, deleted_at__isnull=True,
                                state__in=st.IN_PROGRESS_STATES).exists()
