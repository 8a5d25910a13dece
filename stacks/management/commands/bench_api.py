"""Benchmark: reads at 10,000 stacks through the real HTTP service, with writers.

Loads a project with ``--stacks`` stacks (a few resources and their events
each) with bulk inserts, starts ``manage.py serve`` with its defaults (the
web server and a Celery worker) on this run mode's database, and runs
``--readers`` concurrent readers for ``--seconds`` on ``--endpoints``: the
stack list (filter on status, sort by name, a page of 20), a stack's show,
its resources (and, when asked, its events and the stacks page), while
``--writers`` writers each create a stack through the API, wait for it to
complete, and create the next. Prints p50/p95/p99 per endpoint, reads per
second, the SQL statements each endpoint runs (counted in this process
through Django's test client, same views and middleware) and whether every
writer's stack completed.

The readers run on the same machine as the server, so the CPU time of
the run is printed too, split into the web server (all its processes, and
per read), the worker, the readers and writers (this process),
PostgreSQL's backends for this database (in the distributed mode) and
everything else the machine runs: on a shared machine the latencies are
only readable next to it.
"""
import http.client
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from heatweb.launcher import WEB_THREADS, WEB_WORKERS
from heatweb.models import Membership, Project, Role
from heatweb.tokens import token_issue
from stacks.management.bench_api_heat import HeatSide
from stacks.management.bench_writers import Writers
from stacks.management.procs import database_cpu_seconds
from stacks.models import Event, RawTemplate, Resource, Stack

