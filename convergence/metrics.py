"""Per-process counts of SQL statements, Celery tasks and cloud API calls, for benchmarks.

Off unless ``HEATWEB_BENCH_METRICS_DIR`` is set when a worker starts. Then
every engine process counts the statements run on its database connections
(any thread, heartbeat included) and the tasks it starts, and keeps
``<dir>/<pid>.json`` up to date from a daemon thread (at most every
``FLUSH_SECONDS``, only when a count changed) and at shutdown. Another
process (``manage.py bench_engines``) sums the files before and after a
phase.

``heatweb/celery.py`` connects ``metrics_from_environment`` to
``worker_process_init`` only when the variable is set. Celery sends that in every
prefork pool process and, with ``--pool solo``, in the worker process itself.
``worker_init`` is not used: it fires in the prefork parent before it forks,
and the parent runs no tasks.
"""
import json
import os
import threading
from pathlib import Path

from celery import signals
from django.db import connections
from django.db.backends.signals import connection_created

from stacks.cloud.metered import CLOUD_CALLS

ENV = "HEATWEB_BENCH_METRICS_DIR"
FLUSH_SECONDS = 0.2


class ProcessMetrics:
    """The running totals of one process and the file they are written to."""

    def __init__(self, directory):
        self.pid = os.getpid()
        self.path = Path(directory) / f"{self.pid}.json"
        self.queries = 0
        self.tasks = 0
        self.cloud_base = CLOUD_CALLS.snapshot()[0]
        self.lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.stopped = threading.Event()
        self._written = None

    def __call__(self, execute, sql, params, many, context):
        """A Django execute wrapper: one statement (or one executemany) counts one."""
        with self.lock:
            self.queries += 1
        return execute(sql, params, many, context)

    def task_started(self, **kwargs):
        with self.lock:
            self.tasks += 1

    def totals(self):
        with self.lock:
            return {"pid": self.pid, "queries": self.queries, "tasks": self.tasks,
                    "cloud_calls": CLOUD_CALLS.snapshot()[0] - self.cloud_base}

    def flush(self, **kwargs):
        """Write the totals if they changed since the last write (atomically: rename)."""
        with self.write_lock:
            totals = self.totals()
            if totals == self._written:
                return
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(totals))
            os.replace(tmp, self.path)
            self._written = totals

    def flush_periodically(self):
        while not self.stopped.wait(FLUSH_SECONDS):
            self.flush()

    def wrap_connection(self, sender=None, connection=None, **kwargs):
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)


_current = {}


def metrics_install(directory):
    """Count this process's statements and tasks into ``directory``; the ProcessMetrics."""
    metrics = ProcessMetrics(directory)
    Path(directory).mkdir(parents=True, exist_ok=True)
    # Connections opened later (any thread) announce themselves; wrap this thread's now.
    connection_created.connect(metrics.wrap_connection, weak=False)
    for alias in connections:
        metrics.wrap_connection(connection=connections[alias])
    signals.task_prerun.connect(metrics.task_started, weak=False)
    signals.worker_process_shutdown.connect(metrics.flush, weak=False)
    signals.worker_shutdown.connect(metrics.flush, weak=False)
    metrics.flush()
    threading.Thread(target=metrics.flush_periodically, daemon=True,
                     name="heatweb-bench-metrics").start()
    _current["metrics"] = metrics
    return metrics


def metrics_uninstall():
    """Stop counting (tests): disconnect the signals, unwrap this thread's connections."""
    metrics = _current.pop("metrics", None)
    if metrics is None:
        return
    metrics.stopped.set()
    connection_created.disconnect(metrics.wrap_connection)
    for alias in connections:
        wrappers = connections[alias].execute_wrappers
        if metrics in wrappers:
            wrappers.remove(metrics)
    signals.task_prerun.disconnect(metrics.task_started)
    signals.worker_process_shutdown.disconnect(metrics.flush)
    signals.worker_shutdown.disconnect(metrics.flush)
    metrics.flush()


def metrics_read(directory):
    """The sums of ``queries``, ``tasks`` and ``cloud_calls`` over every process file in ``directory``."""
    sums = {"queries": 0, "tasks": 0, "cloud_calls": 0}
    for path in Path(directory).glob("*.json"):
        try:
            totals = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # replaced atomically, so only a vanished file can fail here
        for key in sums:
            sums[key] += totals.get(key, 0)
    return sums


def metrics_from_environment(**kwargs):
    """A ``worker_process_init`` receiver: install when ``HEATWEB_BENCH_METRICS_DIR`` is set."""
    if os.environ.get(ENV):
        metrics_install(os.environ[ENV])
