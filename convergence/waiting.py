"""Waiting resources, polled together: O(1) tasks and cloud calls per round, whatever N.

A resource whose action is not complete yet gets a ``Waiter`` row (written
in bulk at the end of the task that started the wait). One poll round per
project, a single task re-enqueued with a countdown, looks at all of them:

* waiters whose plugin declared a cloud object (``await_status``) are
  checked with one list call per kind (``server_list``,
  ``image_statuses``), ready or not;
* other waiters (nested stacks, deployments, timed waits) are due at their
  ``next_check`` and are then asked by their plugin; a deployment's signal
  or a child stack finishing pokes its waiter at once (``wait_poke``).

Ready waiters are deleted and completed in batches (``waits_complete``
tasks of ``BATCH_SIZE``), which propagate like any finished node. The
round's interval is the shortest backoff among the waiters (from
``WAIT_MIN_SECONDS`` growing to ``WAIT_MAX_SECONDS`` as a wait gets
longer), never past a waiting stack's timeout. A ``PollRound`` row per
project names the only round task that may run (its token), so there is
at most one round in flight per project; no worker ever sleeps on a wait.
"""
import logging
import time
import uuid
from collections import defaultdict

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q

from convergence.models import PollRound, Waiter
from heatweb.celery import app
from stacks.cloud import cloud_for_stack, get_cloud_driver
from stacks.models import Resource, Stack
from stacks.models import states as st

log = logging.getLogger(__name__)

# A round due within this much of the wanted time is soon enough.
SLACK_SECONDS = 0.05
# Ids per list call: a real cloud pages its lists.
LIST_CHUNK = 1000

# A wait is looked at again after this fraction of the time it has waited (a
# fifth: a 3 s boot is seen within 0.6 s of its end, a 50 s one within 10 s).
BACKOFF_DIVISOR = 5


def lost_after():
    """A round overdue this long was lost (its worker was killed): schedule a new one."""
    return settings.HEATWEB.get("ENGINE_DEAD_AFTER_SECONDS", 30) + \
        settings.HEATWEB.get("WAIT_MAX_SECONDS", 10)


def backoff(elapsed):
    """Seconds until the next look at a wait that started ``elapsed`` seconds ago."""
    low = settings.HEATWEB.get("WAIT_MIN_SECONDS", 0.5)
    high = settings.HEATWEB.get("WAIT_MAX_SECONDS", 10)
    return min(high, max(low, elapsed / BACKOFF_DIVISOR))


def unobserved(cookie):
    """The plugin's cookie without the status a poll round passed in."""
    if isinstance(cookie, dict) and ("observed" in cookie or "observed_object" in cookie):
        return {k: v for k, v in cookie.items() if k not in ("observed", "observed_object")}
    return cookie


def with_observed(cookie, status, listed):
    """The plugin's cookie with what a list call saw of its object (as it was when none)."""
    if not status or not isinstance(cookie, dict):
        return cookie
    return {**cookie, "observed": status, **({"observed_object": listed} if listed else {})}


def wait_since(res, action):
    """When the resource's current wait began (kept across re-checks of the same action)."""
    old = res.action_cookie or {}
    return old.get("since") if old.get("action") == action and old.get("since") else time.time()


def _deadline(stack):
    if not stack.timeout_mins or stack.action_started_at is None:
        return None
    return stack.action_started_at.timestamp() + \
        stack.timeout_mins * settings.HEATWEB["MINUTE_SECONDS"]


# Registering --------------------------------------------------------------------------

def wait_add(ctx, res, *, cookie, until=None):
    """Record that ``res`` waits; written by ``waits_flush`` when the task's work is saved.

    ``until``: the end of a timed wait (the plugin's ``wake_at``), when it is looked at.
    """
    now = time.time()
    since = res.action_cookie["since"]
    target = cookie.get("await") if isinstance(cookie, dict) else None
    if target or not until:
        next_check = now + backoff(now - since)
    else:
        next_check = float(until)  # a timed wait knows when it ends
    waiter = Waiter(
        resource_id=res.pk, project_id=ctx.stack.project_id, stack_id=ctx.stack.pk,
        traversal_id=ctx.traversal_id, kind=target["kind"] if target else "",
        object_id=target["id"] if target else "",
        ready_on=target.get("ready_on", []) if target else [], since=since,
        next_check=next_check, deadline=_deadline(ctx.stack), ticket=uuid.uuid4().hex)
    # Not a column: a timed wait is not poked when its child stack is done (a group
    # pausing between batches has its child done; poking it would check it again and
    # again until the pause ends).
    waiter.timed = bool(until) and not target
    ctx.waits.append(waiter)


