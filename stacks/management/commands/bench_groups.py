"""Benchmark: a ResourceGroup and an AutoScalingGroup of N members, on ONE in-process worker.

For each shape and size the group (the only resource of its stack) is
created, scaled by +10 % (``count`` / ``desired_capacity`` updated), scaled
to half of N, and deleted. Per phase the command prints: time, SQL
statements (in all and per member changed), Celery tasks, the bytes stored
on the group's own resource row (``attributes_data`` + ``plugin_data``, as
JSON) and the peak memory of the API-side call ("web") and of the rest of
the phase ("worker"). The worker runs in this process: the peak (VmHWM) is
reset before the API-side call, read when it returns, reset again and read
when the phase is over.

Shapes: ``rg`` and ``asg`` hold ``OS::Heat::None`` members; ``rg-servers``
holds ``OS::Nova::Server`` members of the simulated cloud, each taking
``--cloud-latency`` seconds to boot (and to delete).

The members count against ``MAX_RESOURCES_PER_STACK`` (``HEATWEB_MAX_RESOURCES``)
as a whole tree (as in Heat); the benchmark raises it, in its own process
only, to the largest group when it is lower.
"""
import json
import time
import uuid

from celery import signals
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.management.base import BaseCommand

from heatweb.celery import app
from heatweb.models import Project
from stacks.management.commands.bench_cloud import LATENCY_SETTINGS, TaskCounter
from stacks.management.commands.bench_nested import reset_peak_memory, write_run_mode
from stacks.management.commands.bench_stacks import QueryCounter, stack_wait
from stacks.management.procs import proc_status_kb
from stacks.models import Resource, Stack
from stacks.services import lifecycle

SHAPES = ("rg", "asg", "rg-servers")


def group_template(shape, size):
    """The stack: one group called ``group`` of ``size`` members."""
    if shape == "asg":
        group = {"type": "OS::Heat::AutoScalingGroup",
                 "properties": {"min_size": 0, "max_size": max(size, 1) * 2,
                                "desired_capacity": size,
                                "resource": {"type": "OS::Heat::None",
                                             "properties": {"marker": "m"}}}}
    else:
        member = {"type": "OS::Heat::None", "properties": {"marker": "m-%index%"}} \
            if shape == "rg" else \
            {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny",
                                                        "name": "s-%index%"}}
        group = {"type": "OS::Heat::ResourceGroup",
                 "properties": {"count": size, "resource_def": member}}
    return {"heat_template_version": "2018-08-31", "resources": {"group": group}}


