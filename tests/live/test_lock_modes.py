"""Lock modes and locks that interrupt (issue 26), against the live service (embedded mode).

A lock's ``allow`` lets signals, suspend/resume or check through while it holds
(and the lock holds again after each); a lock with ``interrupt`` supersedes the
action in progress (cancel or rollback) and is taken when the stack settles.
Through the HTTP API, the signed alarm URL, ``openstack stack lock`` and the
fleet action.
"""
import json
import time
import uuid

import pytest
import requests

from tests.live.door import openstack_command
from tests.live.test_lock import cloud, refused

pytestmark = pytest.mark.live

CHILD = {"heat_template_version": "2016-10-14", "resources": {
    "inner": {"type": "OS::Heat::RandomString"},
    "inner_server": {"type": "OS::Nova::Server",
                     "properties": {"image": "cirros", "flavor": "m1.small"}}}}

SERVERS = {"heat_template_version": "2016-10-14", "resources": {
    "server": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1"}},
    "child": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(CHILD)}}}}

SCALING = {"heat_template_version": "2016-10-14", "resources": {
    "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 5, "desired_capacity": 2,
        "resource": {"type": "OS::Nova::Server",
                     "properties": {"image": "cirros", "flavor": "m1.small"}}}},
    "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "group"},
        "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}}},
    "outputs": {"alarm_url": {"value": {"get_attr": ["scale_out", "alarm_url"]}}}}


def slow_template(count, *, value, wait_secs):
    return {"heat_template_version": "2016-10-14", "resources": {
        f"r{i}": {"type": "OS::Heat::TestResource",
                  "properties": {"value": value, "action_wait_secs": {"create": wait_secs,
                                                                      "update": wait_secs}}}
        for i in range(count)}}


