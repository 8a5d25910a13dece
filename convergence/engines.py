"""Engines: every worker process is one, with an id, a heartbeat and a liveness check.

An engine registers itself the first time it asks for its id and then
beats from a daemon thread every ``ENGINE_HEARTBEAT_SECONDS``; one that has
not beaten for ``ENGINE_DEAD_AFTER_SECONDS`` is dead. A second thread
relays the outbox (``convergence.outbox``) every ``RELAY_SECONDS``, so a
task a dead writer never published goes out, and runs the sweep
(``convergence.recovery``, registered with ``on_sweep_due`` at start, as it
imports this module) every ``SWEEP_EVERY_BEATS`` heartbeat intervals, so
the work of dead engines is taken up again and stalled stacks are failed
even when no request comes. Every worker pool process is an engine from its
start (``engine_start``, connected to Celery's signals by the app's
``ready``).
"""
import logging
import os
import socket
import threading
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from convergence.models import Engine
from convergence.outbox import outbox_relay
from heatweb.celery import app

log = logging.getLogger(__name__)
_identity = {}
# The recovery sweep the engine's second thread runs: registered at start
# (``convergence.apps``), as the sweep imports this module.
_sweeps = []


def on_sweep_due(sweep):
    """Call ``sweep()`` every ``SWEEP_EVERY_BEATS`` heartbeat intervals, from every engine."""
    if sweep not in _sweeps:
        _sweeps.append(sweep)


def engine_start(**kwargs):
    """Every pool process is an engine: register it and start its heartbeat at once
    (Celery's ``worker_process_init``)."""
    engine_id()


def worker_node_remember(sender, instance, **kwargs):
    """The worker's node name (``w1@host``), inherited by its pool processes for pings
    (Celery's ``celeryd_after_setup``)."""
    os.environ["HEATWEB_WORKER_NODE"] = str(sender)


def engine_id():
    """This process's engine id; a forked child gets its own and registers it."""
    pid = os.getpid()
    if _identity.get("pid") != pid:
        _identity.update(pid=pid, id=f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}")
        _register(_identity["id"], pid)
    return _identity["id"]


def _register(ident, pid):
    node = os.environ.get("HEATWEB_WORKER_NODE") or socket.gethostname()
    Engine.objects.update_or_create(
        pk=ident, defaults={"hostname": node, "pid": pid,
                            "last_heartbeat": timezone.now(), "stopped_at": None})
    if settings.HEATWEB.get("ENGINE_HEARTBEAT_THREAD", True):
        # Two threads: a beat never waits behind a sweep or a publish to a
        # broker that is down (which would make a live engine look dead).
        threading.Thread(target=_every, args=(pid, settings.HEATWEB["ENGINE_HEARTBEAT_SECONDS"],
                                              lambda: _beat(ident)),
                         daemon=True, name="heatweb-heartbeat").start()
        threading.Thread(target=_every, args=(pid, settings.HEATWEB["RELAY_SECONDS"],
                                              _recovery_tick()),
                         daemon=True, name="heatweb-recovery").start()


def _every(pid, seconds, work):
    stop = threading.Event()
    while not stop.wait(seconds):
        if os.getpid() != pid:
            return  # a forked copy of the thread's process: its own engine runs its own
        try:
            close_old_connections()
            work()
        except Exception:  # noqa: BLE001 - the thread must survive a busy database or broker
            log.exception("engine %s", threading.current_thread().name)
        finally:
            # obsolete (CONN_MAX_AGE 0: always) before the wait, not after it: a waiting
            # thread then holds no connection
            close_old_connections()


def _beat(ident):
    Engine.objects.filter(pk=ident).update(last_heartbeat=timezone.now())


def _recovery_tick():
    """Relay the outbox every tick; sweep every ``SWEEP_EVERY_BEATS`` heartbeat intervals."""
    sweep_every = settings.HEATWEB["ENGINE_HEARTBEAT_SECONDS"] * \
        settings.HEATWEB.get("SWEEP_EVERY_BEATS", 1)
    last_sweep = [time.monotonic()]

    def tick():
        outbox_relay()
        if time.monotonic() - last_sweep[0] >= sweep_every:
            last_sweep[0] = time.monotonic()
            for sweep in _sweeps:
                sweep()

    return tick


def engine_alive(ident):
    """True when the engine beat recently (this process's own engine always is).

    In doubt (no beat for two intervals, not yet past the dead threshold),
    its worker is pinged through Celery's control channel: no answer within
    a second means dead now rather than later.
    """
    if ident == _identity.get("id") and _identity.get("pid") == os.getpid():
        return True
    engine = Engine.objects.filter(pk=ident).only("hostname", "last_heartbeat",
                                                  "stopped_at").first()
    return engine is not None and engine_row_alive(engine)


def engine_row_alive(engine):
    """``engine_alive`` for an Engine row already loaded (e.g. a list in admin)."""
    if engine.stopped_at is not None:
        return False
    age = (timezone.now() - engine.last_heartbeat).total_seconds()
    if age > settings.HEATWEB["ENGINE_DEAD_AFTER_SECONDS"]:
        return False
    if age > 2 * settings.HEATWEB["ENGINE_HEARTBEAT_SECONDS"] and "@" in engine.hostname:
        return _worker_answers(engine.hostname)
    return True


def _worker_answers(node):
    try:
        return bool(app.control.ping(destination=[node], timeout=1.0))
    except Exception:  # noqa: BLE001 - an unreachable broker is no proof of death
        log.exception("pinging %s", node)
        return True


def dead_engines():
    limit = timezone.now() - timedelta(seconds=settings.HEATWEB["ENGINE_DEAD_AFTER_SECONDS"])
    return list(Engine.objects.filter(stopped_at__isnull=True, last_heartbeat__lt=limit)
                .values_list("pk", flat=True))


def live_engines():
    """Ids of engines not stopped that beat within the dead-engine window (a queryset)."""
    limit = timezone.now() - timedelta(seconds=settings.HEATWEB["ENGINE_DEAD_AFTER_SECONDS"])
    return Engine.objects.filter(stopped_at__isnull=True, last_heartbeat__gte=limit).values("pk")
