"""What the simulated cloud reads once for one engine task's calls.

The simulated cloud's services live in the worker's own database, so a read
a real cloud makes on its side (Nova choosing a server's network, the fault
injection tests use) is a statement and its CPU in the worker, once per
call: 2,000 of them for a batch of 1,000 server creates. Inside
``SimulatedCloud.task_reads()`` (the engine opens one around a task's
nodes) such a read is made once and its answer reused by the task's other
calls; anything the same task changes that it depends on forgets it. Outside
a task (the API, the tests' own calls) every call reads, as before.
"""
from contextlib import contextmanager
from contextvars import ContextVar

_READS = ContextVar("simulated_task_reads", default=None)

# The networks each project may boot a server on (``{project_id: [network id]}``).
NETWORKS_READ = "networks by project"


@contextmanager
def task_scope():
    token = _READS.set({})
    try:
        yield
    finally:
        _READS.reset(token)


def in_task():
    return _READS.get() is not None


def task_read(key, read):
    """``read()``, once per task for ``key`` (every time outside a task)."""
    reads = _READS.get()
    if reads is None:
        return read()
    if key not in reads:
        reads[key] = read()
    return reads[key]


def task_forget(key):
    """The task's answer for ``key`` is stale (the task changed what it read)."""
    reads = _READS.get()
    if reads is not None:
        reads.pop(key, None)
