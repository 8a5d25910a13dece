"""Crashes: kill -9 of a Celery pool child, of a Celery main process, of the web process.

A service of its own with fast heartbeats (a dead engine is noticed in
seconds) and a simulated cloud that takes its time: a server create call
answers after ``HEATWEB_SIM_CREATE_SECONDS`` (the server already exists by
then, as in a real cloud) and boots for ``HEATWEB_SIM_BOOT_SECONDS``, which
opens the windows the kills aim at. Every stack must reach COMPLETE within
60 s of the kill, and every resource must have made exactly one simulated
server. The service's database is read directly (sqlite3 / psycopg) so the
test can aim a kill within a fraction of a second.
"""
import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from heatclient import client as heat_client_module

from tests.conftest import LiveService, ServiceDatabase

pytestmark = pytest.mark.live

COMPLETE_WITHIN = 60


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = LiveService(tmp_path_factory.mktemp("chaos"), name="chaos",
                      HEATWEB_HEARTBEAT="0.5", HEATWEB_DEAD_AFTER="3",
                      HEATWEB_SWEEP_EVERY_BEATS="1", HEATWEB_RELAY_SECONDS="0.5",
                      HEATWEB_WAIT_MIN_SECONDS="0.2", HEATWEB_WAIT_MAX_SECONDS="0.5",
                      HEATWEB_SIM_CREATE_SECONDS="0.4",
                      HEATWEB_SIM_BOOT_SECONDS="0.5").start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def token(service):
    return service.issue_token(f"chaos-{uuid.uuid4().hex[:6]}", f"chaos-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def hc(token):
    return heat_client_module.Client("1", endpoint=token["endpoint"], token=token["token"])


@pytest.fixture
def db(service):
    database = ServiceDatabase(service)
    yield database
    database.close()


def chain(count):
    """``count`` servers, each depending on the one before it."""
    resources = {}
    for number in range(count):
        spec = {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}}
        if number:
            spec["depends_on"] = f"r{number - 1:03d}"
        resources[f"r{number:03d}"] = spec
    return {"heat_template_version": "2016-10-14", "resources": resources}


def new_name(prefix):
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def wait_until(what, check, timeout=30, every=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"never happened within {timeout} s: {what}")


def wait_complete(hc, name, timeout=COMPLETE_WITHIN):
    deadline = time.monotonic() + timeout
    stack = None
    while time.monotonic() < deadline:
        stack = hc.stacks.get(name)
        if stack.stack_status.endswith(("COMPLETE", "FAILED")) and \
                not stack.stack_status.endswith("IN_PROGRESS"):
            break
        time.sleep(0.3)
    assert stack.stack_status == "CREATE_COMPLETE", \
        f"{name}: {stack.stack_status} {stack.stack_status_reason}"
    return stack


def engine_pid(engine_id):
    """Engine ids are ``host:pid:random``: the pid of the pool process that holds a lock."""
    return int(engine_id.split(":")[1])


def parent_pid(pid):
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def worker_named_by_pid(service, pid):
    return next(name for name, (proc, _) in service.processes.items() if proc.pid == pid)


def test_pool_child_killed_inside_the_server_create_call_makes_the_server_once(service, hc,
                                                                               db):
    """The issue's reproduction: kill the worker creating r000 of a chain of 30 servers."""
    name = new_name("childkill")
    hc.stacks.create(stack_name=name, template=chain(30))
    # The cloud has made r000's server but the call has not answered yet.
    holder = wait_until("r000's server exists while its create call is running", lambda: (
        (row := db.resource(name, "r000")) and row[0] and not row[1]
        and db.servers_made(name).get("r000") and row[0]))
    os.kill(engine_pid(holder), signal.SIGKILL)

    wait_complete(hc, name)
    assert db.servers_made(name) == {f"r{n:03d}": 1 for n in range(30)}
    reasons = {(e.resource_name, e.resource_status_reason) for e in hc.events.list(name)}
    assert ("r000", "Worker went down during resource CREATE") in reasons
    ids = {r.resource_name: r.physical_resource_id for r in hc.resources.list(name)}
    stack_id = hc.stacks.get(name).id
    hc.stacks.delete(stack_id)
    wait_until("the stack is deleted", lambda: hc.stacks.get(stack_id).stack_status ==
               "DELETE_COMPLETE", timeout=COMPLETE_WITHIN, every=0.3)
    alive = db.rows("SELECT COUNT(*) FROM stacks_simserver WHERE name LIKE %s "
                    "AND deleted_at IS NULL", f"{name}-%")
    assert alive == [(0,)]
    assert len(set(ids.values())) == 30


