"""``openstack stack lock`` (heatweb-osc), and lock racing updates and deletes."""
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.live.door import openstack_command

pytestmark = pytest.mark.live
TEMPLATE = {"heat_template_version": "2016-10-14",
            "parameters": {"v": {"type": "string", "default": "a"}},
            "resources": {"r": {"type": "OS::Heat::TestResource",
                                "properties": {"value": {"get_param": "v"}}},
                          "n": {"type": "OS::Heat::None"}}}


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"race-{uuid.uuid4().hex[:6]}", f"race-{uuid.uuid4().hex[:6]}")


def status(info, name):
    resp = requests.get(f"{info['endpoint']}/stacks/{name}",
                        headers={"X-Auth-Token": info["token"]})
    return resp.json()["stack"]


def wait(info, name, state, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = status(info, name)
        if stack["stack_status"] == state:
            return stack
        time.sleep(0.2)
    raise AssertionError(f"{name}: {status(info, name)['stack_status']}, wanted {state}")


def test_openstack_command_locks_and_unlocks(info, tmp_path):
    template = tmp_path / "t.yaml"
    template.write_text(json.dumps(TEMPLATE))
    name = f"cli{uuid.uuid4().hex[:6]}"
    created = openstack_command(info, "stack", "create", "-t", str(template), "--parameter",
                                "v=b", name)
    assert created.returncode == 0, created.stderr
    wait(info, name, "CREATE_COMPLETE")
    locked = openstack_command(info, "stack", "lock", name, "--level=stacks", "--reason",
                               "maintenance")
    assert locked.returncode == 0, locked.stderr
    stack = wait(info, name, "LOCK_COMPLETE")
    assert (stack["lock_level"], stack["lock_reason"]) == ("stacks", "maintenance")
    refused = openstack_command(info, "stack", "delete", "-y", name)
    assert refused.returncode == 1
    assert "is locked" in refused.stderr and "unlock it first" in refused.stderr
    assert openstack_command(info, "stack", "unlock", name).returncode == 0
    wait(info, name, "UNLOCK_COMPLETE")
    assert "UNLOCK_COMPLETE" in openstack_command(info, "stack", "list").stdout
    shown = openstack_command(info, "stack", "output", "show", name, "nothing")
    assert shown.returncode == 1 and "Traceback" not in shown.stderr


def _storm(session, base, size=50):
    """``size`` requests at once, mixing update, lock and delete; returns the answers."""
    barrier = threading.Barrier(size)

    def request(i):
        kind = ("update", "lock", "delete")[i % 3]
        barrier.wait()
        if kind == "update":
            resp = session.put(base, data=json.dumps({"template": TEMPLATE,
                                                      "parameters": {"v": f"x{i}"}}))
        elif kind == "lock":
            resp = session.post(base + "/actions", data=json.dumps({"lock": {"level": "all"}}))
        else:
            resp = session.delete(base)
        error = resp.json()["error"]["type"] if resp.status_code >= 400 else None
        return kind, resp.status_code, error

    with ThreadPoolExecutor(max_workers=size) as pool:
        return list(pool.map(request, range(size)))


def _settle(info, sid):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stack = status(info, sid)
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        time.sleep(0.2)
    raise AssertionError(f"{sid} still in progress")


def test_fifty_parallel_requests_never_act_after_the_lock(info):
    """Storms until the lock wins one; then nothing else ever started after it."""
    session = requests.Session()
    session.headers.update({"X-Auth-Token": info["token"], "Content-Type": "application/json"})
    for _ in range(12):
        name = f"race{uuid.uuid4().hex[:6]}"
        created = session.post(info["endpoint"] + "/stacks",
                               data=json.dumps({"stack_name": name, "template": TEMPLATE}))
        sid = created.json()["stack"]["id"]
        base = f"{info['endpoint']}/stacks/{name}/{sid}"
        wait(info, name, "CREATE_COMPLETE")
        answers = _storm(session, base)
        granted = [kind for kind, code, _ in answers if code in (200, 202, 204)]
        assert granted, answers
        # Once a delete has finished, the stack is gone: updating it is Heat's 400
        # NotSupported, locking or deleting it again a 409 InvalidStackState.
        late = {("update", 400, "NotSupported"), ("lock", 409, "InvalidStackState"),
                ("delete", 409, "InvalidStackState")} if "delete" in granted else set()
        assert {(k, c, t) for k, c, t in answers if c not in (200, 202, 204)} <= {
            (k, 409, t) for k in ("update", "lock", "delete")
            for t in ("ActionInProgress", "ConcurrentTransaction", "StackLocked")} | late, \
            answers
        _settle(info, f"{name}/{sid}")
        if "delete" in granted:
            continue
        _assert_nothing_started_after_lock(session, base, name)
        if "lock" in granted:
            break
    else:
        pytest.fail("the lock never won a storm")
    assert status(info, sid)["stack_status"] == "LOCK_COMPLETE"
    answers = _storm(session, base, size=30)
    assert {(kind, code, error) for kind, code, error in answers if kind != "lock"} == {
        ("update", 409, "StackLocked"), ("delete", 409, "StackLocked")}
    _assert_nothing_started_after_lock(session, base, name)


def _assert_nothing_started_after_lock(session, base, name):
    events = session.get(base + "/events?resource_name=" + name).json()["events"]
    started = [e["resource_status_reason"] for e in events
               if e["resource_name"] == name and e["resource_status"].endswith("IN_PROGRESS")]
    assert started and started[0].startswith("Stack CREATE"), events
    first_lock = next((i for i, r in enumerate(started) if r.startswith("Stack LOCK")),
                      len(started))
    assert not any(r.startswith(("Stack UPDATE", "Stack DELETE"))
                   for r in started[first_lock:]), started
