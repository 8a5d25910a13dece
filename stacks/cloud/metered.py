"""Counting (and, for the simulated cloud, slowing down) every call to the cloud driver.

``get_cloud_driver()`` hands out the driver wrapped in ``MeteredCloud``: each
public method call counts one API call in ``CLOUD_CALLS`` (read by the
benchmarks and tests, and by ``convergence.metrics`` for worker processes)
and, when the driver is the simulated cloud, first waits
``HEATWEB["SIM_API_SECONDS"]`` as a real cloud's round trip would.
"""
import threading
import time
from collections import Counter

from django.conf import settings


class CallCounter:
    """API calls of this process, in total and per method name."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_name = Counter()
        self.total = 0

    def add(self, name):
        with self.lock:
            self.total += 1
            self.by_name[name] += 1

    def snapshot(self):
        with self.lock:
            return self.total, Counter(self.by_name)


CLOUD_CALLS = CallCounter()


class MeteredCloud:
    """A cloud driver whose public methods are counted (and delayed when simulated)."""

    def __init__(self, driver, *, simulated):
        self._driver = driver
        self._simulated = simulated

    @property
    def driver(self):
        return self._driver

    def for_stack(self, stack):
        return self._metered(self._driver.for_stack(stack))

    def for_user(self, user, project_id):
        return self._metered(self._driver.for_user(user, project_id))

    def task_reads(self):
        """The driver's context for one engine task's calls (not a call: not counted)."""
        return self._driver.task_reads()

    def _metered(self, bound):
        return self if bound is self._driver else MeteredCloud(bound, simulated=self._simulated)

    def __getattr__(self, name):
        attr = getattr(self._driver, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def call(*args, **kwargs):
            CLOUD_CALLS.add(name)
            latency = settings.HEATWEB.get("SIM_API_SECONDS", 0) if self._simulated else 0
            if latency:
                time.sleep(latency)  # the round trip of a real cloud API
            return attr(*args, **kwargs)

        call.__name__ = name
        return call
