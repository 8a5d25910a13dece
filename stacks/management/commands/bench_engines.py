"""Benchmark: create, update and delete one stack of N resources on 1, 2, 4 engines.

Needs the distributed run mode (PostgreSQL + Redis). For each worker count it
starts that many real ``celery -A heatweb worker --concurrency 1`` processes
on a private queue (each pool process is one engine), runs the phases through
``stacks.services.lifecycle`` and counts, across every process, the SQL
statements and the tasks run: the workers count their own through
``convergence.metrics`` (``HEATWEB_BENCH_METRICS_DIR``), this process counts
the statements of the service calls.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from convergence.metrics import ENV as METRICS_ENV
from convergence.metrics import FLUSH_SECONDS, metrics_read
from heatweb.celery import app
from heatweb.models import Project
from stacks.management.commands.bench_stacks import QueryCounter, stack_wait, template
from stacks.management.procs import processes
from stacks.models import Stack
from stacks.services import lifecycle


class EngineProcesses:
    """``count`` worker processes on one queue, started in sessions of their own."""

    def __init__(self, count, *, queue, metrics_dir, log_dir):
        self.count = count
        self.metrics_dir = metrics_dir
        self.log_dir = log_dir
        tag = uuid.uuid4().hex[:6]
        self.nodes = [f"bench{i}-{tag}@{socket.gethostname()}" for i in range(1, count + 1)]
        self.env = {**os.environ, "HEATWEB_QUEUE": queue, METRICS_ENV: str(metrics_dir),
                    "HEATWEB_DATA_DIR": str(settings.DATA_DIR), "PYTHONUNBUFFERED": "1",
                    "DJANGO_SETTINGS_MODULE": "heatweb.settings"}
        self.queue = queue
        self.processes = []

    def start(self, timeout=60):
        celery = Path(sys.executable).parent / "celery"
        for node in self.nodes:
            log = open(self.log_dir / f"{node.split('@')[0]}.log", "w")  # noqa: SIM115
            self.processes.append((subprocess.Popen(
                [str(celery), "-A", "heatweb", "worker", "-Q", self.queue, "--concurrency", "1",
                 "-l", "info", "-n", node], cwd=settings.BASE_DIR, env=self.env, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True),
                log))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(proc.poll() is not None for proc, _ in self.processes):
                break
            answered = {name for reply in app.control.ping(destination=self.nodes, timeout=1.0)
                        for name in reply}
            if answered >= set(self.nodes):
                return
        raise CommandError(f"{self.count} worker(s) did not answer a ping within {timeout} s; "
                           f"logs in {self.log_dir}")

    def pids(self):
        """Every process of the workers' sessions (main processes and pool children)."""
        groups = {proc.pid for proc, _ in self.processes}
        return [proc.pid for proc in processes() if proc.pgrp in groups]

    def peak_reset(self):
        """Reset the peak RSS of every worker process; False when the kernel refuses."""
        done = True
        for pid in self.pids():
            try:
                Path(f"/proc/{pid}/clear_refs").write_text("5")
            except OSError:
                done = False
        return done

    def peak_mb(self):
        """The highest VmHWM (peak resident set) of the worker processes, in MB."""
        peak = 0
        for pid in self.pids():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
        return peak

    def stop(self):
        """SIGTERM (warm shutdown), then SIGKILL whatever is left in each session."""
        for proc, _ in self.processes:
            if proc.poll() is None:
                _killpg(proc.pid, signal.SIGTERM)
        for proc, log in self.processes:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            _killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            log.close()
        self.processes = []


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def metrics_settled(directory, timeout=5.0):
    """The workers' sums once their files stopped changing (flushes are periodic)."""
    last = metrics_read(directory)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(3 * FLUSH_SECONDS)
        now = metrics_read(directory)
        if now == last:
            return now
        last = now
    return last


