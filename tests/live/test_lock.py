"""Stack lock and unlock (seed 001) against the live service and its simulated cloud."""
import json
import time
import uuid

import pytest
import requests

pytestmark = pytest.mark.live

CHILD = """
heat_template_version: 2016-10-14
resources:
  inner: {type: OS::Heat::RandomString}
"""

FULL = {"heat_template_version": "2016-10-14", "resources": {
    "image": {"type": "OS::Glance::Image", "properties": {"location": "http://img/x.qcow2"}},
    "kept": {"type": "OS::Glance::Image", "properties": {"location": "http://img/y.qcow2",
                                                         "protected": True}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"image": {"get_resource": "image"}, "flavor": "m1.small"}},
    "child": {"type": "child.yaml"}}}

SIMPLE = {"heat_template_version": "2016-10-14", "resources": {
    "server": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1"}},
    "slow": {"type": "OS::Heat::TestResource", "properties": {"action_wait_secs": {
        "create": 0}}}}}


class Api:
    def __init__(self, info):
        self.base = info["endpoint"]
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": info["token"],
                                     "Content-Type": "application/json"})

    def call(self, method, path, body=None):
        return self.session.request(method, self.base + path, allow_redirects=True,
                                    data=None if body is None else json.dumps(body))

    def create(self, template, files=None, **extra):
        name = f"lk{uuid.uuid4().hex[:8]}"
        resp = self.call("POST", "/stacks", {"stack_name": name, "template": template,
                                              "files": files or {}, **extra})
        assert resp.status_code == 201, resp.text
        return f"/stacks/{name}/{resp.json()['stack']['id']}"

    def stack(self, path):
        return self.call("GET", path).json()["stack"]

    def wait(self, path, state, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stack = self.stack(path)
            if stack["stack_status"] == state:
                return stack
            if stack["stack_status"].endswith("FAILED") and not state.endswith("FAILED"):
                raise AssertionError(stack["stack_status_reason"])
            time.sleep(0.2)
        raise AssertionError(f"{path} is {self.stack(path)['stack_status']}, wanted {state}")

    def action(self, path, body):
        return self.call("POST", path + "/actions", body)

    def resources(self, path, depth=0):
        return {r["resource_name"]: r for r in
                self.call("GET", f"{path}/resources?nested_depth={depth}").json()["resources"]}


@pytest.fixture(scope="module")
def api(live_service):
    return Api(live_service.issue_token(f"lock-{uuid.uuid4().hex[:6]}",
                                        f"lock-{uuid.uuid4().hex[:6]}"))


def cloud(live_service, code):
    """Run ``code`` against the simulated cloud of the live service; returns its printed JSON."""
    script = ("import json\nfrom stacks.cloud import get_cloud_driver\nfrom stacks.cloud.driver "
              "import CloudError\nc = get_cloud_driver()\n" + code)
    done = live_service.manage("shell", "-c", script)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def refused(resp, status, error_type, *fragments):
    assert resp.status_code == status, resp.text
    error = resp.json()["error"]
    assert error["type"] == error_type, error
    for fragment in fragments:
        assert fragment in error["message"], error["message"]


def test_state_table_while_locked_and_after_unlock(api):
    path = api.create(SIMPLE)
    api.wait(path, "CREATE_COMPLETE")
    assert api.action(path, {"unlock": None}).status_code == 409
    resp = api.action(path, {"lock": {"level": "stacks"}, "reason": "db maintenance"})
    assert resp.status_code == 200, resp.text
    locked = api.wait(path, "LOCK_COMPLETE")
    assert (locked["locked"], locked["lock_level"], locked["lock_reason"]) == \
        (True, "stacks", "db maintenance")
    assert locked["locked_by"] and locked["locked_at"]
    assert {r["resource_status"] for r in api.resources(path).values()} == {"CREATE_COMPLETE"}
    for method, sub, body in [("PUT", "", {"template": SIMPLE}),
                              ("PATCH", "", {"parameters": {}}),
                              ("DELETE", "", None),
                              ("POST", "/actions", {"suspend": None}),
                              ("POST", "/actions", {"resume": None}),
                              ("POST", "/actions", {"check": None})]:
        refused(api.call(method, path + sub, body), 409, "StackLocked", "stacks",
                "db maintenance", "unlock it first")
    assert api.stack(path)["stack_status"] == "LOCK_COMPLETE"
    # Lock again to change the level.
    assert api.action(path, {"lock": {"level": "all"}}).status_code == 200
    assert api.wait(path, "LOCK_COMPLETE")["lock_level"] == "all"
    assert api.action(path, {"unlock": None}).status_code == 200
    unlocked = api.wait(path, "UNLOCK_COMPLETE")
    assert unlocked["locked"] is False and unlocked["lock_level"] is None
    refused(api.action(path, {"unlock": None}), 409, "InvalidStackState")
    assert api.action(path, {"check": None}).status_code == 200
    api.wait(path, "CHECK_COMPLETE")
    assert api.call("DELETE", path).status_code == 204


def test_lock_only_from_a_final_state_and_bad_levels(api):
    slow = {"heat_template_version": "2016-10-14", "resources": {
        "slow": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 3}}}}
    path = api.create(slow)
    refused(api.action(path, {"lock": None}), 409, "ActionInProgress")
    refused(api.action(path, {"lock": {"level": "everything"}}), 400, "BadRequest", "level")
    api.wait(path, "CREATE_COMPLETE")
    assert api.action(path, {"lock": {}}).status_code == 200
    assert api.wait(path, "LOCK_COMPLETE")["lock_level"] == "all"


