"""Benchmark: create, update, update again unchanged ("same") and delete stacks of N
OS::Heat::None resources.

With ``--heat-base BASE`` each shape and size also runs on upstream Heat 27 (the
yardstick of ``scripts/heat-yardstick-up BASE``, through its API with a Keystone
token, its state read from its database every 50 ms as heatweb's is), and the table
gets Heat's seconds and heatweb's speed-up beside them.

Runs on whichever run mode the environment selects (SQLite + filesystem
broker, or PostgreSQL + Redis). By default the engine runs in this process
as a real Celery worker thread consuming from the real broker, so every SQL
statement of the API-side service and of the worker is counted.
"""
from contextlib import contextmanager, nullcontext
import resource as rusage
import threading
import os
import time
import uuid

from celery import signals
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection
from django.db.backends.signals import connection_created

from heatweb.celery import app
from heatweb.models import Project
from stacks.management.bench_api_heat import HeatSide
from stacks.models import Stack
from stacks.services import lifecycle


class QueryCounter:
    """Counts SQL statements on every database connection of this process."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        self.ignored = threading.local()  # the benchmark's own polling is not counted

    def __call__(self, execute, sql, params, many, context):
        if not getattr(self.ignored, "on", False):
            with self.lock:
                self.count += 1
        return execute(sql, params, many, context)

    @contextmanager
    def not_counted(self):
        """The benchmark's own reading, not counted."""
        self.ignored.on = True
        try:
            yield
        finally:
            self.ignored.on = False

    def install(self):
        connection_created.connect(self._wrap, weak=False)
        if connection.connection is not None:
            self._wrap(connection=connection)

    def _wrap(self, sender=None, connection=None, **kwargs):
        if self not in connection.execute_wrappers:
            connection.execute_wrappers.append(self)


def template(n, *, chain, marker="a"):
    resources = {}
    for i in range(n):
        props = {"marker": marker}
        res = {"type": "OS::Heat::None", "properties": props}
        if chain and i:
            res["depends_on"] = f"r{i - 1}"
        resources[f"r{i}"] = res
    return {"heat_template_version": "2018-08-31", "resources": resources}