class Command(BaseCommand):
    help = ("Create/update/delete one stack of N OS::Heat::None resources on 1, 2 and 4 "
            "worker processes (PostgreSQL + Redis) and print a table.")

    def add_arguments(self, parser):
        parser.add_argument("--workers", default="1,2,4", help="worker process counts")
        parser.add_argument("--size", type=int, default=1000, help="resources in the stack")
        parser.add_argument("--timeout", type=float, default=900, help="seconds per phase")

    def handle(self, *args, **opts):
        self.require_distributed()
        counts = [int(c) for c in opts["workers"].split(",")]
        queue = f"heatweb-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.use_queue(queue)
        counter = QueryCounter()
        counter.install()
        project, _ = Project.objects.get_or_create(name="bench")
        work_dir = Path(tempfile.mkdtemp(prefix="heatweb-bench-engines-"))
        rows, peak_reset = [], True
        try:
            for count in counts:
                metrics_dir = work_dir / f"metrics-{count}"
                engines = EngineProcesses(count, queue=queue, metrics_dir=metrics_dir,
                                          log_dir=work_dir)
                try:
                    engines.start()
                    run = self.run_phases(project, engines, counter, size=opts["size"],
                                          timeout=opts["timeout"])
                finally:
                    engines.stop()
                rows.extend(run)
                peak_reset = peak_reset and all(r["peak_reset"] for r in run)
        finally:
            self.queue_delete(queue)
        if all(r["state"].endswith("COMPLETE") for r in rows):
            shutil.rmtree(work_dir, ignore_errors=True)  # else the worker logs are kept
        self.print_table(rows, size=opts["size"], peak_reset=peak_reset)

    def require_distributed(self):
        database = os.environ.get("DATABASE_URL", "")
        broker = settings.CELERY_BROKER_URL
        if not database.startswith(("postgres://", "postgresql://")) or \
                "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
            raise CommandError("bench_engines needs DATABASE_URL=postgres://... "
                               "(the workers are separate processes sharing the database)")
        if not broker.startswith(("redis://", "rediss://")):
            raise CommandError("bench_engines needs CELERY_BROKER_URL=redis://...")

    def use_queue(self, queue):
        """Send this process's tasks to ``queue`` (the workers get it as HEATWEB_QUEUE)."""
        os.environ["HEATWEB_QUEUE"] = queue
        settings.CELERY_TASK_DEFAULT_QUEUE = queue
        app.conf.task_default_queue = queue

    def queue_delete(self, queue):
        client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        try:
            client.delete(queue, f"_kombu.binding.{queue}")
        finally:
            client.close()

    def run_phases(self, project, engines, counter, *, size, timeout):
        name = f"bench-engines-{engines.count}-{uuid.uuid4().hex[:6]}"

        def current():
            return Stack.objects.get(project=project, name=name, deleted_at__isnull=True)

        phases = [
            ("create", lambda: lifecycle.stack_create(
                project=project, user=None, name=name, template=template(size, chain=False)),
             "CREATE_COMPLETE"),
            ("update", lambda: lifecycle.stack_update(
                current(), template=template(size, chain=False, marker="b")), "UPDATE_COMPLETE"),
            ("delete", lambda: lifecycle.stack_delete(current()), "DELETE_COMPLETE"),
        ]
        rows = []
        for phase, start, target in phases:
            before = metrics_settled(engines.metrics_dir)
            api_before = counter.count
            peak_reset = engines.peak_reset()
            began = time.perf_counter()
            stack = start()
            counter.ignored.on = True
            state = stack_wait(stack.pk, target, timeout)
            elapsed = time.perf_counter() - began
            after = metrics_settled(engines.metrics_dir)
            counter.ignored.on = False
            api = counter.count - api_before
            queries = after["queries"] - before["queries"] + api
            tasks = after["tasks"] - before["tasks"]
            rows.append({"workers": engines.count, "phase": phase, "state": state,
                         "seconds": elapsed, "per_sec": size / elapsed, "queries": queries,
                         "api": api, "tasks": tasks, "peak_mb": engines.peak_mb(),
                         "peak_reset": peak_reset})
            if state != target:
                self.stderr.write(f"{phase} with {engines.count} worker(s) ended {state}; "
                                  f"worker logs in {engines.log_dir}")
                break
        return rows

    def print_table(self, rows, *, size, peak_reset):
        peak = "during the phase" if peak_reset else "since the worker started"
        self.stdout.write(f"N={size} independent OS::Heat::None resources; PostgreSQL + Redis; "
                          f"{os.cpu_count()} CPUs")
        self.stdout.write("queries: SQL statements of all worker processes + this process "
                          "(api); tasks: Celery tasks run by the workers")
        self.stdout.write(f"peak MB: highest VmHWM (/proc) of the worker processes, {peak}")
        header = (f"{'workers':>7} {'phase':<7}{'state':<17}{'seconds':>8}{'res/s':>8}"
                  f"{'queries':>9}{'(api)':>7}{'q/res':>7}{'tasks':>7}{'t/res':>7}{'peak MB':>9}")
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for r in rows:
            self.stdout.write(
                f"{r['workers']:>7} {r['phase']:<7}{r['state']:<17}{r['seconds']:>8.2f}"
                f"{r['per_sec']:>8.1f}{r['queries']:>9}{r['api']:>7}"
                f"{r['queries'] / size:>7.2f}{r['tasks']:>7}{r['tasks'] / size:>7.3f}"
                f"{r['peak_mb']:>9.0f}")
