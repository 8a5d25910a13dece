"""An in-process Celery worker (solo pool) on the test's broker, counting the tasks it runs."""
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