def waits_flush(ctx):
    """Store the task's new waiters in one statement and make sure their round is coming."""
    waits, ctx.waits[:] = list(ctx.waits), []
    if not waits:
        return
    Waiter.objects.bulk_create(
        waits, update_conflicts=True, unique_fields=["resource_id"],
        update_fields=["project_id", "stack_id", "traversal_id", "kind", "object_id",
                       "ready_on", "since", "next_check", "deadline", "ticket"])
    now = time.time()
    by_project = defaultdict(list)
    for waiter in waits:
        by_project[waiter.project_id].append(_due(waiter, now))
    for project_id, dues in by_project.items():
        round_ensure(project_id, countdown=max(0.0, min(dues) - now))
    _poke_finished_children([w for w in waits if not w.kind and not getattr(w, "timed", False)])
    transaction.on_commit(lambda: _stopped_meanwhile(waits))


def _poke_finished_children(waits):
    """Poke the new waits whose child stack already finished (its poke found no waiter).

    A child can finish between its parent's first check and the commit of
    the parent's waiter; its ``poke_parent_of`` then found nothing to poke and
    the parent waited for a round (``WAIT_MIN_SECONDS``). Finished means what
    a child stack resource's check takes for done or failed (a child at
    rest in another action's state is left to the rounds, so a poke can
    never come back to itself). Two queries, only when waits are on plugins.
    """
    if not waits:
        return
    actions = {pk: (name, (cookie or {}).get("action")) for pk, name, cookie in
               Resource.objects.filter(pk__in=[w.resource_id for w in waits])
               .values_list("pk", "name", "action_cookie")}
    children = Stack.objects.filter(
        parent_id__in={w.stack_id for w in waits},
        parent_resource_name__in={name for name, _ in actions.values()},
    ).exclude(state__in=st.IN_PROGRESS_STATES, deleted_at__isnull=True)
    finished = {(parent, name, action) for parent, name, state, deleted in
                children.values_list("parent_id", "parent_resource_name", "state", "deleted_at")
                for action in _finished_actions(state, deleted)}
    ready = [w.resource_id for w in waits
             if (w.stack_id, *actions.get(w.resource_id, (None, None))) in finished]
    if ready:
        wait_poke(ready)


def _finished_actions(state, deleted):
    """The actions a child stack in ``state`` has finished (done or failed) for its parent."""
    action, _, status = state.rpartition("_")
    if deleted is not None:
        return ("DELETE",)
    if status == "COMPLETE":
        return (action,)
    if status == "FAILED":
        return (action,) if action != "ROLLBACK" else \
            ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME", "CHECK", "LOCK", "UNLOCK")
    return ()


def _due(waiter, now):
    due = waiter.next_check if not waiter.kind else now + backoff(now - waiter.since)
    if waiter.deadline is not None:
        due = min(due, waiter.deadline + SLACK_SECONDS)
    return due


# The round's single task ------------------------------------------------------------------

def _enqueue_round(project_id, token, *, countdown):
    transaction.on_commit(lambda: app.send_task(
        "convergence.poll_round", args=[project_id, token], countdown=max(0.0, countdown)))


def round_ensure(project_id, *, countdown):
    """A round of ``project_id`` runs within ``countdown`` seconds (at most one task in flight)."""
    now = time.time()
    due = now + countdown
    with transaction.atomic():
        row = PollRound.objects.select_for_update().filter(pk=project_id).first()
        if row is not None and row.started_at is None and \
                row.due_at <= due + SLACK_SECONDS and row.due_at > now - lost_after():
            return  # the scheduled round, not begun yet, comes soon enough
        # None scheduled, too late, lost, or one already running: it may have read the
        # stacks before the caller's change (seen: a lock's cancel left 50 waits waiting
        # 600 s), so a new round with a new token; the running one's reschedule is dropped.
        token = uuid.uuid4().hex
        if row is None:
            try:
                with transaction.atomic():
                    PollRound.objects.create(project_id=project_id, token=token, due_at=due)
            except IntegrityError:
                return  # another engine scheduled it just now
        else:
            PollRound.objects.filter(pk=project_id).update(token=token, due_at=due,
                                                           started_at=None)
        _enqueue_round(project_id, token, countdown=countdown)