def test_level_all_locks_cloud_resources_and_nested_stacks(api, live_service):
    path = api.create(FULL, files={"child.yaml": CHILD})
    api.wait(path, "CREATE_COMPLETE")
    res = api.resources(path)
    server, image, kept = (res[n]["physical_resource_id"] for n in ("server", "image", "kept"))
    child_id = res["child"]["physical_resource_id"]

    assert api.action(path, {"lock": {"level": "all"}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    child = api.call("GET", f"/stacks/{child_id}").json()["stack"]
    assert child["stack_status"] == "LOCK_COMPLETE" and child["lock_level"] == "all"
    assert {r["resource_status"] for r in api.resources(path, depth=1).values()} == \
        {"CREATE_COMPLETE"}
    state = cloud(live_service, f"""
out = {{"server_locked": c.server_get("{server}")["locked"],
       "image_protected": c.image_get("{image}")["protected"]}}
for name, call in [("delete", lambda: c.server_delete("{server}")),
                   ("reboot", lambda: c.server_reboot("{server}")),
                   ("image_delete", lambda: c.image_delete("{image}"))]:
    try:
        call(); out[name] = "allowed"
    except CloudError as e:
        out[name] = str(e)
print(json.dumps(out))""")
    assert state["server_locked"] is True and state["image_protected"] is True
    assert "locked" in state["delete"] and "locked" in state["reboot"]
    assert "protected" in state["image_delete"]

    # A nested stack cannot be unlocked on its own while its parent is locked.
    refused(api.action(f"/stacks/{child['stack_name']}/{child_id}", {"unlock": None}), 409,
            "StackLocked", "parent")

    # all -> stacks releases the physical locks, keeps the stacks locked.
    assert api.action(path, {"lock": {"level": "stacks"}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    state = cloud(live_service, f"""print(json.dumps({{
    "server_locked": c.server_get("{server}")["locked"],
    "image": c.image_get("{image}")["protected"], "kept": c.image_get("{kept}")["protected"]}}))""")
    assert state == {"server_locked": False, "image": False, "kept": True}

    assert api.action(path, {"lock": {"level": "all"}}).status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")
    child = api.call("GET", f"/stacks/{child_id}").json()["stack"]
    assert child["stack_status"] == "UNLOCK_COMPLETE"
    state = cloud(live_service, f"""print(json.dumps({{
    "server_locked": c.server_get("{server}")["locked"],
    "image": c.image_get("{image}")["protected"], "kept": c.image_get("{kept}")["protected"]}}))""")
    # The image that was protected before the lock stays protected.
    assert state == {"server_locked": False, "image": False, "kept": True}
    api.call("PATCH", path, {"template": {**FULL, "resources": {
        k: v for k, v in FULL["resources"].items() if k != "kept"}},
        "files": {"child.yaml": CHILD}})
    assert api.wait(path, "UPDATE_FAILED")["stack_status_reason"].count("protected")


def test_suspended_stack_stays_suspended_after_unlock(api):
    path = api.create(SIMPLE)
    api.wait(path, "CREATE_COMPLETE")
    api.action(path, {"suspend": None})
    api.wait(path, "SUSPEND_COMPLETE")
    api.action(path, {"lock": {"level": "all"}})
    api.wait(path, "LOCK_COMPLETE")
    api.action(path, {"unlock": None})
    api.wait(path, "UNLOCK_COMPLETE")
    assert {r["resource_status"] for r in api.resources(path).values()} == {"SUSPEND_COMPLETE"}
    refused(api.call("PUT", path, {"template": SIMPLE}), 400, "NotSupported")
    assert api.action(path, {"resume": None}).status_code == 200
    api.wait(path, "RESUME_COMPLETE")


def test_lock_failure_recovery_and_delete_from_lock_failed(api, live_service):
    path = api.create(SIMPLE)
    api.wait(path, "CREATE_COMPLETE")
    project = api.base.rsplit("/", 1)[1]
    cloud(live_service, f'c.inject_fault("server_lock", "lock service unavailable", '
                        f'project_id="{project}")\nprint("{{}}")')
    api.action(path, {"lock": {"level": "all"}})
    failed = api.wait(path, "LOCK_FAILED")
    assert "lock service unavailable" in failed["stack_status_reason"]
    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")

    api.action(path, {"lock": {"level": "all"}})
    api.wait(path, "LOCK_COMPLETE")
    server = api.resources(path)["server"]["physical_resource_id"]
    refused(api.call("DELETE", path), 409, "StackLocked")
    # Make the lock fail on a re-lock, then delete from LOCK_FAILED.
    cloud(live_service, f'c.inject_fault("server_lock", "boom", project_id="{project}")\n'
                        f'print("{{}}")')
    api.action(path, {"lock": {"level": "stacks"}})
    api.wait(path, "LOCK_COMPLETE")
    api.action(path, {"lock": {"level": "all"}})
    api.wait(path, "LOCK_FAILED")
    assert api.call("DELETE", path).status_code == 204
    api.wait(path, "DELETE_COMPLETE")
    assert cloud(live_service, f'print(json.dumps(c.server_get("{server}")))') is None


def test_who_may_lock(api, live_service):
    project = f"who-{uuid.uuid4().hex[:6]}"
    member = Api(live_service.issue_token(f"m-{uuid.uuid4().hex[:6]}", project))
    reader = Api(live_service.issue_token(f"r-{uuid.uuid4().hex[:6]}", project, role="reader"))
    admin = Api(live_service.issue_token(f"a-{uuid.uuid4().hex[:6]}", project, role="admin"))
    path = member.create(SIMPLE)
    member.wait(path, "CREATE_COMPLETE")
    refused(reader.action(path, {"lock": None}), 403, "Forbidden")
    assert admin.action(path, {"lock": {"level": "stacks"}, "reason": "cloud config"}) \
        .status_code == 200
    member.wait(path, "LOCK_COMPLETE")
    refused(member.action(path, {"unlock": None}), 403, "Forbidden", "cloud admin")
    refused(member.action(path, {"lock": {"level": "all"}}), 403, "Forbidden")
    assert admin.action(path, {"unlock": None}).status_code == 200
    member.wait(path, "UNLOCK_COMPLETE")
    events = member.call("GET", path + "/events").json()["events"]
    reasons = [e["resource_status_reason"] for e in events]
    assert any("LOCK started" in r and "cloud config" in r for r in reasons)


SCALING = {"heat_template_version": "2016-10-14", "resources": {
    "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 5, "desired_capacity": 2,
        "resource": {"type": "OS::Nova::Server",
                     "properties": {"image": "cirros", "flavor": "m1.small"}}}},
    "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "group"},
        "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}}},
    "outputs": {"alarm_url": {"value": {"get_attr": ["scale_out", "alarm_url"]}},
                "size": {"value": {"get_attr": ["group", "current_size"]}}}}


def test_maintenance_mode_ignores_alarms(api):
    path = api.create(SCALING)
    stack = api.wait(path, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o["output_value"] for o in stack["outputs"]}
    assert outputs["size"] == 2
    alarm_url = outputs["alarm_url"]
    assert "/webhooks/signal/" in alarm_url
    group_id = api.resources(path)["group"]["physical_resource_id"]

    def members():
        return len(api.call("GET", f"/stacks/{group_id}").json()["stack"]["outputs"][0]
                   ["output_value"])

    assert members() == 2
    assert api.action(path, {"lock": {"level": "stacks"}, "reason": "db rebalancing"}) \
        .status_code == 200
    api.wait(path, "LOCK_COMPLETE")
    for _ in range(5):
        assert requests.post(alarm_url, json={}).status_code == 200  # no token: signed URL
    assert members() == 2 and api.stack(path)["stack_status"] == "LOCK_COMPLETE"
    events = api.call("GET", path + "/resources/scale_out/events").json()["events"]
    ignored = [e for e in events if "signal ignored: stack is locked" in
               e["resource_status_reason"]]
    assert len(ignored) == 5

    assert api.action(path, {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")
    assert requests.post(alarm_url, json={}).status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and members() != 3:
        time.sleep(0.2)
    assert members() == 3
    assert requests.post(alarm_url.rsplit("/", 1)[0] + "/forged", json={}).status_code == 404