def test_celery_main_killed_while_a_server_boots_is_resumed_by_the_other_worker(service,
                                                                                hc, db):
    name = new_name("mainkill")
    hc.stacks.create(stack_name=name, template=chain(5))
    # r001's server is booting: its engine waits for the cloud (polled, not slept).
    # (r000's create and boot come first: on a loaded machine, more than 30 s.)
    holder = wait_until("r001 waits for its server to boot", lambda: (
        (row := db.resource(name, "r001")) and row[0] and row[1]
        and row[2] == "CREATE_IN_PROGRESS" and row[0]), timeout=COMPLETE_WITHIN)
    main = parent_pid(engine_pid(holder))
    worker = worker_named_by_pid(service, main)
    os.kill(main, signal.SIGKILL)  # its pool processes die with it (PDEATHSIG)
    service.kill(worker)  # reap it

    wait_complete(hc, name)  # run by the worker that is still alive
    assert db.servers_made(name) == {f"r{n:03d}": 1 for n in range(5)}
    states = {r.resource_name: r.resource_status for r in hc.resources.list(name)}
    assert set(states.values()) == {"CREATE_COMPLETE"}
    service.start_worker(f"w-{uuid.uuid4().hex[:4]}")


def test_a_process_killed_between_its_commit_and_its_publish_strands_nothing(service, hc,
                                                                             db, token):
    """kill -9 right after the create's transaction committed, before it published a task.

    The create runs the web's own service code in a ``manage.py shell``
    whose first on-commit callback kills the process: the stack and its
    outbox rows are stored, no task was sent. An engine's relay sends it.
    """
    name = new_name("commitkill")
    code = f"""
import os, signal
from django.db import transaction
from heatweb.models import Project
from stacks.services import lifecycle
template = {chain(3)!r}
with transaction.atomic():
    transaction.on_commit(lambda: os.kill(os.getpid(), signal.SIGKILL))
    lifecycle.stack_create(project=Project.objects.get(pk="{token['project_id']}"), user=None,
                           name="{name}", template=template)
print("published")
"""
    done = service.manage("shell", "-c", code)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "published" not in done.stdout
    assert hc.stacks.get(name).stack_status == "CREATE_IN_PROGRESS"

    wait_complete(hc, name)
    assert db.servers_made(name) == {"r000": 1, "r001": 1, "r002": 1}


def _create_until_answered(url, headers, body, deadline):
    """POST the same create until an answer comes (what a user re-running stack-create does)."""
    answers = []
    while time.monotonic() < deadline:
        try:
            reply = requests.post(url, json=body, headers=headers, timeout=10)
        except requests.RequestException as error:
            answers.append(type(error).__name__)
            time.sleep(0.2)
            continue
        answers.append(reply.status_code)
        if reply.status_code < 500:
            return reply, answers
        time.sleep(0.2)
    raise AssertionError(f"no answer: {answers}")


def test_web_killed_mid_create_then_retried_creates_get_their_stacks(service, hc, db, token):
    """kill -9 of gunicorn (master and workers) while creates are in flight.

    Each client sends its create again (the same request) until it gets an
    answer: the one whose stack was stored before the kill gets that stack
    (201, the same id), never 409; every stack completes, one server each.
    """
    names = [new_name("webkill") for _ in range(8)]
    url = f"{token['endpoint']}/stacks"
    headers = {"X-Auth-Token": token["token"]}
    deadline = time.monotonic() + COMPLETE_WITHIN
    with ThreadPoolExecutor(len(names)) as pool:
        futures = [pool.submit(_create_until_answered, url, headers,
                               {"stack_name": n, "template": chain(2)}, deadline)
                   for n in names]
        wait_until("some creates were stored", lambda: db.rows(
            "SELECT COUNT(*) FROM stacks_stack WHERE name LIKE %s", "webkill%")[0][0] >= 2,
            every=0.005)
        service.kill("web")
        time.sleep(0.5)
        service.start_web()
        results = [f.result() for f in futures]
    for name, (reply, answers) in zip(names, results):
        assert reply.status_code == 201, (name, answers, reply.text)
        assert hc.stacks.get(name).id == reply.json()["stack"]["id"]
    for name in names:
        wait_complete(hc, name)
        assert db.servers_made(name) == {"r000": 1, "r001": 1}


def test_a_repeated_create_gets_the_stack_and_a_different_one_gets_409(service, token):
    url = f"{token['endpoint']}/stacks"
    headers = {"X-Auth-Token": token["token"]}
    body = {"stack_name": new_name("again"), "template": chain(1), "timeout_mins": 5}
    first = requests.post(url, json=body, headers=headers, timeout=30)
    again = requests.post(url, json=body, headers=headers, timeout=30)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()

    other = requests.post(url, json={**body, "timeout_mins": 6}, headers=headers, timeout=30)
    assert other.status_code == 409
    assert other.json()["error"]["type"] == "StackExists"


def test_heatclient_rerunning_the_same_create_gets_the_same_stack(hc):
    name = new_name("heatagain")
    first = hc.stacks.create(stack_name=name, template=chain(1))
    again = hc.stacks.create(stack_name=name, template=chain(1))
    assert again["stack"]["id"] == first["stack"]["id"]
    wait_complete(hc, name)
