"""Benchmark: stacks of N servers on a slow cloud, on ONE in-process worker.

Creates, suspends, resumes and deletes a stack of N ``OS::Nova::Server``
with every cloud transition taking ``--cloud-latency`` seconds, and prints
per phase: time, Celery tasks run, cloud API calls and SQL statements, and
the same counts per second over the window in which every server waited
(all N resources waiting, none completed yet). During the create of the
largest size it also creates a small unrelated stack on the same worker and
prints how long that took.

The cloud is the configured one: the simulated cloud (``--cloud-latency``
sets its transition times), or with ``HEATWEB_CLOUD=openstack`` a real cloud
(``OS_CLOUD``; ``--image``/``--flavor`` name what it has). On a real cloud
the latencies are the cloud's own, and the HTTP requests the driver sends
(every service, Keystone included) are counted too.

``--profile DIR`` writes a cProfile (CPU time: ``time.thread_time``) of each
phase's worker tasks and of its API-side call to ``DIR/<N>-<phase>-worker.pstats``
and ``-api.pstats`` (the profiler's own cost inflates the time columns; the
function-call counts are load-independent).

``--workers N`` adds N-1 Celery worker processes (solo pool, same broker and
queue, the same cloud latencies) beside the in-process one; the tasks, SQL
and cloud columns then count the in-process worker's share only.
"""
import contextlib
import cProfile
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter

from celery import signals
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.core.management.base import BaseCommand

from convergence.models import Waiter
from heatweb.celery import app
from heatweb.models import Project
from stacks.cloud.metered import CLOUD_CALLS
from stacks.management.commands.bench_stacks import QueryCounter, stack_wait
from stacks.models import Stack
from stacks.services import lifecycle

LATENCY_SETTINGS = ("SIM_BOOT_SECONDS", "SIM_DELETE_SECONDS", "SIM_SUSPEND_SECONDS",
                    "SIM_RESUME_SECONDS")


def servers_template(n, *, image="cirros", flavor="m1.tiny"):
    return {"heat_template_version": "2018-08-31", "resources": {
        f"s{i}": {"type": "OS::Nova::Server", "properties": {"image": image, "flavor": flavor}}
        for i in range(n)}}


def real_cloud():
    return not settings.HEATWEB.get("CLOUD_DRIVER", "").endswith("SimulatedCloud")


class HttpCounter:
    """HTTP requests sent through keystoneauth sessions (openstacksdk's) in this process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0

    def install(self):
        from keystoneauth1 import session as ks_session

        original = ks_session.Session.request
        counter = self

        def request(session, *args, **kwargs):
            with counter.lock:
                counter.count += 1
            return original(session, *args, **kwargs)

        ks_session.Session.request = request


class TaskCounter:
    """Celery tasks started in this process, by name, and the CPU time they took."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_name = Counter()
        self.cpu = 0.0
        self.started = threading.local()

    def __call__(self, sender=None, **kwargs):
        with self.lock:
            self.by_name[getattr(sender, "name", "?")] += 1
        self.started.at = time.thread_time()

    def finished(self, sender=None, **kwargs):
        spent = time.thread_time() - getattr(self.started, "at", time.thread_time())
        with self.lock:
            self.cpu += spent

    def total(self):
        with self.lock:
            return sum(self.by_name.values())


class PhaseProfiles:
    """A CPU profile per phase of the worker's tasks (the worker's thread) and of the
    phase's API-side call (``--profile``)."""

    def __init__(self, folder):
        self.folder, self.phase, self.profiles, self.running = folder, None, {}, None
        os.makedirs(folder, exist_ok=True)
        signals.task_prerun.connect(self._task_began, weak=False)
        signals.task_postrun.connect(self._task_ended, weak=False)

    def _profile(self, side):
        return self.profiles.setdefault(f"{self.phase}-{side}", cProfile.Profile(time.thread_time))

    def _task_began(self, **kwargs):
        if self.phase and threading.current_thread() is not threading.main_thread():
            self.running = self._profile("worker")
            self.running.enable()

    def _task_ended(self, **kwargs):
        if self.running is not None:
            self.running.disable()
            self.running = None

    @contextlib.contextmanager
    def api(self):
        profile = self._profile("api")
        profile.enable()
        try:
            yield
        finally:
            profile.disable()

    def dump(self):
        for name, profile in self.profiles.items():
            profile.dump_stats(os.path.join(self.folder, f"{name}.pstats"))


class Meters:
    """The three counts, read together."""

    def __init__(self, queries, tasks, http=None):
        self.queries, self.tasks, self.http = queries, tasks, http
        self.api_cpu = 0.0  # CPU of the API-side calls (the phases' start), this thread

    def read(self):
        total, by_name = CLOUD_CALLS.snapshot()
        with self.tasks.lock:
            rounds = self.tasks.by_name["convergence.poll_round"]
        with self.tasks.lock:
            cpu = self.tasks.cpu
        return {"cpu": cpu + self.api_cpu,
                "tasks": self.tasks.total(), "cloud": total, "sql": self.queries.count,
                "rounds": rounds, "lists": by_name["server_list"],
                "http": self.http.count if self.http else 0}


