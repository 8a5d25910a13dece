"""Crashes under ``manage.py serve`` (web server and worker run by one launcher).

kill -9 of the web tier mid-create must not take the worker down: the
launcher starts the web server again and the worker goes on. kill -9 of the
whole launcher mid-create, then ``serve`` again, leaves a backlog of
messages of traversals that recovery replaces: it drains without running
them and the sweep restarts no stack whose traversal still has work
queued. Either way every stack reaches a final state and a new stack
completes promptly. Fast heartbeats and a slow simulated cloud, as in
test_chaos.py.
"""
import os
import re
import signal
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from heatclient import client as heat_client_module

from tests.conftest import LiveService, ServiceDatabase

pytestmark = pytest.mark.live

FINAL_WITHIN = 90
PROMPTLY = 20


def start_serve(svc):
    """``manage.py serve`` with the service's environment; returns once the API answers."""
    svc._spawn("serve", [sys.executable, "manage.py", "serve", "--port", str(svc.port),
                         "--concurrency", "2"])
    answering(svc)


def answering(svc):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(svc.url + "/healthz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the API does not answer: {svc.log_path('serve')}")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = LiveService(tmp_path_factory.mktemp("serve-crash"), name="serve-crash",
                      HEATWEB_HEARTBEAT="0.5", HEATWEB_DEAD_AFTER="3",
                      HEATWEB_SWEEP_EVERY_BEATS="1", HEATWEB_RELAY_SECONDS="0.5",
                      HEATWEB_WAIT_MIN_SECONDS="0.2", HEATWEB_WAIT_MAX_SECONDS="0.5",
                      HEATWEB_SIM_CREATE_SECONDS="0.3", HEATWEB_SIM_BOOT_SECONDS="0.5")
    if svc.database:
        svc.database.create()
    if svc.redis:
        svc.redis.clear_queue()
    migrated = svc.manage("migrate", "--noinput", "-v0")
    assert migrated.returncode == 0, migrated.stderr
    start_serve(svc)
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def hc(service):
    info = service.issue_token(f"sc-{uuid.uuid4().hex[:6]}", f"sc-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


@pytest.fixture
def db(service):
    database = ServiceDatabase(service)
    yield database
    database.close()


def servers(count, *, nested=0):
    """``count`` servers in a chain, and ``nested`` child stacks of one server each."""
    server = {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}}
    resources = {f"s{i}": {**server, **({"depends_on": f"s{i - 1}"} if i else {})}
                 for i in range(count)}
    child = '{"heat_template_version": "2016-10-14", "resources": {"s": %s}}' % \
        str(server).replace("'", '"')
    resources.update({f"c{i}": {"type": "OS::Heat::Stack", "properties": {"template": child}}
                      for i in range(nested)})
    return {"heat_template_version": "2016-10-14", "resources": resources}


def children(pid):
    """Pids whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def launched(service, name):
    """The pid of the launcher's newest ``name`` child, from its log."""
    pids = re.findall(rf"started {name} \(pid (\d+)\)", service.log_path("serve").read_text())
    return int(pids[-1])


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def create_many(hc, prefix, count, template):
    names = [f"{prefix}{uuid.uuid4().hex[:6]}-{i}" for i in range(count)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: hc.stacks.create(stack_name=n, template=template), names))
    return names


def wait_final(hc, names, timeout=FINAL_WITHIN):
    deadline = time.monotonic() + timeout
    states = {}
    while time.monotonic() < deadline:
        states = {n: hc.stacks.get(n).stack_status for n in names}
        if not any(s.endswith("IN_PROGRESS") for s in states.values()):
            return states
        time.sleep(0.5)
    raise AssertionError(f"not final within {timeout} s: {states}")


def a_new_stack_completes_promptly(hc):
    name = f"after-{uuid.uuid4().hex[:6]}"
    hc.stacks.create(stack_name=name, template={"heat_template_version": "2016-10-14",
                                                "resources": {"r": {"type": "OS::Heat::None"}}})
    assert wait_final(hc, [name], timeout=PROMPTLY) == {name: "CREATE_COMPLETE"}


def mid_create(db, prefix):
    """Wait until some servers of the ``prefix`` stacks are being made."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        made = db.rows("SELECT COUNT(*) FROM stacks_resource r JOIN stacks_stack s "
                       "ON s.id = r.stack_id WHERE s.name LIKE %s AND r.state LIKE %s",
                       f"{prefix}%", "CREATE_%")[0][0]
        if made >= 5:
            return
        time.sleep(0.02)
    raise AssertionError("no server was being made")


def test_web_tier_killed_mid_create_the_worker_goes_on_and_every_stack_completes(service, hc,
                                                                                  db):
    worker, web = launched(service, "worker"), launched(service, "web")
    names = create_many(hc, "webkill", 8, servers(3, nested=2))
    mid_create(db, "webkill")
    for pid in [web, *children(web)]:  # gunicorn's master and its workers
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while launched(service, "web") == web and time.monotonic() < deadline:
        time.sleep(0.1)
    assert launched(service, "web") != web, "the launcher did not start the web server again"
    assert alive(worker), "the worker went down with the web server"
    assert service.processes["serve"][0].poll() is None
    answering(service)
    assert wait_final(hc, names) == {n: "CREATE_COMPLETE" for n in names}
    a_new_stack_completes_promptly(hc)


def test_whole_launcher_killed_mid_create_then_served_again_every_stack_ends(service, hc, db):
    names = create_many(hc, "allkill", 12, servers(4, nested=3))
    mid_create(db, "allkill")
    service.kill("serve")  # kill -9 of its process group: launcher, web server, worker, pool
    start_serve(service)
    states = wait_final(hc, names)
    assert set(states.values()) <= {"CREATE_COMPLETE", "CREATE_FAILED"}, states
    a_new_stack_completes_promptly(hc)
    # The sweep restarted each stack at most once or twice, not again and again.
    traversals = db.rows("SELECT s.name, COUNT(t.id) FROM stacks_stack s JOIN "
                         "convergence_traversal t ON t.stack_id = s.id WHERE s.name LIKE %s "
                         "AND s.parent_id IS NULL GROUP BY s.name", "allkill%")
    assert max(count for _, count in traversals) <= 3, traversals
