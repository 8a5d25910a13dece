"""Another project's ids, as Heat answers them: 404 in one's own tenant path, 403 in theirs.

Project A makes a stack with a server, a SoftwareConfig, a SoftwareDeployment
and a wait condition handle, a config and a deployment through the REST API,
a snapshot, a lock window, a drift report, lock records and events. A member
of project B (who has a stack of the same name, with resources of the same
names) then calls every API that takes an id with A's ids: in B's own tenant
path each is 404 (EntityNotFound), as Heat's ``identify_stack`` and its
tenant-filtered software config/deployment lookups answer; in A's tenant
path each is 403, as Heat refuses a tenant id that is not the token's.
Nothing of A's changes. A's ids nested under B's own stack (A's snapshot,
event and lock window under B's stack) are 404 too.
"""
import json
import re
import time
from datetime import datetime, timedelta, timezone
import uuid

import pytest
import requests

pytestmark = pytest.mark.live

NAME = "xp"
A_TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "resources": {
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny"}},
        "config": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"group": "script", "config": "#!/bin/sh\necho hi"}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
            "signal_transport": "NO_SIGNAL"}},
        "handle": {"type": "OS::Heat::WaitConditionHandle"}},
    "outputs": {"server": {"value": {"get_resource": "server"}},
                "config": {"value": {"get_resource": "config"}}}}
B_TEMPLATE = {"heat_template_version": "2016-10-14",
              "resources": {name: {"type": "OS::Heat::None"}
                            for name in ("server", "config", "deployment", "handle")}}


def _at(seconds):
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class Member:
    """A member of a new project, with a requests session on its tenant path."""

    def __init__(self, service, tag):
        info = service.issue_token(f"xp-{tag}-{uuid.uuid4().hex[:6]}",
                                   f"xp-{tag}-{uuid.uuid4().hex[:6]}")
        self.tenant = info["project_id"]
        self.endpoint = info["endpoint"]
        self.root = self.endpoint[:-len(self.tenant)]
        self.session = requests.Session()
        self.session.headers["X-Auth-Token"] = info["token"]

    def call(self, method, path, body=None, *, tenant=None):
        url = f"{self.root}{tenant or self.tenant}/{path}"
        return self.session.request(method, url, json=body, allow_redirects=False)

    def ok(self, method, path, body=None):
        answer = self.call(method, path, body)
        assert answer.status_code < 300, (method, path, answer.status_code, answer.text[:300])
        return answer.json() if answer.content else None

    def wait(self, path, done, timeout=90):
        deadline = time.monotonic() + timeout
        while True:
            seen = self.ok("GET", path)
            if done(seen):
                return seen
            assert time.monotonic() < deadline, f"{path}: {seen}"
            time.sleep(0.3)

    def make_stack(self, template):
        made = self.ok("POST", "stacks", {"stack_name": NAME, "template": template})
        stack = f"stacks/{NAME}/{made['stack']['id']}"
        self.wait(stack, lambda s: s["stack"]["stack_status"] == "CREATE_COMPLETE")
        return made["stack"]["id"], stack


@pytest.fixture(scope="module")
def world(live_service):
    """A's objects (ids and paths), B's member and B's own stack."""
    a, b = Member(live_service, "a"), Member(live_service, "b")
    ids = {}
    ids["stack_id"], s = a.make_stack(A_TEMPLATE)
    ids["s"] = s
    outputs = {o["output_key"]: o["output_value"]
               for o in a.ok("GET", s)["stack"]["outputs"]}
    ids["server"], ids["config"] = outputs["server"], outputs["config"]
    handle = a.ok("GET", f"{s}/resources/handle")["resource"]
    ids["handle_uuid"] = re.search(r"/webhooks/signal/([0-9a-f-]{36})/",
                                   json.dumps(handle["attributes"])).group(1)
    ids["stack_deployment"] = a.ok("GET", f"{s}/resources/deployment")["resource"][
        "physical_resource_id"]
    rest_config = a.ok("POST", "software_configs", {"name": "rest", "group": "script",
                                                    "config": "#!/bin/sh\necho rest"})
    ids["rest_config"] = rest_config["software_config"]["id"]
    ids["rest_deployment"] = a.ok("POST", "software_deployments", {
        "config_id": ids["rest_config"], "server_id": ids["server"], "action": "CREATE",
        "status": "IN_PROGRESS"})["software_deployment"]["id"]
    snapshot = a.ok("POST", f"{s}/snapshots", {"name": "snap"})
    ids["snapshot"] = snapshot["id"]
    a.wait(f"{s}/snapshots", lambda l: all(x["status"] == "COMPLETE" for x in l["snapshots"]))
    a.wait(s, lambda l: l["stack"]["stack_status"].endswith("_COMPLETE"))
    ids["window"] = a.ok("POST", f"{s}/lock_windows", {
        "starts_at": _at(3600), "ends_at": _at(7200), "level": "stacks"})["lock_window"]["id"]
    a.ok("POST", f"{s}/actions", {"detect_drift": None})
    deadline = time.monotonic() + 60
    while a.call("GET", f"{s}/drift").status_code != 200:
        assert time.monotonic() < deadline, "A's stack has no drift report"
        time.sleep(0.3)
    a.wait(s, lambda l: l["stack"]["stack_status"].endswith("_COMPLETE"))
    a.ok("POST", f"{s}/actions", {"lock": {"level": "stacks"}, "reason": "xp"})
    a.wait(s, lambda l: l["stack"]["stack_status"] == "LOCK_COMPLETE")
    a.ok("POST", f"{s}/actions", {"unlock": None})
    a.wait(s, lambda l: l["stack"]["stack_status"] == "UNLOCK_COMPLETE")
    ids["lock_record"] = a.ok("GET", f"{s}/locks")["locks"][0]["id"]
    events = a.ok("GET", f"{s}/resources/server/events")["events"]
    ids["event"] = events[0]["id"]
    _, b_stack = b.make_stack(B_TEMPLATE)
    return a, b, ids, b_stack