def diff(after, before):
    return {k: after[k] - before[k] for k in after}


class Command(BaseCommand):
    help = "Create/suspend/resume/delete stacks of N servers with cloud latency; print a table."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", default="100,1000")
        parser.add_argument("--cloud-latency", type=float, default=3.0,
                            help="seconds for every server transition (boot, suspend, ...)")
        parser.add_argument("--api-latency", type=float, default=0.0,
                            help="seconds added to every cloud API call")
        parser.add_argument("--timeout", type=float, default=600)
        parser.add_argument("--image", default=None,
                            help="image name (default: cirros; heatweb-tiny on a real cloud)")
        parser.add_argument("--flavor", default="m1.tiny")
        parser.add_argument("--workers", type=int, default=1,
                            help="worker processes in all (the in-process one counted)")
        parser.add_argument("--profile", default=None, metavar="DIR",
                            help="write a CPU profile of each phase's tasks and API call here")

    def handle(self, *args, **opts):
        self.verbosity = opts["verbosity"]
        self.real = real_cloud()
        self.image = opts["image"] or ("heatweb-tiny" if self.real else "cirros")
        self.flavor = opts["flavor"]
        http = None
        if self.real:
            http = HttpCounter()
            http.install()
        else:
            for key in LATENCY_SETTINGS:
                settings.HEATWEB[key] = opts["cloud_latency"]
            settings.HEATWEB["SIM_API_SECONDS"] = opts["api_latency"]
        queries, tasks = QueryCounter(), TaskCounter()
        queries.install()
        signals.task_prerun.connect(tasks, weak=False)
        signals.task_postrun.connect(tasks.finished, weak=False)
        self.meters = Meters(queries, tasks, http)
        self.profiles = PhaseProfiles(opts["profile"]) if opts["profile"] else None
        self.queries = queries
        project, _ = Project.objects.get_or_create(name="bench-cloud")
        rows, extras = [], []
        sizes = [int(s) for s in opts["sizes"].split(",")]
        self.workers = max(1, opts["workers"])
        others = self._start_other_workers(opts)
        try:
            with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                              shutdown_timeout=60, queues=[settings.CELERY_TASK_DEFAULT_QUEUE]):
                for n in sizes:
                    rows.extend(self.run_size(project, n, opts["timeout"],
                                              small=n == max(sizes), extras=extras))
        finally:
            for process in others:
                process.terminate()
            for process in others:
                process.wait(timeout=60)
            if self.profiles:
                self.profiles.dump()
        self.print_table(rows, extras, opts)

    def _start_other_workers(self, opts):
        """``--workers`` - 1 Celery workers beside the in-process one, ready when this returns."""
        count = max(1, opts["workers"]) - 1
        if not count:
            return []
        env = dict(os.environ)
        if not self.real:
            for key in LATENCY_SETTINGS:
                env[f"HEATWEB_{key}"] = str(opts["cloud_latency"])
            env["HEATWEB_SIM_API_SECONDS"] = str(opts["api_latency"])
        queue = settings.CELERY_TASK_DEFAULT_QUEUE
        processes = [subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "heatweb", "worker", "--pool", "solo",
             "-Q", queue, "-n", f"bench{i}@%h", "--loglevel", "WARNING"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for i in range(count)]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            replies = app.control.ping(timeout=1.0) or []
            if sum(1 for reply in replies for name in reply if name.startswith("bench")) >= count:
                return processes
        for process in processes:
            process.terminate()
        raise RuntimeError(f"{count} extra workers did not answer within 60 s")

    def run_size(self, project, n, timeout, *, small, extras):
        name = f"bench-cloud-{n}-{uuid.uuid4().hex[:6]}"

        def live():
            return Stack.objects.get(project=project, name=name, deleted_at__isnull=True)

        phases = [
            ("create", lambda: lifecycle.stack_create(project=project, user=None, name=name,
                                                      template=servers_template(
                                                          n, image=self.image,
                                                          flavor=self.flavor)),
             "CREATE_COMPLETE"),
            ("suspend", lambda: lifecycle.stack_suspend(live()), "SUSPEND_COMPLETE"),
            ("resume", lambda: lifecycle.stack_resume(live()), "RESUME_COMPLETE"),
            ("delete", lambda: lifecycle.stack_delete(live()), "DELETE_COMPLETE"),
        ]
        rows = []
        for phase, start, target in phases:
            before = self.meters.read()
            if self.profiles:
                self.profiles.phase = f"{n}-{phase}"
            began = time.perf_counter()
            api_began = time.thread_time()
            with self.profiles.api() if self.profiles else contextlib.nullcontext():
                stack = start()
            self.meters.api_cpu += time.thread_time() - api_began
            watch = WaitWindow(self, stack.pk, n,
                               small=(project, extras) if small and phase == "create" else None)
            state = watch.until(target, timeout)
            elapsed = time.perf_counter() - began
            total = diff(self.meters.read(), before)
            if self.verbosity > 1:
                self.stdout.write(f"{phase}: {watch.timeline(began)}")
            rows.append({"n": n, "phase": phase, "state": state, "seconds": elapsed,
                         **total, "window": watch.window()})
        return rows

    def print_table(self, rows, extras, opts):
        db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        broker = settings.CELERY_BROKER_URL.split(":", 1)[0]
        if self.real:
            where = (f"real cloud: OpenStack (OS_CLOUD={settings.HEATWEB.get('OS_CLOUD')}), "
                     f"image {self.image}, flavor {self.flavor}")
        else:
            where = (f"cloud latency {opts['cloud_latency']} s per transition, "
                     f"{opts['api_latency']} s per API call")
        workers = "one worker (solo)" if self.workers == 1 else \
            (f"{self.workers} workers (solo; the tasks, SQL and cloud columns count the "
             f"in-process one's share)")
        self.stdout.write(f"run mode: database={db} broker={broker}; {workers}; {where}")
        self.stdout.write("wait window: while all N resources waited (none complete yet); "
                          "per second = counts in the window / its length")
        self.stdout.write("cpu s: CPU seconds of the API-side call and of the worker's tasks "
                          "(not the benchmark's own polling)")
        self.stdout.write("rounds: poll-round tasks; lists: server_list calls (one list "
                          "call for every waiting server of the project)")
        if self.real:
            self.stdout.write("cloud: calls to the cloud driver; http: HTTP requests they sent "
                              "(Nova, Glance, Keystone, ...)")
        http = self.real
        header = (f"{'N':>5} {'phase':<8}{'state':<18}{'seconds':>8}{'cpu s':>7}{'tasks':>7}"
                  f"{'rounds':>7}"
                  f"{'cloud':>7}{'lists':>6}" + (f"{'http':>6}" if http else "") +
                  f"{'SQL':>8}{'SQL/res':>8} | {'window s':>8}"
                  f"{'tasks/s':>8}{'cloud/s':>8}" + (f"{'http/s':>8}" if http else "") +
                  f"{'SQL/s':>8}")
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for r in rows:
            w = r["window"]
            per = (lambda k: f"{w[k] / w['seconds']:>8.1f}") if w and w["seconds"] > 0 else \
                (lambda k: f"{'-':>8}")
            self.stdout.write(
                f"{r['n']:>5} {r['phase']:<8}{r['state']:<18}{r['seconds']:>8.2f}{r['cpu']:>7.2f}"
                f"{r['tasks']:>7}{r['rounds']:>7}{r['cloud']:>7}{r['lists']:>6}" +
                (f"{r['http']:>6}" if http else "") +
                f"{r['sql']:>8}{r['sql'] / r['n']:>8.2f} | "
                f"{(w['seconds'] if w else 0):>8.2f}{per('tasks')}{per('cloud')}" +
                (per("http") if http else "") + per("sql"))
        for line in extras:
            self.stdout.write(line)