def _round_reschedule(project_id, token):
    """After a round: the next one, at the earliest waiter's due time; none when no one waits."""
    with transaction.atomic():
        row = PollRound.objects.select_for_update().filter(pk=project_id).first()
        if row is None or row.token != token:
            return  # superseded by a sooner round
        now = time.time()
        dues = [_due(Waiter(kind=kind, since=since, next_check=next_check, deadline=deadline),
                     now)
                for kind, since, next_check, deadline in Waiter.objects.filter(
                    project_id=project_id).values_list("kind", "since", "next_check",
                                                       "deadline")]
        if not dues:
            row.delete()
            return
        countdown = max(SLACK_SECONDS, min(dues) - now)
        PollRound.objects.filter(pk=project_id).update(due_at=now + countdown, started_at=None)
        _enqueue_round(project_id, token, countdown=countdown)


def round_run(project_id, token):
    """One poll round of a project: one list call per kind, ready waiters completed in batches."""
    if not PollRound.objects.filter(pk=project_id, token=token).update(started_at=time.time()):
        return  # a stale or duplicate round task
    waiters = list(Waiter.objects.filter(project_id=project_id))
    live = {pk: (traversal, state) for pk, traversal, state in Stack.objects.filter(
        pk__in={w.stack_id for w in waiters}, deleted_at__isnull=True,
    ).values_list("pk", "current_traversal", "state")}

    def active(waiter):
        """False when the wait is to be aborted: stack gone, stopped or rolling back over it.

        A wait overtaken by a newer update keeps waiting: when its action
        completes it is retriggered in the newer traversal.
        """
        traversal, state = live.get(waiter.stack_id, (None, ""))
        if state not in st.IN_PROGRESS_STATES:
            return False
        # A lock that interrupted the action (``interrupt: cancel``) stops it where it is.
        return traversal == waiter.traversal_id or not state.startswith(("ROLLBACK", "LOCK"))

    # Every waiter is of this project: any of its stacks' trusts lists its objects.
    sample = Stack.objects.filter(pk__in=live).first()
    cloud = cloud_for_stack(sample) if sample else get_cloud_driver()
    seen = observe(cloud, [(w.kind, w.object_id) for w in waiters if w.kind and active(w)])
    now = time.time()
    ready = []
    for waiter in waiters:
        if not active(waiter):
            ready.append((waiter, None, None))  # its completion task aborts it
        elif waiter.kind:
            status, listed = seen.get((waiter.kind, waiter.object_id), (None, None))
            if status in waiter.ready_on:
                ready.append((waiter, status, listed))
        elif waiter.next_check <= now + SLACK_SECONDS:
            ready.append((waiter, None, None))
    _dispatch(ready)
    _round_reschedule(project_id, token)


def observe(cloud, targets):
    """``{(kind, object_id): (status, object)}`` for ``[(kind, object_id), ...]``.

    One list call per kind (and ``LIST_CHUNK`` ids); ``object`` is the
    server as listed (None for an image). A kind whose list call fails (the
    cloud is down) is left out.
    """
    ids = defaultdict(list)
    for kind, object_id in targets:
        ids[kind].append(object_id)
    seen = {}
    for kind, object_ids in ids.items():
        for start in range(0, len(object_ids), LIST_CHUNK):
            chunk = object_ids[start:start + LIST_CHUNK]
            try:
                found = SEERS[kind](cloud, chunk)
            except Exception:  # noqa: BLE001 - the cloud is down: the next round asks again
                log.exception("listing %s statuses", kind)
                continue
            seen.update({(kind, object_id): value for object_id, value in found.items()})
    return seen