def a_state(a, ids):
    """Everything B might change of A's, as A reads it."""
    s = ids["s"]
    stack = a.ok("GET", s)["stack"]
    return {
        "stack": {k: stack[k] for k in ("stack_status", "stack_status_reason", "updated_time",
                                        "parameters", "outputs", "tags", "lock_level")
                  if k in stack},
        "template": a.ok("GET", f"{s}/template"),
        "resources": sorted((r["resource_name"], r["resource_status"],
                             r["physical_resource_id"])
                            for r in a.ok("GET", f"{s}/resources")["resources"]),
        "metadata": a.ok("GET", f"{s}/resources/server/metadata"),
        "handle": a.ok("GET", f"{s}/resources/handle")["resource"],
        "events": len(a.ok("GET", f"{s}/events")["events"]),
        "snapshots": a.ok("GET", f"{s}/snapshots"),
        "windows": a.ok("GET", f"{s}/lock_windows"),
        "locks": a.ok("GET", f"{s}/locks"),
        "drift": a.ok("GET", f"{s}/drift"),
        "configs": sorted(c["id"] for c in a.ok("GET", "software_configs")["software_configs"]),
        "config": a.ok("GET", f"software_configs/{ids['rest_config']}"),
        "deployments": a.ok("GET", "software_deployments"),
        "server metadata": a.ok("GET", f"software_deployments/metadata/{ids['server']}"),
    }


def cases(ids):
    """(method, path, body) of every API that takes one of A's ids."""
    s, sid = ids["s"], ids["stack_id"]
    template = {"heat_template_version": "2016-10-14", "resources": {}}
    return [
        ("GET", s, None), ("PUT", s, {"template": template}), ("PATCH", s, {"parameters": {}}),
        ("DELETE", s, None), ("GET", f"stacks/{sid}", None), ("DELETE", f"stacks/{sid}", None),
        ("GET", f"stacks/{NAME}/{sid}/resources", None), ("GET", f"stacks/{sid}/resources", None),
        ("PUT", f"{s}/preview", {"template": template}),
        ("POST", f"{s}/actions", {"suspend": None}), ("POST", f"{s}/actions", {"check": None}),
        ("POST", f"{s}/actions", {"lock": {"level": "all"}}),
        ("POST", f"{s}/actions", {"unlock": None}),
        ("POST", f"{s}/actions", {"detect_drift": None}),
        ("GET", f"{s}/template", None), ("GET", f"{s}/environment", None),
        ("GET", f"{s}/files", None), ("GET", f"{s}/outputs", None),
        ("GET", f"{s}/outputs/server", None), ("GET", f"{s}/export", None),
        ("DELETE", f"{s}/abandon", None), ("GET", f"{s}/drift", None),
        ("GET", f"{s}/resources", None), ("GET", f"{s}/resources/server", None),
        ("PATCH", f"{s}/resources/server", {"mark_unhealthy": True}),
        ("GET", f"{s}/resources/server/metadata", None),
        ("POST", f"{s}/resources/handle/signal", {"status": "SUCCESS"}),
        ("POST", f"{s}/resources/deployment/signal", {"deploy_status_code": 0}),
        ("GET", f"{s}/events", None), ("GET", f"{s}/resources/server/events", None),
        ("GET", f"{s}/resources/server/events/{ids['event']}", None),
        ("GET", f"{s}/snapshots", None), ("POST", f"{s}/snapshots", {"name": "b"}),
        ("GET", f"{s}/snapshots/{ids['snapshot']}", None),
        ("DELETE", f"{s}/snapshots/{ids['snapshot']}", None),
        ("POST", f"{s}/snapshots/{ids['snapshot']}/restore", None),
        ("GET", f"{s}/locks", None), ("GET", f"{s}/locks/preview?level=all", None),
        ("POST", f"{s}/locks/verify", None),
        ("GET", f"{s}/lock_windows", None),
        ("POST", f"{s}/lock_windows", {"starts_at": _at(9000), "ends_at": _at(9900)}),
        ("GET", f"{s}/lock_windows/{ids['window']}", None),
        ("PATCH", f"{s}/lock_windows/{ids['window']}", {"reason": "b"}),
        ("DELETE", f"{s}/lock_windows/{ids['window']}", None),
        ("GET", f"software_configs/{ids['config']}", None),
        ("GET", f"software_configs/{ids['rest_config']}", None),
        ("DELETE", f"software_configs/{ids['config']}", None),
        ("DELETE", f"software_configs/{ids['rest_config']}", None),
        ("GET", f"software_deployments/{ids['rest_deployment']}", None),
        ("GET", f"software_deployments/{ids['stack_deployment']}", None),
        ("PUT", f"software_deployments/{ids['rest_deployment']}",
         {"status": "COMPLETE", "output_values": {"deploy_status_code": 0}}),
        ("PUT", f"software_deployments/{ids['stack_deployment']}", {"status": "FAILED"}),
        ("DELETE", f"software_deployments/{ids['rest_deployment']}", None),
        ("DELETE", f"software_deployments/{ids['stack_deployment']}", None),
        ("POST", "software_deployments", {"config_id": ids["rest_config"],
                                          "server_id": str(uuid.uuid4())}),
    ]