class Api:
    def __init__(self, info):
        self.base = info["endpoint"]
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": info["token"],
                                     "Content-Type": "application/json"})

    def call(self, method, path, body=None):
        return self.session.request(method, self.base + path,
                                    data=None if body is None else json.dumps(body))

    def create(self, template):
        name = f"lm{uuid.uuid4().hex[:8]}"
        resp = self.call("POST", "/stacks", {"stack_name": name, "template": template})
        assert resp.status_code == 201, resp.text
        path = f"/stacks/{name}/{resp.json()['stack']['id']}"
        self.wait(path, "CREATE_COMPLETE")
        return path

    def stack(self, path):
        return self.call("GET", path).json()["stack"]

    def wait(self, path, state, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stack = self.stack(path)
            if stack["stack_status"] == state:
                return stack
            time.sleep(0.2)
        stack = self.stack(path)
        raise AssertionError(f"{path} is {stack['stack_status']} "
                             f"({stack['stack_status_reason']}), wanted {state}")

    def action(self, path, body):
        return self.call("POST", path + "/actions", body)

    def resources(self, path, depth=0):
        resp = self.call("GET", f"{path}/resources?nested_depth={depth}")
        return {(r["stack_name"], r["resource_name"]): r for r in resp.json()["resources"]}

    def history(self, path):
        return self.call("GET", path + "/locks").json()["locks"]


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"modes-{uuid.uuid4().hex[:6]}",
                                    f"modes-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def api(info):
    return Api(info)


def cloud_servers(live_service, ids):
    """``{id: locked}`` of the simulated cloud's servers."""
    return cloud(live_service, f"print(json.dumps({{i: c.server_get(i)['locked'] "
                               f"for i in {list(ids)!r}}}))")


def child_path(api, path, resource="child"):
    child_id = api.resources(path)[(path.split("/")[2], resource)]["physical_resource_id"]
    child = api.call("GET", f"/stacks/{child_id}").json()["stack"]
    return f"/stacks/{child['stack_name']}/{child['id']}"


def test_bad_modes_and_interrupts_are_400(api):
    path = api.create({"heat_template_version": "2016-10-14", "resources": {
        "word": {"type": "OS::Heat::RandomString"}}})
    for lock, fragment in [({"allow": "signal"}, "list of modes"),
                           ({"allow": ["signal", "update"]}, 'Invalid lock mode "update"'),
                           ({"allow": [1]}, "list of modes"),
                           ({"allow": {"signal": True}}, "list of modes"),
                           ({"interrupt": "stop"}, 'Invalid lock interrupt "stop"'),
                           ({"interrupt": ["cancel"]}, "Invalid lock interrupt"),
                           ({"allow": ["check"], "colour": "red"}, "Unknown lock option colour")]:
        refused(api.action(path, {"lock": lock}), 400, "BadRequest", fragment)
    resp = api.call("POST", "/fleet/actions", {"lock": {"allow": ["nothing"]},
                                               "stacks": [path.split("/")[2]]})
    refused(resp, 400, "BadRequest", 'Invalid lock mode "nothing"')
    stack = api.stack(path)
    assert stack["stack_status"] == "CREATE_COMPLETE" and stack["lock_allow"] == []
    assert api.history(path) == []


def test_old_body_allows_nothing(api):
    path = api.create(SERVERS)
    assert api.action(path, {"lock": {"level": "stacks"}}).status_code == 200
    stack = api.wait(path, "LOCK_COMPLETE")
    assert stack["lock_allow"] == [] and stack["locked"] is True
    for body in ({"suspend": None}, {"check": None}):
        refused(api.action(path, body), 409, "StackLocked", "is locked at level stacks")
        assert "allows" not in api.action(path, body).json()["error"]["message"]
    assert api.history(path)[0]["allow"] == []
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")


def test_signal_mode_scales_on_an_alarm_and_refuses_an_update(api, live_service):
    path = api.create(SCALING)
    stack = api.stack(path)
    alarm_url = {o["output_key"]: o["output_value"] for o in stack["outputs"]}["alarm_url"]
    group = child_path(api, path, "group")
    assert api.action(path, {"lock": {"level": "all", "allow": ["signal"]},
                             "reason": "rebalancing"}).status_code == 200
    stack = api.wait(path, "LOCK_COMPLETE")
    assert stack["lock_allow"] == ["signal"]
    assert api.wait(group, "LOCK_COMPLETE")["lock_allow"] == ["signal"]  # inherited

    refused(api.call("PATCH", path, {"parameters": {}}), 409, "StackLocked",
            "it allows only signal")
    refused(api.action(path, {"suspend": None}), 409, "StackLocked")

    assert requests.post(alarm_url, json={}).status_code == 200  # the signed URL, no token
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        members = [r for (stack_name, _), r in api.resources(group).items()
                   if r["resource_type"] == "OS::Nova::Server"]
        if len(members) == 3 and api.stack(group)["stack_status"] == "LOCK_COMPLETE":
            break
        time.sleep(0.3)
    assert len(members) == 3, members
    assert api.stack(group)["stack_status"] == "LOCK_COMPLETE"
    assert api.stack(path)["stack_status"] == "LOCK_COMPLETE"
    # The lock taken again after the scaling locked the new member in the cloud too.
    locked = cloud_servers(live_service, [m["physical_resource_id"] for m in members])
    assert all(locked.values()), locked
    kinds = [r["kind"] for r in api.history(group)]
    assert "resume" in kinds, kinds
    events = api.call("GET", path + "/resources/scale_out/events").json()["events"]
    assert any("scaling" in e["resource_status_reason"] for e in events)

    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")
    locked = cloud_servers(live_service, [m["physical_resource_id"] for m in members])
    assert not any(locked.values()), locked

    # An unlock while the group scales under the lock waits for the group to take its
    # lock again, then releases it (every member's physical lock too).
    assert api.action(path, {"lock": {"allow": ["signal"]}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    api.wait(group, "LOCK_COMPLETE")
    assert requests.post(alarm_url, json={}).status_code == 200
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")
    assert api.wait(group, "UNLOCK_COMPLETE")["locked"] is False
    members = [r for r in api.resources(group).values()
               if r["resource_type"] == "OS::Nova::Server"]
    assert len(members) == 4
    locked = cloud_servers(live_service, [m["physical_resource_id"] for m in members])
    assert not any(locked.values()), locked


def test_suspend_resume_mode_keeps_the_lock(api, live_service):
    path = api.create(SERVERS)
    child = child_path(api, path)
    assert api.action(path, {"lock": {"level": "all", "allow": ["suspend_resume"]}}) \
        .status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    assert api.wait(child, "LOCK_COMPLETE")["lock_allow"] == ["suspend_resume"]
    refused(api.action(path, {"check": None}), 409, "StackLocked", "allows only suspend_resume")
    refused(api.action(path, {"resume": None}), 409, "InvalidStackState")  # not suspended

    assert api.action(path, {"suspend": None}).status_code == 200
    refused(api.call("PATCH", path, {"parameters": {}}), 409, "StackLocked")  # still held
    time.sleep(0.5)
    stack = api.wait(path, "LOCK_COMPLETE")
    assert stack["suspended"] is True and stack["locked"] is True
    assert api.wait(child, "LOCK_COMPLETE")["suspended"] is True
    servers = {key: r for key, r in api.resources(path, depth=2).items()
               if r["resource_type"] == "OS::Nova::Server"}
    assert len(servers) == 2
    assert {r["resource_status"] for r in servers.values()} == {"SUSPEND_COMPLETE"}
    ids = [r["physical_resource_id"] for r in servers.values()]
    assert all(cloud_servers(live_service, ids).values())  # physically locked again

    assert api.action(path, {"resume": None}).status_code == 200
    time.sleep(0.5)
    stack = api.wait(path, "LOCK_COMPLETE")
    assert stack["suspended"] is False and stack["lock_allow"] == ["suspend_resume"]
    servers = {key: r for key, r in api.resources(path, depth=2).items()
               if r["resource_type"] == "OS::Nova::Server"}
    assert {r["resource_status"] for r in servers.values()} == {"RESUME_COMPLETE"}
    kinds = [r["kind"] for r in api.history(path)]
    assert kinds.count("resume") == 2 and kinds[-1] == "lock", kinds

    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")
    assert not any(cloud_servers(live_service, ids).values())


def test_check_mode_through_the_cli_and_fleet(api, info):
    path = api.create(SERVERS)
    name = path.split("/")[2]
    done = openstack_command(info, "stack", "lock", name, "--level", "stacks",
                             "--allow", "check", "--allow", "signal", "--wait")
    assert done.returncode == 0, done.stderr
    stack = api.stack(path)
    assert stack["stack_status"] == "LOCK_COMPLETE" and stack["lock_allow"] == ["signal", "check"]
    assert api.action(path, {"check": None}).status_code == 200
    time.sleep(0.5)
    api.wait(path, "LOCK_COMPLETE")
    assert {r["resource_status"] for r in api.resources(path).values()} == {"CHECK_COMPLETE"}
    refused(api.action(path, {"suspend": None}), 409, "StackLocked", "signal, check")
    done = openstack_command(info, "stack", "lock", "history", name, "-f", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["kind"] for r in rows] == ["refusal", "resume", "lock"], rows
    assert all(r["allow"] == ["signal", "check"] for r in rows), rows

    # The fleet action takes a mode too (a relock of the same stack, now allowing less).
    resp = api.call("POST", "/fleet/actions", {"lock": {"level": "stacks",
                                                        "allow": ["suspend_resume"]},
                                               "stacks": [name]})
    assert resp.status_code == 200 and resp.json()["results"][0]["outcome"] == "started", \
        resp.text
    assert api.wait(path, "LOCK_COMPLETE")["lock_allow"] == ["suspend_resume"]
    refused(api.action(path, {"check": None}), 409, "StackLocked")
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")


def _update_in_progress(api, path, template):
    resp = api.call("PUT", path, {"template": template})
    assert resp.status_code == 202, resp.text
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        busy = [r for r in api.resources(path).values() if r["resource_status"].endswith("IN_PROGRESS")]
        if busy:
            return busy
        time.sleep(0.2)
    raise AssertionError("no resource in progress")


def test_interrupt_cancel_stops_an_update_of_50_resources_and_locks(api):
    path = api.create(slow_template(1, value="a", wait_secs=0))
    _update_in_progress(api, path, slow_template(50, value="b", wait_secs=600))
    refused(api.action(path, {"lock": {"level": "stacks"}}), 409, "ActionInProgress")
    resp = api.action(path, {"lock": {"level": "stacks", "interrupt": "cancel",
                                      "allow": ["check"]}, "reason": "stop now"})
    assert resp.status_code == 200, resp.text
    stack = api.stack(path)
    assert stack["locked"] is True and stack["lock_allow"] == ["check"]
    stack = api.wait(path, "LOCK_COMPLETE", timeout=120)
    resources = api.resources(path).values()
    assert not [r for r in resources if r["resource_status"].endswith("IN_PROGRESS")]
    assert len(resources) == 50
    history = api.history(path)
    assert [r["kind"] for r in history[:2]] == ["lock", "interrupt"], history
    assert "the UPDATE in progress (cancel)" in history[1]["detail"] and history[1]["reason"] == "stop now"
    assert "UPDATE_FAILED" in history[0]["detail"]
    events = [e["resource_status_reason"] for e in
              api.call("GET", path + "/events?limit=1000").json()["events"]]
    assert any("interrupted by a lock" in e for e in events), events
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")


def test_interrupt_rollback_returns_to_the_previous_template(api, info):
    old = slow_template(2, value="old", wait_secs=0)
    path = api.create(old)
    _update_in_progress(api, path, slow_template(6, value="new", wait_secs=600))
    done = openstack_command(info, "stack", "lock", path.split("/")[2], "--interrupt",
                             "rollback", "--wait")
    assert done.returncode == 0, done.stderr
    assert api.stack(path)["stack_status"] == "LOCK_COMPLETE"
    refused(api.call("PATCH", path, {"parameters": {}}), 409, "StackLocked")
    assert api.call("GET", path + "/template").json() == old
    resources = api.resources(path)
    assert sorted(name for _, name in resources) == ["r0", "r1"]
    assert not [r for r in resources.values() if r["resource_status"].endswith("IN_PROGRESS")]
    history = api.history(path)
    assert [r["kind"] for r in history] == ["refusal", "lock", "interrupt"], history
    assert "the UPDATE in progress (rollback)" in history[2]["detail"]
    assert "ROLLBACK_COMPLETE" in history[1]["detail"]
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")


def test_interrupt_on_a_settled_stack_is_a_plain_lock(api):
    path = api.create(slow_template(1, value="a", wait_secs=0))
    assert api.action(path, {"lock": {"interrupt": "cancel"}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    assert [r["kind"] for r in api.history(path)] == ["lock"]


def test_pages_offer_the_mode_and_the_badge_says_it(api, live_service, info):
    from tests.live.door import Browser, set_password

    set_password(live_service, info["user"])
    page = Browser(live_service, info["user"])
    path = api.create(SERVERS)
    stack_id = path.split("/")[3]
    form = page.session.get(f"{live_service.url}/stacks/{stack_id}/").text
    for mode in ("signal", "suspend_resume", "check"):
        assert f'name="allow" value="{mode}"' in form
    messages = page.messages(page.post(f"/stacks/{stack_id}/actions/lock", {
        "level": "stacks", "reason": "", "allow": ["suspend_resume", "check"]}))
    assert any("Lock of stack" in m for m in messages), messages
    assert api.wait(path, "LOCK_COMPLETE")["lock_allow"] == ["suspend_resume", "check"]
    detail = page.session.get(f"{live_service.url}/stacks/{stack_id}/").text
    assert "allows suspend_resume, check" in detail
    locks = page.session.get(f"{live_service.url}/stacks/{stack_id}/locks").text
    assert '<td data-label="Allows">suspend_resume, check</td>' in locks
    # Bad modes from a page are the API's 400 message, shown as an error.
    messages = page.messages(page.post(f"/stacks/{stack_id}/actions/lock", {
        "level": "stacks", "allow": ["everything"]}))
    assert any('Invalid lock mode "everything"' in m for m in messages), messages
    # The list's fleet form takes the mode too.
    page.post("/stacks/fleet", {"action": "lock", "level": "stacks", "stack": stack_id,
                                "allow": ["signal"]})
    assert api.wait(path, "LOCK_COMPLETE")["lock_allow"] == ["signal"]
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")



DRIFTING = {"heat_template_version": "2016-10-14", "resources": {
    "image": {"type": "OS::Glance::Image", "properties": {"location": "http://img/x.qcow2",
                                                         "name": "base-image"}},
    "server": {"type": "OS::Nova::Server", "properties": {
        "image": {"get_resource": "image"}, "flavor": "m1.small", "name": "db-1",
        "metadata": {"role": "db"}}},
    "word": {"type": "OS::Heat::RandomString"}}}


def cloud_call(live_service, code):
    script = ("import json\nfrom stacks.cloud import get_cloud_driver\nc = get_cloud_driver()\n"
              + code + "\nprint(json.dumps({}))")
    done = live_service.manage("shell", "-c", script)
    assert done.returncode == 0, done.stderr


def test_drift_detection_reports_what_changed_behind_the_stacks_back(api, live_service, info):
    path = api.create(DRIFTING)
    refused(api.call("GET", path + "/drift"), 404, "EntityNotFound")
    assert api.action(path, {"detect_drift": None}).status_code == 200
    report = api.call("GET", path + "/drift").json()["drift"]
    statuses = {r["resource_name"]: r["drift_status"] for r in report["resources"]}
    assert statuses == {"image": "IN_SYNC", "server": "IN_SYNC", "word": "NOT_CHECKED"}
    assert report["stack_drift_status"] == "IN_SYNC"

    # A lock at level all protects the image and locks the server: not drift.
    assert api.action(path, {"lock": {"level": "all"}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    resources = {name: r for (_, name), r in api.resources(path).items()}
    server_id = resources["server"]["physical_resource_id"]
    image_id = resources["image"]["physical_resource_id"]
    cloud_call(live_service, f"c.server_update({server_id!r}, metadata={{'role': 'web'}}, "
                             f"name='renamed')")
    cloud_call(live_service, f"c.image_protect({image_id!r}, False)\n"
                             f"c.image_delete({image_id!r})")
    assert api.action(path, {"detect_drift": None}).status_code == 200  # allowed while locked
    report = api.call("GET", path + "/drift").json()["drift"]
    by_name = {r["resource_name"]: r for r in report["resources"]}
    assert by_name["image"]["drift_status"] == "DELETED"
    assert by_name["server"]["drift_status"] == "MODIFIED"
    assert by_name["server"]["differences"] == [
        {"property": "metadata", "expected": {"role": "db"}, "actual": {"role": "web"}},
        {"property": "name", "expected": "db-1", "actual": "renamed"}]
    assert by_name["word"]["drift_status"] == "NOT_CHECKED"
    assert report["stack_drift_status"] == "DRIFTED"
    assert report["counts"] == {"DELETED": 1, "MODIFIED": 1, "NOT_CHECKED": 1}
    assert api.stack(path)["stack_status"] == "LOCK_COMPLETE"  # detection changes nothing
    events = [e["resource_status_reason"] for e in
              api.call("GET", path + "/events?limit=1000").json()["events"]]
    assert "Drift detection: 1 MODIFIED, 1 DELETED, 1 NOT_CHECKED" in events

    done = openstack_command(info, "stack", "drift", "detect", path.split("/")[2], "-f", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["resource_name"]: r for r in json.loads(done.stdout)}
    assert rows["image"]["drift_status"] == "DELETED"
    assert rows["server"]["differences"] == ("metadata: expected {'role': 'db'}, actual "
                                             "{'role': 'web'}; name: expected 'db-1', "
                                             "actual 'renamed'")
    done = openstack_command(info, "stack", "drift", "show", path.split("/")[2], "-f", "json")
    assert done.returncode == 0 and len(json.loads(done.stdout)) == 3, done.stderr

    # The stack page: a button detects drift, the overview shows the report.
    from tests.live.door import Browser, set_password

    set_password(live_service, info["user"])
    page = Browser(live_service, info["user"])
    stack_id = path.split("/")[3]
    resp = page.post(f"/stacks/{stack_id}/drift", {})
    assert any("Drift of stack" in m for m in page.messages(resp)), page.messages(resp)
    assert "DRIFTED (detected" in resp.text
    assert ("<code>metadata</code>: expected <code>{&#x27;role&#x27;: &#x27;db&#x27;}</code>"
            in resp.text)


def test_a_worker_kill_between_the_interrupt_and_the_lock_still_ends_locked(tmp_path):
    """kill -9 of every worker right after the interrupting lock answered: new workers
    (their outbox relay and recovery sweep) still take the lock, nothing left in progress."""
    from tests.conftest import LiveService

    service = LiveService(tmp_path, name="modeskill", HEATWEB_HEARTBEAT="0.5",
                          HEATWEB_DEAD_AFTER="3", HEATWEB_SWEEP_EVERY_BEATS="1",
                          HEATWEB_RELAY_SECONDS="0.5").start()
    try:
        api = Api(service.issue_token(f"kill-{uuid.uuid4().hex[:6]}",
                                      f"kill-{uuid.uuid4().hex[:6]}"))
        path = api.create(slow_template(1, value="a", wait_secs=0))
        _update_in_progress(api, path, slow_template(20, value="b", wait_secs=600))
        resp = api.action(path, {"lock": {"level": "stacks", "interrupt": "cancel"}})
        assert resp.status_code == 200, resp.text
        service.kill_workers()
        service.start_worker("w-after")
        api.wait(path, "LOCK_COMPLETE", timeout=90)
        assert not [r for r in api.resources(path).values()
                    if r["resource_status"].endswith("IN_PROGRESS")]
        assert [r["kind"] for r in api.history(path)] == ["lock", "interrupt"]
    finally:
        service.stop()