def phases(n):
    """(phase, group size after it, members changed by it)."""
    grown = n + max(1, n // 10)
    half = n // 2
    return [("create", n, n), ("grow", grown, grown - n), ("shrink", half, grown - half),
            ("delete", 0, half)]


class Command(BaseCommand):
    help = "Create/grow/shrink/delete resource and auto scaling groups of N members; a table."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", default="1000,10000")
        parser.add_argument("--shapes", default="rg,asg",
                            help=f"comma-separated, of {', '.join(SHAPES)}")
        parser.add_argument("--cloud-latency", type=float, default=3.0,
                            help="rg-servers: seconds for a server to boot or be deleted")
        parser.add_argument("--timeout", type=float, default=900,
                            help="seconds per phase before it is reported as timed out")

    def handle(self, *args, **opts):
        sizes = [int(s) for s in opts["sizes"].split(",")]
        shapes = [s for s in opts["shapes"].split(",") if s]
        for shape in shapes:
            if shape not in SHAPES:
                raise SystemExit(f"unknown shape {shape} (one of {', '.join(SHAPES)})")
        for key in LATENCY_SETTINGS:
            settings.HEATWEB[key] = opts["cloud_latency"]
        budget = settings.HEATWEB["MAX_RESOURCES_PER_STACK"]
        needed = max(phases(n)[1][1] for n in sizes) + 1
        if needed > budget:  # this process (and its in-process worker) only
            settings.HEATWEB["MAX_RESOURCES_PER_STACK"] = needed
        self.queries, self.tasks = QueryCounter(), TaskCounter()
        self.queries.install()
        signals.task_prerun.connect(self.tasks, weak=False)
        project, _ = Project.objects.get_or_create(name="bench-groups")
        rows = []
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                          shutdown_timeout=60, queues=[settings.CELERY_TASK_DEFAULT_QUEUE]):
            for shape in shapes:
                for n in sizes:
                    rows.extend(self.run_group(project, shape, n, opts["timeout"]))
        self.print_table(rows, budget, needed, opts)

    def run_group(self, project, shape, n, timeout):
        name = f"bench-{shape}-{n}-{uuid.uuid4().hex[:6]}"

        def live():
            return Stack.objects.get(project=project, name=name, deleted_at__isnull=True)

        def start(phase, size):
            if phase == "create":
                return lifecycle.stack_create(project=project, user=None, name=name,
                                              template=group_template(shape, size))
            if phase == "delete":
                return lifecycle.stack_delete(live())
            return lifecycle.stack_update(live(), template=group_template(shape, size))

        rows = []
        for phase, size, changed in phases(n):
            target = f"{'UPDATE' if phase in ('grow', 'shrink') else phase.upper()}_COMPLETE"
            reset_peak_memory()
            sql, tasks = self.queries.count, self.tasks.total()
            began = time.perf_counter()
            stack = start(phase, size)
            web_mb = proc_status_kb("VmHWM") / 1024
            reset_peak_memory()
            state = self.wait(stack.pk, target, timeout)
            elapsed = time.perf_counter() - began
            row = {"shape": shape, "n": n, "phase": phase, "size": size, "state": state,
                   "seconds": elapsed, "sql": self.queries.count - sql,
                   "tasks": self.tasks.total() - tasks, "changed": max(changed, 1),
                   "web_mb": web_mb, "worker_mb": proc_status_kb("VmHWM") / 1024,
                   "stored": self.stored_bytes(stack.pk)}
            rows.append(row)
            if state != target:
                break  # the next phase cannot start from here
            if phase == "create":
                rows.append(self.show(stack.pk, shape=shape, n=n, size=size))
        return rows

    def show(self, stack_id, *, shape, n, size):
        """The group's resource show: its attributes (refs, refs_map, ...) as the API lists
        them, read as a reader's request would (counted like the phases)."""
        from stacks.selectors import resource_attributes

        reset_peak_memory()
        sql = self.queries.count
        began = time.perf_counter()
        row = Resource.objects.get(stack_id=stack_id, name="group", replaced_by__isnull=True)
        shown = resource_attributes(row)
        elapsed = time.perf_counter() - began
        peak = proc_status_kb("VmHWM") / 1024
        return {"shape": shape, "n": n, "phase": "show", "size": size,
                "state": f"{len(shown.get('refs') or [])} refs", "seconds": elapsed,
                "sql": self.queries.count - sql, "tasks": 0, "changed": n, "web_mb": peak,
                "worker_mb": peak, "stored": len(json.dumps(shown))}

    def wait(self, stack_id, target, timeout):
        with self.queries.not_counted():
            return stack_wait(stack_id, target, timeout)

    def stored_bytes(self, stack_id):
        """JSON bytes of the group row's attributes_data + plugin_data (0 once deleted)."""
        with self.queries.not_counted():
            row = Resource.objects.filter(stack_id=stack_id, name="group",
                                          replaced_by__isnull=True).exclude(
                state="DELETE_COMPLETE").values("attributes_data", "plugin_data").first()
            return sum(len(json.dumps(v)) for v in row.values()) if row else 0

    def print_table(self, rows, budget, needed, opts):
        write_run_mode(self.stdout, f"rg-servers: {opts['cloud_latency']} s per server "
                                    f"transition", budget=budget, needed=needed)
        self.stdout.write("SQL/m: SQL statements per member created, added, removed or deleted; "
                          "stored: JSON bytes of the group row's attributes_data + plugin_data "
                          "after the phase (show: of the attributes shown); show: the group's "
                          "resource show's attributes, read once; web/worker MB: VmHWM during "
                          "the API-side call / the rest of the phase")
        header = (f"{'shape':<11}{'N':>6} {'phase':<7}{'size':>6} {'state':<17}{'seconds':>8}"
                  f"{'SQL':>8}{'SQL/m':>7}{'tasks':>6}{'stored':>9}{'web MB':>7}{'wrk MB':>7}")
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for r in rows:
            self.stdout.write(
                f"{r['shape']:<11}{r['n']:>6} {r['phase']:<7}{r['size']:>6} {r['state']:<17}"
                f"{r['seconds']:>8.2f}{r['sql']:>8}{r['sql'] / r['changed']:>7.2f}"
                f"{r['tasks']:>6}{r['stored']:>9}{r['web_mb']:>7.0f}{r['worker_mb']:>7.0f}")