def stack_wait(stack_id, target, timeout):
    """The stack's state once it is ``target`` or failed, or "TIMEOUT"."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()
        if state == target or (state or "").endswith("FAILED"):
            return state
        time.sleep(0.05)
    return "TIMEOUT"


class Command(BaseCommand):
    help = "Create/update/delete stacks of N OS::Heat::None resources and print a table."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", default="10,100,1000")
        parser.add_argument("--shapes", default="independent,chain")
        parser.add_argument("--external-workers", action="store_true",
                            help="don't start an in-process worker; use running workers "
                                 "(then only API-side SQL is counted)")
        parser.add_argument("--timeout", type=float, default=900)
        parser.add_argument("--heat-base",
                            help="also run each phase on the Heat 27 of scripts/heat-yardstick-up "
                                 "BASE, and print its seconds beside heatweb's")
        parser.add_argument("--cloud-base",
                            default=os.environ.get("HEATWEB_CLOUD_BASE", "/tmp/heatweb-cloud"))

    def handle(self, *args, **opts):
        counter = QueryCounter()
        counter.install()
        counter.tasks = 0

        def task_started(**kwargs):
            with counter.lock:
                counter.tasks += 1

        signals.task_prerun.connect(task_started, weak=False)
        project, _ = Project.objects.get_or_create(name="bench")
        rows = []
        worker = None
        if not opts["external_workers"]:
            worker = start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                                  shutdown_timeout=30,
                                  queues=[settings.CELERY_TASK_DEFAULT_QUEUE])
            worker.__enter__()
        heat_side = HeatSide(opts["heat_base"], cloud_base=opts["cloud_base"]) \
            if opts["heat_base"] else nullcontext()
        try:
            with heat_side as heat:
                for shape in opts["shapes"].split(","):
                    for n in [int(s) for s in opts["sizes"].split(",")]:
                        found = self.run_one(project, n, shape, counter, opts["timeout"])
                        if heat is not None:
                            self.run_on_heat(heat, found, opts["timeout"])
                        rows.extend(found)
        finally:
            if worker is not None:
                worker.__exit__(None, None, None)
        self.print_table(rows)

    @staticmethod
    def run_on_heat(heat, rows, timeout):
        """The same phases of the same templates on Heat 27: its seconds into ``rows``."""
        n, chain = rows[0]["n"], rows[0]["shape"] == "chain"
        name = f"bench-{rows[0]['shape']}-{n}-{uuid.uuid4().hex[:6]}"
        stack_id = None
        for row in rows:
            began = time.perf_counter()
            if row["phase"] == "create":
                stack_id = heat.create(name, template(n, chain=chain))
            elif row["phase"] in ("update", "same"):
                # Heat's convergence stores UPDATE_IN_PROGRESS before its API answers 202.
                heat.update(stack_id, name, template(n, chain=chain, marker="b"))
            else:
                heat.delete(stack_id, name)
            target = {"create": "CREATE_COMPLETE", "delete": "DELETE_COMPLETE"}.get(
                row["phase"], "UPDATE_COMPLETE")
            row["heat_state"] = heat.wait_for(stack_id, target, timeout=timeout)
            row["heat_seconds"] = time.perf_counter() - began

    def run_one(self, project, n, shape, counter, timeout):
        chain = shape == "chain"
        name = f"bench-{shape}-{n}-{uuid.uuid4().hex[:6]}"
        results = []
        phases = [
            ("create", lambda: lifecycle.stack_create(
                project=project, user=None, name=name, template=template(n, chain=chain)),
             "CREATE_COMPLETE"),
            ("update", lambda: lifecycle.stack_update(
                Stack.objects.get(project=project, name=name, deleted_at__isnull=True),
                template=template(n, chain=chain, marker="b")), "UPDATE_COMPLETE"),
            # the same template again: nothing to converge, no resource node runs
            ("same", lambda: lifecycle.stack_update(
                Stack.objects.get(project=project, name=name, deleted_at__isnull=True),
                template=template(n, chain=chain, marker="b")), "UPDATE_COMPLETE"),
            ("delete", lambda: lifecycle.stack_delete(
                Stack.objects.get(project=project, name=name, deleted_at__isnull=True)),
             "DELETE_COMPLETE"),
        ]
        stack_id = None
        for phase, start, target in phases:
            before, tasks_before = counter.count, counter.tasks
            began = time.perf_counter()
            stack = start()
            stack_id = stack.pk
            counter.ignored.on = True
            state = stack_wait(stack_id, target, timeout)
            counter.ignored.on = False
            elapsed = time.perf_counter() - began
            queries = counter.count - before
            peak_mb = rusage.getrusage(rusage.RUSAGE_SELF).ru_maxrss / 1024
            results.append({"shape": shape, "n": n, "phase": phase, "state": state,
                            "seconds": elapsed, "per_sec": n / elapsed if elapsed else 0,
                            "queries": queries, "q_per_res": queries / n, "peak_mb": peak_mb,
                            "tasks": counter.tasks - tasks_before})
        return results

    def print_table(self, rows):
        db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        broker = settings.CELERY_BROKER_URL.split(":", 1)[0]
        self.stdout.write(f"run mode: database={db} broker={broker}")
        heat = any("heat_seconds" in r for r in rows)
        header = (f"{'shape':<12}{'N':>6} {'phase':<8}{'state':<17}{'seconds':>9}"
                  f"{'res/s':>9}{'queries':>9}{'q/res':>7}{'tasks':>7}{'peak MB':>9}"
                  + (f"{'Heat 27 s':>11}{'x Heat':>8}  Heat state" if heat else ""))
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for r in rows:
            self.stdout.write(
                f"{r['shape']:<12}{r['n']:>6} {r['phase']:<8}{r['state']:<17}"
                f"{r['seconds']:>9.2f}{r['per_sec']:>9.1f}{r['queries']:>9}"
                f"{r['q_per_res']:>7.2f}{r['tasks']:>7}{r['peak_mb']:>9.0f}"
                + (f"{r['heat_seconds']:>11.2f}{r['heat_seconds'] / r['seconds']:>8.1f}"
                   f"  {r['heat_state']}" if "heat_seconds" in r else ""))