class WaitWindow:
    """Follows one phase: its end state, and the counts while every resource waited."""

    def __init__(self, command, stack_id, n, *, small=None):
        self.command, self.stack_id, self.n, self.small = command, stack_id, n, small
        self.start = self.end = None

    def until(self, target, timeout):
        deadline = time.monotonic() + timeout
        queries = self.command.queries
        while time.monotonic() < deadline:
            queries.ignored.on = True  # the benchmark's own look is not counted
            state = Stack.objects.filter(pk=self.stack_id).values_list("state",
                                                                       flat=True).first()
            waiting = Waiter.objects.filter(stack_id=self.stack_id).count()
            queries.ignored.on = False
            self._sample(waiting)
            if state == target or (state or "").endswith("FAILED"):
                return state
            time.sleep(0.02)
        return "TIMEOUT"

    def _sample(self, waiting):
        now = (time.perf_counter(), self.command.meters.read())
        if waiting >= self.n and self.start is None:
            self.start = now
            if self.small:
                self._small_stack(*self.small)
        elif self.start is not None and self.end is None and waiting < self.n:
            self.end = now

    def timeline(self, began):
        """Seconds from the phase's start to: all N waiting, the first one done."""
        marks = [(label, mark[0] - began) for label, mark in
                 (("all waiting", self.start), ("first done", self.end)) if mark]
        return ", ".join(f"{label} at {seconds:.2f} s" for label, seconds in marks)

    def window(self):
        if self.start is None or self.end is None:
            return None
        counts = diff(self.end[1], self.start[1])
        return {"seconds": self.end[0] - self.start[0], **counts}

    def _small_stack(self, project, extras):
        """While N servers build, a small unrelated stack on the same worker."""
        template = {"heat_template_version": "2018-08-31", "resources": {
            f"r{i}": {"type": "OS::Heat::None"} for i in range(3)}}
        began = time.perf_counter()
        stack = lifecycle.stack_create(project=project, user=None,
                                       name=f"bench-small-{uuid.uuid4().hex[:6]}",
                                       template=template)
        self.command.queries.ignored.on = True
        state = stack_wait(stack.pk, "CREATE_COMPLETE", 60)
        self.command.queries.ignored.on = False
        extras.append(f"small unrelated stack (3 OS::Heat::None) created while {self.n} "
                      f"servers waited: {state} in {time.perf_counter() - began:.2f} s")