def _servers_seen(cloud, server_ids):
    listed = cloud.server_list(server_ids)
    return {server_id: (listed[server_id]["status"], listed[server_id])
            if server_id in listed else ("DELETED", None) for server_id in server_ids}


def _images_seen(cloud, image_ids):
    return {image_id: (status, None) for image_id, status in
            cloud.image_statuses(image_ids).items()}


# Each kind of cloud object a wait may declare: ``{id: (status, object)}`` from one list call.
SEERS = {"server": _servers_seen, "image": _images_seen}


def _dispatch(ready):
    """Complete the ready waiters in batches, then remove the rows that were read.

    Sent first, removed after: a round that dies in between only makes the
    next round send them again (a completion takes the resource over by
    compare-and-swap, so one of the two does the work). Only the very rows
    read are removed (same ``ticket``), never a wait registered again
    meanwhile by a completion that found the action still running (it can
    run before the removal; a timed wait then has the same ``next_check``,
    and matching on that lost the wait: seen as a stack left IN_PROGRESS).
    """
    if not ready:
        return
    groups = defaultdict(list)
    for waiter, observed, listed in ready:
        groups[(str(waiter.stack_id), waiter.traversal_id)].append([waiter.pk, observed, listed])
    size = settings.HEATWEB["BATCH_SIZE"]
    for (stack_id, traversal_id), items in groups.items():
        for start in range(0, len(items), size):
            app.send_task("convergence.waits_complete",
                          args=[stack_id, traversal_id, items[start:start + size]])
    _remove([waiter for waiter, _, _ in ready])


def _remove(waiters):
    for start in range(0, len(waiters), 200):
        read = Q()
        for waiter in waiters[start:start + 200]:
            read |= Q(pk=waiter.pk, ticket=waiter.ticket)
        Waiter.objects.filter(read).delete()


def wait_poke(resource_ids):
    """Check these waiting resources now (a signal arrived, a child stack finished)."""
    _dispatch([(waiter, None, None)
               for waiter in Waiter.objects.filter(pk__in=list(resource_ids))])


def poke_parent_of(stack):
    """A child stack finished an action: its parent's resource need not wait for a round."""
    if not stack.parent_id:
        return
    ids = Resource.objects.filter(stack_id=stack.parent_id, name=stack.parent_resource_name,
                                  action_cookie__isnull=False).values_list("pk", flat=True)
    wait_poke(ids)


def stack_stopped(stack):
    """A stack failed, was cancelled or rolls back: a round now aborts its waiters, not later.

    Its waiters are looked for after the caller's commit: a task still storing
    the superseded traversal's waits commits them either before that look (seen
    here) or after the stop, and then its own look (``_stopped_meanwhile``) sees
    the stop.
    """
    stack_id, project_id = stack.pk, stack.project_id

    def look():
        if Waiter.objects.filter(stack_id=stack_id).exists():
            round_ensure(project_id, countdown=0)

    transaction.on_commit(look)


def _stopped_meanwhile(waits):
    """After the commit of new waits: a stack that stopped or moved on meanwhile gets its
    round now (its ``stack_stopped`` may have looked before these waits were committed,
    and their own round could be 600 s away: seen as a lock with ``interrupt: cancel``
    waiting minutes for 50 superseded waits)."""
    stacks = {pk: (traversal, state) for pk, traversal, state in Stack.objects.filter(
        pk__in={w.stack_id for w in waits}, deleted_at__isnull=True,
    ).values_list("pk", "current_traversal", "state")}
    projects = set()
    for waiter in waits:
        traversal, state = stacks.get(waiter.stack_id, (None, ""))
        if state not in st.IN_PROGRESS_STATES or traversal != waiter.traversal_id:
            projects.add(waiter.project_id)
    for project_id in projects:
        round_ensure(project_id, countdown=0)


def rounds_revive():
    """Recovery sweep: schedule again the rounds whose task was lost with a killed worker."""
    overdue = PollRound.objects.filter(due_at__lt=time.time() - lost_after())
    for project_id in overdue.values_list("project_id", flat=True):
        log.warning("poll round of project %s was lost; scheduling a new one", project_id)
        round_ensure(project_id, countdown=0)