def case_id(case):
    return f"{case[0]} {case[1]}"


@pytest.fixture(scope="module")
def answers(world):
    """B's answers to every case, in B's tenant path and in A's; A's state before and after."""
    a, b, ids, _ = world
    before = a_state(a, ids)
    own = {case_id(c): b.call(*c) for c in cases(ids)}
    theirs = {case_id(c): b.call(*c, tenant=a.tenant) for c in cases(ids)}
    time.sleep(1)  # anything B's calls had started would show by now
    return own, theirs, before, a_state(a, ids)


def test_every_id_of_another_project_is_404_in_ones_own_tenant_path(answers):
    own, _, _, _ = answers
    wrong = {k: (r.status_code, r.text[:200]) for k, r in own.items()
             if r.status_code != 404 or r.json()["error"]["type"] != "EntityNotFound"}
    assert not wrong, wrong


def test_every_id_of_another_project_is_403_in_its_tenant_path(answers):
    _, theirs, _, _ = answers
    wrong = {k: (r.status_code, r.text[:200]) for k, r in theirs.items()
             if r.status_code != 403 or r.json()["error"]["type"] != "Forbidden"}
    assert not wrong, wrong


def test_nothing_of_the_other_project_changed(answers):
    _, _, before, after = answers
    assert after == before


def test_no_answer_names_anything_of_the_other_project(world, answers):
    _, _, ids, _ = world
    own, theirs, _, _ = answers
    secrets = [ids["server"], ids["rest_config"], ids["rest_deployment"], ids["snapshot"],
               ids["stack_deployment"]]
    leaked = {k: r.text[:200] for k, r in {**own, **theirs}.items()
              if any(x in r.text for x in secrets)}
    assert not leaked, leaked


def test_ids_of_the_other_project_under_ones_own_stack_are_404(world):
    a, b, ids, b_stack = world
    for method, path, body in [
            ("GET", f"{b_stack}/snapshots/{ids['snapshot']}", None),
            ("POST", f"{b_stack}/snapshots/{ids['snapshot']}/restore", None),
            ("DELETE", f"{b_stack}/snapshots/{ids['snapshot']}", None),
            ("GET", f"{b_stack}/resources/server/events/{ids['event']}", None),
            ("GET", f"{b_stack}/lock_windows/{ids['window']}", None),
            ("PATCH", f"{b_stack}/lock_windows/{ids['window']}", {"reason": "b"}),
            ("DELETE", f"{b_stack}/lock_windows/{ids['window']}", None)]:
        answer = b.call(method, path, body)
        assert answer.status_code == 404, (method, path, answer.status_code, answer.text[:200])
    assert a.ok("GET", f"{ids['s']}/snapshots/{ids['snapshot']}")["snapshot"]["status"] == \
        "COMPLETE"
    assert a.ok("GET", f"{ids['s']}/lock_windows/{ids['window']}")["lock_window"]["state"] == \
        "scheduled"


