"""An in-process Celery worker (solo pool) on the test's broker, counting the tasks it runs;
the converge_nodes tasks the code under test sends, recorded instead of sent."""
import threading
import time
from collections import Counter

import pytest
from celery import signals
from celery.contrib.testing.worker import start_worker
from django.conf import settings

from heatweb.celery import app


class Tasks:
    def __init__(self):
        self.lock = threading.Lock()
        self.by_name = Counter()

    def __call__(self, sender=None, **kwargs):
        with self.lock:
            self.by_name[sender.name] += 1

    def snapshot(self):
        with self.lock:
            return Counter(self.by_name)


def wait_for(predicate, timeout=300, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out")


@pytest.fixture
def worker():
    tasks = Tasks()
    signals.task_prerun.connect(tasks, weak=False)
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                          shutdown_timeout=60, queues=[settings.CELERY_TASK_DEFAULT_QUEUE]):
            yield tasks
    finally:
        signals.task_prerun.disconnect(tasks)


@pytest.fixture
def converge_nodes_sent(monkeypatch):
    """The ``args`` of every ``convergence.converge_nodes`` the code under test sends
    (``[stack_id, traversal_id, node_list]``), kept here instead of going to the broker
    (the engine sends its tasks by name); other tasks are sent as usual."""
    kept = []
    send = app.send_task

    def send_task(name, args=None, **options):
        if name != "convergence.converge_nodes":
            return send(name, args, **options)
        kept.append(list(args))
        return None

    monkeypatch.setattr(app, "send_task", send_task)
    return kept
