"""Heat's ``yaql`` function: parsing and evaluating one expression within budgets.

As in Heat (``heat.engine.hot.functions.Yaql``): the expression is parsed by
the ``yaql`` package's engine with Heat's two options, ``yaql.limitIterators``
(no collection of more than ``limit_iterators`` items, Heat's default 200) and
``yaql.memoryQuota`` (``memory_quota`` bytes for what an operation builds,
Heat's default 10000), and evaluated with ``{"data": <data>}`` as its input,
so the expression reads ``$.data``.

Those options bound what yaql builds, not how long it runs: ``range(200)``
nested four times is 1.6 billion steps within both, and ``pow(10, 10**8)`` is
one long call into C. So an expression is evaluated in a child process
(``os.fork``: the parent's parsed engine, no import or start-up) that is
killed when its time budget is spent, and whose address space is bounded;
the parent never runs the expression itself. The answer comes back as JSON.

The budget is the child's CPU time, read from ``/proc`` while it runs: on a
busy machine an expression waits for a core as long as anything else does,
and that wait is not the expression's cost (a wall-clock second refused
quick expressions under load). A wall-clock limit of many times the budget
stays as a backstop. The child never collects garbage: it lives for one
expression, and a full collection there would walk and copy-on-write the
parent's whole heap (1.6 s of CPU under a 2-million-object parent, measured),
spending the budget of a quick expression.
"""
import collections.abc  # noqa: F401  (yaql 3.2.0 uses collections.abc without importing it)
import gc
import json
import os
import resource
import select
import signal
import time
from dataclasses import dataclass

import yaql
from yaql.language import exceptions as yaql_exceptions

# The wall-clock backstop: this many times an evaluation's CPU budget, plus this much.
WALL_FACTOR, WALL_EXTRA_SECONDS = 10, 5.0
# How often the parent looks at the child's CPU time.
POLL_SECONDS = 0.05
TICKS = os.sysconf("SC_CLK_TCK")
# What the child may map beyond the parent's address space, and answer.
CHILD_EXTRA_BYTES = 256 * 1024 * 1024
MAX_ANSWER_BYTES = 4 * 1024 * 1024

_engines = {}


@dataclass(frozen=True)
class YaqlLimits:
    """Heat's ``[yaql]`` options plus heatweb's clocks (settings ``HEATWEB``)."""

    limit_iterators: int = 200
    memory_quota: int = 10000
    seconds: float = 1.0         # one evaluation
    total_seconds: float = 5.0   # all evaluations of one pass (a validation, a resolve)


class YaqlError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


def engine(limits):
    """yaql's parser with Heat's options (made once per set of options)."""
    key = (limits.limit_iterators, limits.memory_quota)
    if key not in _engines:
        _engines[key] = yaql.YaqlFactory().create({
            "yaql.limitIterators": limits.limit_iterators,
            "yaql.memoryQuota": limits.memory_quota})
    return _engines[key]


def parse(expression, limits):
    """The parsed expression; YaqlError with Heat's message when it is not yaql."""
    if not isinstance(expression, str):
        raise YaqlError('The "expression" argument to yaql must contain a string.')
    try:
        return engine(limits)(expression)
    except yaql_exceptions.YaqlException as error:
        raise YaqlError(f"Bad expression {error}.") from None
    except RecursionError:
        raise YaqlError("Bad expression: it is nested too deeply.") from None


def evaluate(expression, data, limits, *, seconds, spent=None):
    """``expression`` evaluated on ``{"data": data}``, stopped after ``seconds`` of CPU
    time; the CPU seconds it took are appended to ``spent`` (a list) when given."""
    statement = parse(expression, limits)
    kind, value, cpu = _in_child(statement, data, seconds)
    if spent is not None:
        spent.append(cpu)
    if kind == "timeout":
        raise YaqlError(f"the expression took more than {seconds:g} s and was stopped.")
    if kind != "ok":
        raise YaqlError(value)
    return value


def _in_child(statement, data, seconds):
    """(kind, value, the child's CPU seconds)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: evaluate, write the answer, leave without cleanup
        gc.disable()  # a full collection would walk (and copy) the parent's whole heap
        os.close(read_end)
        try:
            _child(statement, data, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    cpu = 0.0
    try:
        kind, value = _read_answer(read_end, pid, seconds)
    finally:
        os.close(read_end)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, _, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
    return kind, value, cpu


def _child(statement, data, write_end):
    try:
        _bound_memory()
        answer = ["ok", statement.evaluate({"data": data}, yaql.create_context())]
    except yaql_exceptions.YaqlException as error:
        answer = ["error", str(error)]
    except MemoryError:
        answer = ["error", "the expression needs more memory than allowed."]
    except Exception as error:  # noqa: BLE001  any failure of the expression is its answer
        answer = ["error", f"{type(error).__name__}: {error}"]
    try:
        text = json.dumps(answer, default=_as_json)
    except (TypeError, ValueError) as error:
        text = json.dumps(["error", f"the value cannot be used: {error}"])
    view = memoryview(text.encode())
    while view:
        view = view[os.write(write_end, view):]


def _as_json(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _bound_memory():
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = mapped + CHILD_EXTRA_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _cpu_seconds(pid):
    """The CPU time child ``pid`` has used so far (0 once it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _read_answer(read_end, pid, seconds):
    chunks, size = [], 0
    backstop = time.monotonic() + seconds * WALL_FACTOR + WALL_EXTRA_SECONDS
    while True:
        if _cpu_seconds(pid) > seconds or time.monotonic() > backstop:
            return "timeout", None
        if not select.select([read_end], [], [], POLL_SECONDS)[0]:
            continue
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return "error", f"the value is larger than {MAX_ANSWER_BYTES} bytes."
    if not chunks:
        return "error", "the expression's evaluation stopped without an answer."
    return tuple(json.loads(b"".join(chunks)))
