"""Taking a resource's lock over from another engine.

A resource is locked by the engine working on it (``engine_id``, moved by
compare-and-swap on ``atomic_key``). A waiting action is continued by
whichever engine completes it (``take_over_many``); a dead holder's lock
is broken and its action marked failed (``lock_break``), or, when it was
waiting for the cloud, a live engine checks it now (``resume_waiting``).
Used by the node runner, the completions of waits and the recovery sweep.
"""
import logging

from django.db import connection
from django.db.models import F

from convergence.engines import engine_id
from convergence.models import Waiter
from convergence.waiting import wait_poke
from heatweb.celery import app
from stacks.models import Resource
from stacks.models import states as st
from stacks.models.events import resource_event

log = logging.getLogger(__name__)


def take_over_many(rows):
    """Move the locks of many resources to this engine in one statement; returns the ids now
    held here.

    The same compare-and-swap per row (its ``atomic_key`` and ``engine_id`` as
    read); ``RETURNING`` names the rows that matched, so a row another engine
    took meanwhile is left out.
    """
    if not rows:
        return set()
    me = engine_id()
    table = connection.ops.quote_name(Resource._meta.db_table)
    match, params = [], [me]
    for res in rows:
        if res.engine_id is None:
            match.append("(id = %s AND atomic_key = %s AND engine_id IS NULL)")
            params += [res.pk, res.atomic_key]
        else:
            match.append("(id = %s AND atomic_key = %s AND engine_id = %s)")
            params += [res.pk, res.atomic_key, res.engine_id]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET engine_id = %s, atomic_key = atomic_key + 1 "
                       f"WHERE {' OR '.join(match)} RETURNING id", params)
        taken = {row[0] for row in cursor.fetchall()}
    for res in rows:
        if res.pk in taken:
            res.engine_id, res.atomic_key = me, res.atomic_key + 1
    return taken


def lock_break(res, holder):
    """Clear ``holder``'s lock on ``res`` and mark the action failed.

    Returns ``(broken, action, reason)``: broken is True if it was ours to break.
    """
    action = (res.action_cookie or {}).get("action") or res.action
    reason = f"Worker went down during resource {action}"
    fields = dict(engine_id=None, atomic_key=F("atomic_key") + 1, action_cookie=None,
                  status_reason=reason)
    if action not in st.STATELESS_ACTIONS and res.status == st.IN_PROGRESS:
        res.mark_failed()
        fields["state"] = res.state
    broken = Resource.objects.filter(pk=res.pk, engine_id=holder).update(**fields)
    if broken:
        res.engine_id, res.status_reason = None, reason
        resource_event(res, reason, action=action, status=st.FAILED).save()
        log.warning("broke the lock of dead engine %s on resource %s", holder, res.pk)
    return bool(broken), action, reason


def resume_waiting(res):
    """A dead engine's resource was waiting for the cloud: have a live engine check it now.

    Its waiter is poked (or, when the engine died before writing one, its
    node polled); either takes the lock over by compare-and-swap, so
    several sweeps asking at once resume it once. False when it was not
    waiting.
    """
    running = res.action_cookie or {}
    if "cookie" not in running or not running.get("traversal"):
        return False
    if Waiter.objects.filter(pk=res.pk).exists():
        wait_poke([res.pk])
    else:
        app.send_task("convergence.poll_node",
                      args=[str(res.stack_id), running["traversal"], res.pk])
    log.warning("resource %s of dead engine %s: a live engine checks it", res.pk, res.engine_id)
    return True
