"""No process of ``manage.py serve`` outlives the process that started it.

``kill -9`` of the web server's master used to leave its workers (then
children of PID 1) accepting on the port beside the web server the launcher
started in its place, and no kill of the serve tree reached them. Here each
kill -9 (the web master, the Celery worker's main process, the launcher
itself) is followed by a bounded wait for the killed process's children to
end, found by pid under /proc; after the launcher's kill no process of its
session is left and the port is free.
"""
import errno
import os
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import LiveService
from tests.live.test_serve_crash import answering, launched

pytestmark = pytest.mark.live

GONE_WITHIN = 60


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = LiveService(tmp_path_factory.mktemp("serve-orphans"), name="serve-orphans")
    if svc.database:
        svc.database.create()
    if svc.redis:
        svc.redis.clear_queue()
    migrated = svc.manage("migrate", "--noinput", "-v0")
    assert migrated.returncode == 0, migrated.stderr
    yield svc
    svc.stop()


@pytest.fixture
def serve(service):
    """A fresh ``manage.py serve`` (its own session); killed as a whole afterwards."""
    service._spawn("serve", [sys.executable, "manage.py", "serve", "--port", str(service.port),
                             "--concurrency", "2"])
    answering(service)
    yield service.processes["serve"][0]
    if "serve" in service.processes:
        service.kill("serve")


def processes():
    """pid -> (ppid, session id, command line) of every process now."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if fields[0] != "Z":
            table[int(stat.parent.name)] = (int(fields[1]), int(fields[3]), cmdline.strip())
    return table


def descendants(pid):
    table = processes()
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        kids = {p for p, (ppid, _, _) in table.items() if ppid == parent}
        todo += list(kids - found)
        found |= kids
    return found


def started(pid, count):
    """The descendants of ``pid`` once there are ``count`` of them (a worker forks its pool
    after the web server answers)."""
    deadline = time.monotonic() + 30
    while len(descendants(pid)) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    found = descendants(pid)
    assert len(found) >= count, f"{pid} has {len(found)} descendants, not {count}"
    return found


def wait_gone(pids, what):
    deadline = time.monotonic() + GONE_WITHIN
    left = set(pids)
    while left and time.monotonic() < deadline:
        left &= set(processes())
        time.sleep(0.2)
    assert not left, f"{what} still running {GONE_WITHIN} s later: " + "; ".join(
        f"{pid}: {processes().get(pid)}" for pid in sorted(left))


def wait_restarted(service, name, old):
    deadline = time.monotonic() + 30
    while launched(service, name) == old and time.monotonic() < deadline:
        time.sleep(0.1)
    assert launched(service, name) != old, f"the launcher did not start the {name} again"


def port_free(port):
    with socket.socket() as sock:
        try:
            sock.connect(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.ECONNREFUSED
    return False


def test_web_master_killed_its_workers_end_and_the_new_web_tier_serves_alone(service, serve):
    master = launched(service, "web")
    workers = started(master, 2)
    os.kill(master, signal.SIGKILL)
    wait_gone(workers, "the killed web master's workers are")
    wait_restarted(service, "web", master)
    answering(service)
    assert serve.poll() is None


def test_celery_main_killed_its_pool_ends(service, serve):
    worker = launched(service, "worker")
    pool = started(worker, 2)
    os.kill(worker, signal.SIGKILL)
    wait_gone(pool, "the killed worker's pool processes are")
    wait_restarted(service, "worker", worker)
    assert serve.poll() is None


def test_launcher_killed_nothing_of_its_serve_is_left_and_the_port_is_free(service, serve):
    launcher = serve.pid
    tree = started(launcher, 6)  # web master + 2 workers, worker + 2 pool processes
    os.kill(launcher, signal.SIGKILL)
    serve.wait()
    wait_gone(tree, "processes of the killed serve are")
    left = {pid: row for pid, row in processes().items() if row[1] == launcher}
    assert not left, f"processes of the killed serve's session: {left}"
    assert port_free(service.port), f"something still listens on {service.port}"
