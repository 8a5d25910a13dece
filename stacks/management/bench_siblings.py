"""``bench_nested --shape siblings``: a parent of N ``OS::Heat::Stack`` children, through ``serve``.

Each child holds one ``OS::Heat::None``. The service runs as a user runs
it (``manage.py serve``: gunicorn and a Celery worker of two pool
processes, in this run mode's database and broker, on a free port), and
the phases go through the HTTP API as a client sends them: create, lock
(level ``stacks``, which walks every child), unlock, delete. Per phase the
table shows the seconds until the parent reached its final state (read
from the database every 20 ms), the tasks the worker received (from its log)
and the CPU seconds the service's processes used (web server, worker and
its pool, from /proc): on a shared machine the wall time is only readable
next to the CPU time, and a phase whose wall time is far above its CPU
time over the cores it had was waiting, not working.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import requests
from django.conf import settings
from django.core.management.base import CommandError

from heatweb.tokens import token_issue
from stacks.management.procs import TICKS, processes
from stacks.models import Stack

POLL_SECONDS = 0.02
RECEIVED = re.compile(r"\[worker\].*Task (\S+)\[[^\]]+\] received")
PHASES = [("create", "CREATE_COMPLETE"), ("lock", "LOCK_COMPLETE"),
          ("unlock", "UNLOCK_COMPLETE"), ("delete", "DELETE_COMPLETE")]


def siblings_template(n):
    child = {"heat_template_version": "2018-08-31",
             "resources": {"none": {"type": "OS::Heat::None"}}}
    return {"heat_template_version": "2018-08-31",
            "resources": {f"c{i}": {"type": "OS::Heat::Stack",
                                    "properties": {"template": json.dumps(child)}}
                          for i in range(n)}}


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """``manage.py serve`` on a free port with this process's environment; its log in a file."""

    def __init__(self):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="bench-siblings-", suffix=".log",
                                               delete=False)
        self.process = None

    def __enter__(self):
        env = {**os.environ, "HEATWEB_DATA_DIR": str(settings.DATA_DIR),
               "DJANGO_SETTINGS_MODULE": "heatweb.settings"}
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=settings.BASE_DIR, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if "ready." in self.log_text():  # the Celery worker consumes
                try:
                    if requests.get(f"{self.url}/healthz", timeout=2).ok:
                        return self
                except requests.RequestException:
                    pass
            time.sleep(0.2)
        self.__exit__()
        raise CommandError(f"serve did not start; log in {self.log.name}")

    def __exit__(self, *exc):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=60)

    def log_text(self):
        with open(self.log.name, errors="replace") as log:
            return log.read()

    def tasks_received(self):
        return len(RECEIVED.findall(self.log_text()))

    def cpu_seconds(self):
        """CPU seconds (user + system) of serve and every process under it."""
        procs = {proc.pid: proc for proc in processes()}
        tree = {self.process.pid}
        grew = True
        while grew:
            grew = False
            for pid, proc in procs.items():
                if proc.ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        return sum(procs[pid].cpu_ticks for pid in tree if pid in procs) / TICKS


class Client:
    def __init__(self, url, project_name):
        token, project = token_issue(username=f"bench-{uuid.uuid4().hex[:6]}",
                                     project_name=project_name, role="member", ttl_hours=None)
        self.base = f"{url}/v1/{project.pk}"
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "Content-Type": "application/json"})

    def call(self, method, path, body=None):
        resp = self.session.request(method, self.base + path, json=body, timeout=60)
        if resp.status_code >= 400 and resp.status_code != 404:
            raise CommandError(f"{method} {path}: {resp.status_code} {resp.text[:300]}")
        return resp

    def wait(self, stack_id, target, timeout):
        """The stack's state once final, read from the database (no load on the web server)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            row = Stack.objects.filter(pk=stack_id).values_list("state", "deleted_at").first()
            state = "DELETE_COMPLETE" if row is None or row[1] else row[0]
            if state == target or state.endswith("FAILED"):
                return state
            time.sleep(POLL_SECONDS)
        return "TIMEOUT"


def run_siblings(sizes, *, timeout, out):
    """Run the phases for each N against a fresh ``serve``; returns the table's rows."""
    rows = []
    with Served() as served:
        client = Client(served.url, f"bench-siblings-{uuid.uuid4().hex[:6]}")
        for n in sizes:
            rows.extend(_run_size(client, served, n, timeout))
            out(_row_text(rows[-4:]) if len(rows) >= 4 else "")
    out(f"serve's log (web and worker): {served.log.name}")
    return rows


def _run_size(client, served, n, timeout):
    name = f"siblings-{n}-{uuid.uuid4().hex[:6]}"
    rows, path, stack_id = [], None, None
    for phase, target in PHASES:
        received, cpu = served.tasks_received(), served.cpu_seconds()
        began = time.perf_counter()
        if phase == "create":
            resp = client.call("POST", "/stacks", {"stack_name": name,
                                                   "template": siblings_template(n)})
            stack_id = resp.json()["stack"]["id"]
            path = f"/stacks/{name}/{stack_id}"
        elif phase == "delete":
            client.call("DELETE", path)
        else:
            body = {"lock": {"level": "stacks"}} if phase == "lock" else {"unlock": None}
            client.call("POST", path + "/actions", body)
        state = client.wait(stack_id, target, timeout)
        rows.append({"n": n, "phase": phase, "state": state,
                     "seconds": time.perf_counter() - began,
                     "tasks": served.tasks_received() - received,
                     "cpu": served.cpu_seconds() - cpu})
        if state != target:
            break
    return rows


def _row_text(rows):
    return "  ".join(f"{r['phase']} {r['seconds']:.2f}s" for r in rows)


def print_siblings_table(rows, write):
    db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    broker = settings.CELERY_BROKER_URL.split(":", 1)[0]
    write(f"run mode: database={db} broker={broker}; manage.py serve (web + one worker of 2 "
          f"pool processes); a parent of N OS::Heat::Stack children of one OS::Heat::None")
    write("seconds: request sent until the parent's final state (read from the database every 20 ms); "
          "tasks: tasks the worker received in the phase; cpu: CPU seconds of the service's "
          f"processes in the phase; load average at the end: {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    by_n = {}
    for r in rows:
        by_n.setdefault(r["n"], {})[r["phase"]] = r
    header = f"{'N':>5}" + "".join(f"{p:>9}{'tasks':>6}{'cpu':>6}" for p, _ in PHASES)
    write(header)
    write("-" * len(header))
    for n, phases in by_n.items():
        line = f"{n:>5}"
        for p, target in PHASES:
            r = phases.get(p)
            if r is None:
                line += f"{'-':>9}{'-':>6}{'-':>6}"
            elif r["state"] != target:
                line += f"{r['state'][:8]:>9}{r['tasks']:>6}{r['cpu']:>6.1f}"
            else:
                line += f"{r['seconds']:>9.2f}{r['tasks']:>6}{r['cpu']:>6.1f}"
        write(line)
