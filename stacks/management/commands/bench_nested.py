"""Benchmark: one tree of nested stacks holding N resources, on ONE in-process worker.

The tree is a parent stack of K template resources (``leaf.yaml`` in the
parent's ``files``), each a child stack of N/K ``OS::Heat::None``. Every leaf
takes the parent's ``marker`` parameter through its child's parameter, so the
update (the parent's ``marker`` changed, nothing else) updates every
resource of the tree. For each N the tree is created, updated and deleted,
and per phase the command prints: time, SQL statements, Celery tasks run and
the worker's peak memory (VmHWM; the worker runs in this process, and the
peak is reset at the start of each phase).

A tree counts against ``MAX_RESOURCES_PER_STACK`` as a whole (as in Heat); the
benchmark raises that budget, in its own process only, to the largest tree.

``--shape siblings`` measures another shape through ``manage.py serve`` and
its HTTP API: a parent of N ``OS::Heat::Stack`` children of one resource
each, created, locked, unlocked and deleted (stacks/management/bench_siblings.py).
"""
import time
import uuid

from celery import signals
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.management.base import BaseCommand

from heatweb.celery import app
from heatweb.models import Project
from stacks.management.bench_siblings import print_siblings_table, run_siblings
from stacks.management.commands.bench_cloud import TaskCounter
from stacks.management.commands.bench_stacks import QueryCounter, stack_wait
from stacks.management.procs import proc_status_kb
from stacks.models import Resource, Stack
from stacks.services import lifecycle

LEAF_TYPE = "OS::Heat::None"


def leaf_template(m):
    return {"heat_template_version": "2018-08-31",
            "parameters": {"marker": {"type": "string"}},
            "resources": {f"r{j}": {"type": LEAF_TYPE,
                                    "properties": {"marker": {"get_param": "marker"}}}
                          for j in range(m)}}


def tree_template(k):
    return {"heat_template_version": "2018-08-31",
            "parameters": {"marker": {"type": "string", "default": "a"}},
            "resources": {f"c{i}": {"type": "leaf.yaml",
                                    "properties": {"marker": {"get_param": "marker"}}}
                          for i in range(k)}}


def tree_files(m):
    import yaml
    return {"leaf.yaml": yaml.safe_dump(leaf_template(m), sort_keys=False)}