PROJECT = "bench-api"
USER = "bench-api-reader"
WRITER = "bench-api-writer"
WRITER_TEMPLATE = {"heat_template_version": "2018-08-31",
                   "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(3)}}
DEFAULT_ENDPOINTS = "stack list,stack show,resources"
TEMPLATE = {"heat_template_version": "2018-08-31", "description": "A small stack",
            "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(3)},
            "outputs": {"first": {"value": {"get_resource": "r0"}}}}
WARM_UP_SECONDS = 3
STATES = ["CREATE_COMPLETE"] * 8 + ["UPDATE_COMPLETE", "CREATE_FAILED"]


def load(project, count, *, out):
    """Bulk-insert ``count`` stacks of 3 resources and 8 events each (unless already there)."""
    have = Stack.objects.filter(project=project, deleted_at__isnull=True).count()
    if have >= count:
        out(f"project {project.name}: {have} stacks already loaded")
        return
    raw = RawTemplate.objects.create(template=TEMPLATE, files={}, environment={})
    began = time.perf_counter()
    for start in range(have, count, 1000):
        stacks = [Stack(project=project, name=f"stack-{i:05d}", raw_template=raw,
                        state=STATES[i % len(STATES)], status_reason="Stack CREATE completed",
                        current_traversal=str(uuid.uuid4()))
                  for i in range(start, min(count, start + 1000))]
        Stack.objects.bulk_create(stacks)
        resources, events = [], []
        for stack in stacks:
            for name in TEMPLATE["resources"]:
                resources.append(Resource(stack=stack, name=name, type="OS::Heat::None",
                                          state="CREATE_COMPLETE", template=raw,
                                          physical_resource_id=uuid.uuid4().hex))
            events.append(Event(stack=stack, resource_name=stack.name,
                                resource_type="OS::Heat::Stack", resource_action="CREATE",
                                resource_status="IN_PROGRESS",
                                resource_status_reason="Stack CREATE started"))
            for name in TEMPLATE["resources"]:
                for status in ("IN_PROGRESS", "COMPLETE"):
                    events.append(Event(stack=stack, resource_name=name,
                                        resource_type="OS::Heat::None",
                                        resource_action="CREATE", resource_status=status,
                                        resource_status_reason="state changed"))
            action, status = stack.state.split("_", 1)
            events.append(Event(stack=stack, resource_name=stack.name,
                                resource_type="OS::Heat::Stack", resource_action=action,
                                resource_status=status, resource_status_reason="done"))
        Resource.objects.bulk_create(resources, batch_size=1000)
        Event.objects.bulk_create(events, batch_size=1000)
    if connection.vendor == "postgresql":
        # What autovacuum does a minute after a bulk load: without statistics
        # the planner takes the table for empty and sorts all 10,000 stacks.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    out(f"loaded {count - have} stacks in {time.perf_counter() - began:.1f} s")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu_seconds(pid, *, children=True):
    """User + system CPU seconds of a live process and its children."""
    pids = [pid]
    try:
        if children:
            pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    total = 0
    for one in pids:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def _tree_cpu_seconds(pid):
    """User + system CPU seconds of a live process and all its descendants."""
    total = _cpu_seconds(pid, children=False)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(_tree_cpu_seconds(int(child)) for child in children)


def _children(pid):
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _database_cpu_seconds():
    """CPU seconds of this database's PostgreSQL backends on this machine (0 for SQLite)."""
    if connection.vendor != "postgresql":
        return 0.0
    return database_cpu_seconds(settings.DATABASES["default"]["NAME"])


def _machine_cpu_seconds():
    """CPU seconds all CPUs of the machine spent busy (not idle or waiting) since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


class Service:
    """The real service on a free port: ``manage.py serve`` with its defaults."""

    def __init__(self):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="bench-api-serve-", suffix=".log",
                                               delete=False)
        self.process = None

    def __enter__(self):
        env = {**os.environ, "HEATWEB_DATA_DIR": str(settings.DATA_DIR),
               "HEATWEB_LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "heatweb.settings"}
        command = [sys.executable, "manage.py", "serve", "--port", str(self.port),
                   "--log-level", "warning"]
        self.process = subprocess.Popen(
            command, cwd=settings.BASE_DIR, env=env,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/healthz", timeout=2).ok:
                    return self
            except requests.RequestException:
                time.sleep(0.2)
        self.__exit__()
        raise CommandError(f"the service did not start; log in {self.log.name}")

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=60)

    def cpu_seconds(self):
        """``{"web": s, "worker": s}``: CPU seconds of serve's two children and theirs."""
        cpu = {"web": 0.0, "worker": 0.0}
        for child in _children(self.process.pid):
            try:
                line = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            cpu["web" if b"heatweb.web" in line else "worker"] += _tree_cpu_seconds(child)
        return cpu


class Command(BaseCommand):
    help = ("Load N stacks, run concurrent readers and writers through serve, print latency, "
            "SQL and CPU per read.")

    def add_arguments(self, parser):
        parser.add_argument("--stacks", type=int, default=10000)
        parser.add_argument("--readers", type=int, default=20)
        parser.add_argument("--writers", type=int, default=2)
        parser.add_argument("--seconds", type=float, default=60)
        parser.add_argument("--endpoints", default=DEFAULT_ENDPOINTS,
                            help="comma-separated, of: stack list, stack show, resources, "
                                 f"events, stacks page (default {DEFAULT_ENDPOINTS!r})")
        parser.add_argument("--heat-base",
                            help="instead of heatweb, the Heat 27 of scripts/heat-yardstick-up "
                                 "BASE, loaded with as many stacks (its own, copied in its "
                                 "database), for the same readers and writers")
        parser.add_argument("--cloud-base",
                            default=os.environ.get("HEATWEB_CLOUD_BASE", "/tmp/heatweb-cloud"),
                            help="the one-machine cloud Heat runs on (its clouds.yaml)")

    def handle(self, *args, **opts):
        if opts["heat_base"]:
            return self.handle_heat(opts)
        project, _ = Project.objects.get_or_create(name=PROJECT)
        load(project, opts["stacks"], out=self.stdout.write)
        token, _ = token_issue(username=USER, project_name=PROJECT, role=Role.READER)
        user = get_user_model().objects.get(username=USER)
        password = uuid.uuid4().hex
        user.set_password(password)
        user.save()
        Membership.objects.filter(user=user, project=project).update(role=Role.READER)
        writer_token, _ = token_issue(username=WRITER, project_name=PROJECT, role=Role.MEMBER)
        sample = list(Stack.objects.filter(project=project, deleted_at__isnull=True)
                      .order_by("?").values_list("name", "pk")[:200])
        endpoints = self.endpoints(project.pk, opts["endpoints"])
        sql = self.count_sql(endpoints, sample, token, user)
        opts["load"] = os.getloadavg()[0]  # before the run: its own 20 readers raise it
        with Service() as service:
            headers = {"X-Auth-Token": token}
            if "stacks page" in endpoints:
                signed_in = requests.Session()
                _login(signed_in, service.url, USER, password)  # once: hashing is slow
                headers["Cookie"] = "; ".join(f"{c.name}={c.value}" for c in signed_in.cookies)
            results, elapsed, cpu, window, writes = self.load_run(
                service.url, project.pk, endpoints, sample, headers, opts,
                writer_token=writer_token, states=_heatweb_states,
                cpu=lambda: self.cpu(service))
        db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
        stacks = Stack.objects.filter(project=project, deleted_at__isnull=True).count()
        self.print_table(results, elapsed, sql, opts, (
            f"run mode: database={db}; serve: web {WEB_WORKERS} workers x {WEB_THREADS} threads "
            f"and a worker; {stacks} stacks in the project"))
        self.print_cpu(cpu, window, sum(len(v) for v in results.values()),
                       database=connection.vendor == "postgresql")
        self.stdout.write(writes)

    def load_run(self, url, project_id, endpoints, sample, headers, opts, *, writer_token,
                 states, cpu):
        """``WARM_UP_SECONDS`` of the readers (not counted: a web worker's first requests
        load code and, on Heat, validate the token with Keystone), then the readers and
        writers: the readers' results and seconds, the CPU of the run (``cpu()`` before
        and after) and its seconds (until the last writer stopped), the writers' line."""
        self.readers(url, endpoints, sample, headers, readers=opts["readers"],
                     seconds=WARM_UP_SECONDS)
        before, began = cpu(), time.perf_counter()
        writers = Writers(url, project_id, writer_token, count=opts["writers"], states=states,
                          template=WRITER_TEMPLATE)
        writers.start(seconds=opts["seconds"])
        results, elapsed = self.readers(url, endpoints, sample, headers,
                                        readers=opts["readers"], seconds=opts["seconds"])
        writers.join()
        after, window = cpu(), time.perf_counter() - began
        opts["load_after"] = os.getloadavg()[0]
        return (results, elapsed, {key: after[key] - before[key] for key in after}, window,
                writers.finish(timeout=120))

    def handle_heat(self, opts):
        """The same load on Heat 27's API (``--heat-base``): heat-api for the web server,
        heat-engine for the worker, Heat's database's backends for PostgreSQL."""
        if "stacks page" in opts["endpoints"]:
            raise CommandError("--heat-base: Heat has no stacks page")
        with HeatSide(opts["heat_base"], cloud_base=opts["cloud_base"]) as heat:
            heat.load(opts["stacks"], TEMPLATE, out=self.stdout.write)
            sample = heat.sample(200)
            endpoints = self.endpoints(heat.project_id, opts["endpoints"])
            opts["load"] = os.getloadavg()[0]
            results, elapsed, cpu, window, writes = self.load_run(
                heat.url, heat.project_id, endpoints, sample, heat.headers, opts,
                writer_token=heat.token, states=heat.states,
                cpu=lambda: {**heat.cpu_seconds(), "bench": time.process_time(),
                             "machine": _machine_cpu_seconds()})
            stacks = heat.stacks()
        self.print_table(results, elapsed, None, opts, (
            f"run mode: Heat 27 (heat-api and heat-engine with their workers; "
            f"scripts/heat-yardstick-up {opts['heat_base']}), database=postgresql; {stacks} "
            "stacks in the project"))
        self.print_cpu(cpu, window, sum(len(v) for v in results.values()), database=True,
                       names=("heat-api", "heat-engine"))
        self.stdout.write(writes)

    @staticmethod
    def cpu(service):
        return {**service.cpu_seconds(), "bench": time.process_time(),
                "database": _database_cpu_seconds(), "machine": _machine_cpu_seconds()}

    @staticmethod
    def endpoints(project_id, chosen):
        v1 = f"/v1/{project_id}"
        every = {
            "stack list": lambda n, i: (f"{v1}/stacks?status=COMPLETE&sort_keys=stack_name"
                                        f"&sort_dir=asc&limit=20"),
            "stack show": lambda n, i: f"{v1}/stacks/{n}/{i}",
            "resources": lambda n, i: f"{v1}/stacks/{n}/{i}/resources",
            "events": lambda n, i: f"{v1}/stacks/{n}/{i}/events",
            "stacks page": lambda n, i: "/?status=COMPLETE",
        }
        labels = [label.strip() for label in chosen.split(",") if label.strip()]
        unknown = [label for label in labels if label not in every]
        if unknown or not labels:
            raise CommandError(f"--endpoints: unknown {unknown}; choose from {list(every)}")
        return {label: every[label] for label in labels}

    @staticmethod
    def count_sql(endpoints, sample, token, user):
        """Statements per endpoint, for two different stacks (they must be equal).

        One request first, uncounted: a new session's first page saves the
        project it shows, later ones only read.
        """
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        counts = {}
        for label, path in endpoints.items():
            client.get(path(*sample[-1]), HTTP_X_AUTH_TOKEN=token)
            seen = []
            for name, pk in sample[:2]:
                with CaptureQueriesContext(connection) as captured:
                    response = client.get(path(name, pk), HTTP_X_AUTH_TOKEN=token)
                if response.status_code != 200:
                    raise CommandError(f"{label}: HTTP {response.status_code}")
                seen.append(len(captured))
            counts[label] = seen
        return counts

    def readers(self, url, endpoints, sample, headers, *, readers, seconds):
        results = {label: [] for label in endpoints}
        errors = []
        lock = threading.Lock()
        stop = time.monotonic() + seconds
        labels = list(endpoints)
        server = urlsplit(url)

        def reader(index):
            # http.client rather than requests: the readers share the server's
            # cores, and requests cost them about twice the CPU per request.
            conn = http.client.HTTPConnection(server.hostname, server.port, timeout=60)
            rng = random.Random(index)
            turn = index
            while time.monotonic() < stop:
                label = labels[turn % len(labels)]
                turn += 1
                name, pk = rng.choice(sample)
                began = time.perf_counter()
                status = _get(conn, endpoints[label](name, pk), headers)
                took = time.perf_counter() - began
                with lock:
                    if status == 200:
                        results[label].append(took)
                    else:
                        errors.append((label, status))
            conn.close()

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(readers)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            self.stdout.write(f"errors: {len(errors)}, first: {errors[:3]}")
        return results, time.perf_counter() - began

    def print_table(self, results, elapsed, sql, opts, mode):
        total = sum(len(v) for v in results.values())
        self.stdout.write(
            f"{mode}; {opts['readers']} readers and {opts['writers']} writers for "
            f"{elapsed:.0f} s; {os.cpu_count()} CPUs; load "
            f"average {opts['load']:.2f} before the run, {opts['load_after']:.2f} at its end")
        header = (f"{'endpoint':<13}{'reads':>9}{'reads/s':>8}{'p50 ms':>8}{'p95 ms':>8}"
                  f"{'p99 ms':>8}{'max ms':>8}{'SQL/request':>13}")
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for label, times in results.items():
            times = sorted(times)
            if not times:
                continue
            p50, p95, p99 = (times[min(len(times) - 1, int(len(times) * q))] * 1000
                             for q in (0.5, 0.95, 0.99))
            counts = sql[label] if sql else ["-"]
            shown = str(counts[0]) if len(set(counts)) == 1 else "/".join(map(str, counts))
            self.stdout.write(f"{label:<13}{len(times):>9}{len(times) / elapsed:>8.1f}"
                              f"{p50:>8.1f}{p95:>8.1f}{p99:>8.1f}{times[-1] * 1000:>8.1f}"
                              f"{shown:>13}")
        self.stdout.write(f"{'all':<13}{total:>9}{total / elapsed:>8.1f}")

    def print_cpu(self, cpu, seconds, reads, *, database, names=("web server", "worker")):
        """Where the machine's CPU went during the run, per read."""
        parts = [(names[0], cpu["web"]), (names[1], cpu["worker"]),
                 ("readers and writers", cpu["bench"])]
        if database:
            parts.append(("PostgreSQL", cpu["database"]))
        parts.append(("everything else", max(0.0, cpu["machine"] - sum(s for _, s in parts))))
        self.stdout.write(
            f"CPU of the run: {cpu['machine']:.1f} s busy of {seconds * os.cpu_count():.1f} s; "
            + "; ".join(f"{name} {seconds:.1f} s ({seconds / max(reads, 1) * 1000:.2f} "
                        f"ms/read)" for name, seconds in parts))
        self.stdout.write(f"{names[0]} CPU per read: {cpu['web'] / max(reads, 1) * 1000:.2f} ms "
                          "(the writers' requests included)")


def _heatweb_states(ids):
    return list(Stack.objects.filter(pk__in=ids).values_list("state", flat=True))


def _get(conn, path, headers):
    """GET on a kept-alive connection (opened again once if the server closed it): the status."""
    for attempt in (1, 2):
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            return response.status
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            conn.close()
            if attempt == 2:
                raise


def _login(session, url, username, password):
    """Sign in to the pages (session cookie) through the login form."""
    page = session.get(f"{url}/login/", timeout=60)
    token = page.cookies.get("csrftoken") or session.cookies.get("csrftoken")
    response = session.post(f"{url}/login/", data={
        "username": username, "password": password, "csrfmiddlewaretoken": token},
        headers={"Referer": f"{url}/login/"}, timeout=60, allow_redirects=False)
    if response.status_code not in (302, 303):
        raise CommandError(f"login failed: HTTP {response.status_code}")