def test_lists_and_lookups_by_id_show_nothing_of_the_other_project(world):
    a, b, ids, b_stack = world
    assert b.ok("GET", f"stacks?id={ids['stack_id']}")["stacks"] == []
    assert b.ok("GET", f"stacks?owner_id={ids['stack_id']}&show_nested=true")["stacks"] == []
    marker = b.call("GET", f"stacks?marker={ids['stack_id']}")
    assert marker.status_code == 400 and "not found" in marker.json()["error"]["message"]
    for path in (f"software_configs?marker={ids['rest_config']}",
                 f"{b_stack}/locks?marker={ids['lock_record']}",
                 f"{b_stack}/events?marker={ids['event']}"):
        answer = b.call("GET", path)
        assert answer.status_code == 400, (path, answer.text[:200])
        assert "not found" in answer.json()["error"]["message"], (path, answer.text[:200])
    assert b.ok("GET", f"software_deployments?server_id={ids['server']}") == \
        {"software_deployments": []}
    # Heat answers a server's metadata with the caller's own deployments to it: none here.
    assert b.ok("GET", f"software_deployments/metadata/{ids['server']}") == {"metadata": []}
    assert ids["stack_id"] not in str(b.ok("GET", "locks"))


def test_fleet_actions_do_not_reach_the_other_projects_stacks(world):
    a, b, ids, _ = world
    answer = b.ok("POST", "fleet/actions", {"lock": {"level": "all"}, "reason": "b",
                                             "stacks": [ids["stack_id"]]})
    assert [r["status"] for r in answer["results"]] == [404], answer
    answer = b.call("POST", "fleet/actions", {"lock": {"level": "all"}, "reason": "b",
                                              "stacks": [ids["stack_id"]]}, tenant=a.tenant)
    assert answer.status_code == 403
    assert a.ok("GET", ids["s"])["stack"]["stack_status"] == "UNLOCK_COMPLETE"


def test_a_signed_signal_url_is_only_its_own_signature(world, live_service):
    a, b, ids, _ = world
    root = a.root[:-len("/v1/")]
    before = a.ok("GET", f"{ids['s']}/resources/handle")["resource"]
    for signature in ("forged", "0" * 64, ""):
        answer = requests.post(f"{root}/webhooks/signal/{ids['handle_uuid']}/{signature}",
                               json={"status": "SUCCESS"}, timeout=30)
        assert answer.status_code == 404, (signature, answer.status_code, answer.text[:200])
    # B's token does not make a URL signed for A's resource valid.
    answer = b.session.post(f"{root}/webhooks/signal/{ids['handle_uuid']}/forged",
                            json={"status": "SUCCESS"}, timeout=30)
    assert answer.status_code == 404
    assert a.ok("GET", f"{ids['s']}/resources/handle")["resource"] == before


def test_bs_templates_and_deployments_cannot_use_as_configs(world):
    """A config id of A's in B's template or B's own deployment is not found: B never gets
    A's config text (a SoftwareDeployment fails, a MultipartMime part stays the id's text)."""
    a, b, ids, _ = world
    own = b.ok("POST", "software_configs", {"name": "own", "config": "echo own"})
    mine = b.ok("POST", "software_deployments", {
        "config_id": own["software_config"]["id"], "server_id": str(uuid.uuid4())})
    path = f"software_deployments/{mine['software_deployment']['id']}"
    answer = b.call("PUT", path, {"config_id": ids["rest_config"]})
    assert answer.status_code == 404, answer.text[:200]
    assert b.ok("GET", path)["software_deployment"]["config_id"] == own["software_config"]["id"]
    template = {"heat_template_version": "2016-10-14", "resources": {
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny"}},
        "mime": {"type": "OS::Heat::MultipartMime",
                 "properties": {"parts": [{"config": ids["rest_config"]}]}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": ids["rest_config"], "server": {"get_resource": "server"},
            "signal_transport": "NO_SIGNAL"}}},
        "outputs": {"mime": {"value": {"get_attr": ["mime", "config"]}}}}
    made = b.ok("POST", "stacks", {"stack_name": "uses-a", "template": template})
    stack = b.wait(f"stacks/uses-a/{made['stack']['id']}",
                   lambda s: not s["stack"]["stack_status"].endswith("IN_PROGRESS"))["stack"]
    assert stack["stack_status"] == "CREATE_FAILED", stack
    assert f"The Software config ({ids['rest_config']}) could not be found" in \
        stack["stack_status_reason"], stack["stack_status_reason"]
    mime = b.ok("GET", f"stacks/uses-a/{made['stack']['id']}/resources/mime")["resource"]
    assert "echo rest" not in json.dumps(mime), mime
    assert a.ok("GET", f"software_configs/{ids['rest_config']}")["software_config"][
        "config"] == "#!/bin/sh\necho rest"