def reset_peak_memory():
    """Start VmHWM again from the current RSS (Linux >= 4.0); False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def write_run_mode(stdout, detail, *, budget, needed):
    """The table's first lines: the run mode and, when the benchmark raised it, the
    resource budget."""
    db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    broker = settings.CELERY_BROKER_URL.split(":", 1)[0]
    stdout.write(f"run mode: database={db} broker={broker}; one worker (solo, in this "
                 f"process); {detail}")
    if needed > budget:
        stdout.write(f"MAX_RESOURCES_PER_STACK raised from {budget} to {needed} in this "
                     f"process (HEATWEB_MAX_RESOURCES; a tree counts as a whole)")


class Command(BaseCommand):
    help = "Create/update/delete one tree of nested stacks of N resources; print a table."

    def add_arguments(self, parser):
        parser.add_argument("--shape", choices=["tree", "siblings"], default="tree",
                            help="tree: K children of N/K resources, in-process worker; "
                                 "siblings: N child stacks of one resource, through serve")
        parser.add_argument("--sizes", default=None,
                            help="tree: resources (leaves), each a multiple of --children "
                                 "(default 100,1000,10000); siblings: child stacks "
                                 "(default 1,4,20,200)")
        parser.add_argument("--children", type=int, default=10,
                            help="child stacks in the tree (K); each holds N/K resources")
        parser.add_argument("--timeout", type=float, default=600,
                            help="seconds per phase before it is reported as reached so far")

    def handle(self, *args, **opts):
        if opts["shape"] == "siblings":
            sizes = [int(s) for s in (opts["sizes"] or "1,4,20,200").split(",")]
            rows = run_siblings(sizes, timeout=opts["timeout"], out=self.stderr.write)
            print_siblings_table(rows, self.stdout.write)
            return
        sizes = [int(s) for s in (opts["sizes"] or "100,1000,10000").split(",")]
        k = opts["children"]
        budget = settings.HEATWEB["MAX_RESOURCES_PER_STACK"]
        needed = max(sizes) + k
        if needed > budget:  # this process (and its in-process worker) only
            settings.HEATWEB["MAX_RESOURCES_PER_STACK"] = needed
        self.queries, self.tasks = QueryCounter(), TaskCounter()
        self.queries.install()
        signals.task_prerun.connect(self.tasks, weak=False)
        project, _ = Project.objects.get_or_create(name="bench-nested")
        rows = []
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                          shutdown_timeout=60, queues=[settings.CELERY_TASK_DEFAULT_QUEUE]):
            for n in sizes:
                rows.extend(self.run_size(project, n, k, opts["timeout"]))
        self.print_table(rows, k, budget, needed)

    def run_size(self, project, n, k, timeout):
        m = max(1, n // k)
        n = m * k
        name = f"bench-nested-{n}-{uuid.uuid4().hex[:6]}"
        files = tree_files(m)

        def live():
            return Stack.objects.get(project=project, name=name, deleted_at__isnull=True)

        phases = [
            ("create", lambda: lifecycle.stack_create(
                project=project, user=None, name=name, template=tree_template(k),
                files=files), "CREATE_COMPLETE"),
            ("update", lambda: lifecycle.stack_update(
                live(), template=tree_template(k), parameters={"marker": "b"}, files=files),
             "UPDATE_COMPLETE"),
            ("delete", lambda: lifecycle.stack_delete(live()), "DELETE_COMPLETE"),
        ]
        rows = []
        for phase, start, target in phases:
            reset_peak_memory()
            sql, tasks = self.queries.count, self.tasks.total()
            began = time.perf_counter()
            stack = start()
            state = self.wait(stack.pk, target, timeout)
            elapsed = time.perf_counter() - began
            row = {"n": n, "phase": phase, "state": state, "seconds": elapsed,
                   "sql": self.queries.count - sql, "tasks": self.tasks.total() - tasks,
                   "peak_mb": proc_status_kb("VmHWM") / 1024, "done": n}
            if state != target:
                row["done"] = self.reached(stack.pk, phase, n)
            rows.append(row)
            if state != target:
                break  # the next phase cannot start from here
        return rows

    def wait(self, stack_id, target, timeout):
        with self.queries.not_counted():
            return stack_wait(stack_id, target, timeout)

    def reached(self, stack_id, phase, n):
        """Leaf resources that finished the phase so far."""
        self.queries.ignored.on = True
        try:
            children = list(Stack.objects.filter(parent_id=stack_id).values_list("pk", flat=True))
            leaves = Resource.objects.filter(stack_id__in=children, type=LEAF_TYPE,
                                             replaced_by__isnull=True)
            if phase == "delete":
                live = leaves.exclude(state="DELETE_COMPLETE").filter(
                    stack__deleted_at__isnull=True).count()
                return n - live
            return leaves.filter(state=f"{phase.upper()}_COMPLETE").count()
        finally:
            self.queries.ignored.on = False

    def print_table(self, rows, k, budget, needed):
        write_run_mode(self.stdout, f"tree: 1 parent of {k} template resources, each a child "
                                    f"stack of N/{k} {LEAF_TYPE}", budget=budget, needed=needed)
        self.stdout.write("SQL: statements of the API side and the worker; peak MB: VmHWM of "
                          "the process, reset at each phase's start")
        header = (f"{'resources':>9} {'phase':<7}{'state':<17}{'seconds':>9}{'res/s':>8}"
                  f"{'SQL':>8}{'SQL/res':>8}{'tasks':>7}{'peak MB':>8}")
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for r in rows:
            done = max(r["done"], 1)
            self.stdout.write(
                f"{r['n']:>9} {r['phase']:<7}{r['state']:<17}{r['seconds']:>9.2f}"
                f"{r['done'] / r['seconds'] if r['seconds'] else 0:>8.1f}{r['sql']:>8}"
                f"{r['sql'] / done:>8.2f}{r['tasks']:>7}{r['peak_mb']:>8.0f}")
            if r["done"] != r["n"]:
                self.stdout.write(f"          (reached {r['done']} of {r['n']} resources "
                                  f"before the timeout)")
