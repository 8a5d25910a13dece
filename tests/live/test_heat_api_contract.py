"""Heat's API contract (issue 23) through requests, python-heatclient and ``openstack``
against the live service: Location, list filters, mark unhealthy, validate and preview
shapes, tags, nested links, updated_time."""
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests
from heatclient import client as heat_client_module

pytestmark = pytest.mark.live

BIN = Path(sys.executable).parent


class Api:
    def __init__(self, info):
        self.info = info
        self.base = info["endpoint"]
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": info["token"]})

    def call(self, method, path, body=None, **kwargs):
        url = path if path.startswith("http") else self.base + path
        return self.session.request(method, url, json=body, timeout=30, **kwargs)

    def create(self, template, name=None, **body):
        name = name or f"c{uuid.uuid4().hex[:10]}"
        resp = self.call("POST", "/stacks", {"stack_name": name, "template": template, **body})
        assert resp.status_code == 201, resp.text
        return name, resp.json()["stack"]["id"]

    def wait(self, name, sid, *states, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stack = self.call("GET", f"/stacks/{name}/{sid}").json()["stack"]
            if stack["stack_status"] in states:
                return stack
            assert not stack["stack_status"].endswith("FAILED"), stack
            time.sleep(0.2)
        raise AssertionError(f"{name} is {stack['stack_status']}, wanted {states}")

    def error(self, resp, code):
        assert resp.status_code == code, resp.text
        return resp.json()["error"]


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"contract-{uuid.uuid4().hex[:6]}",
                                    f"contract-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def api(info):
    return Api(info)


@pytest.fixture(scope="module")
def hc(info):
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def openstack(info, *args):
    """``openstack`` (python-openstackclient with heatclient's plugin) with our token."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    done = subprocess.run(
        [str(BIN / "openstack"), "--os-auth-type", "admin_token", "--os-token", info["token"],
         "--os-endpoint", info["endpoint"], *args],
        capture_output=True, text=True, timeout=120, env=env)
    return done


TWO = {"heat_template_version": "2016-10-14", "resources": {
    "first": {"type": "OS::Heat::TestResource", "properties": {"value": "one"}},
    "second": {"type": "OS::Heat::RandomString", "depends_on": "first"},
    "third": {"type": "OS::Heat::None"}}}


# 1. Location -------------------------------------------------------------------------

def test_create_answers_location_the_stack_link(api):
    name = f"loc{uuid.uuid4().hex[:8]}"
    resp = api.call("POST", "/stacks", {"stack_name": name, "template": TWO})
    assert resp.status_code == 201
    link = resp.json()["stack"]["links"][0]["href"]
    assert resp.headers["Location"] == link
    assert link.endswith(f"/stacks/{name}/{resp.json()['stack']['id']}")
    api.wait(name, resp.json()["stack"]["id"], "CREATE_COMPLETE")
    assert api.call("GET", resp.headers["Location"]).json()["stack"]["stack_name"] == name


# 2. Resource and event lists ---------------------------------------------------------

@pytest.fixture(scope="module")
def two(api):
    name, sid = api.create(TWO)
    api.wait(name, sid, "CREATE_COMPLETE")
    return name, sid


def names(resp):
    assert resp.status_code == 200, resp.text
    return sorted(r.get("resource_name") for r in resp.json()["resources"])


def test_resource_list_filters(api, two):
    name, sid = two
    path = f"/stacks/{name}/{sid}/resources"
    assert names(api.call("GET", path)) == ["first", "second", "third"]
    assert names(api.call("GET", path, params={"type": "OS::Nova::Server"})) == []
    assert names(api.call("GET", path, params={"type": "Random"})) == ["second"]
    assert names(api.call("GET", path, params={"name": ["first", "third"]})) == \
        ["first", "third"]
    assert names(api.call("GET", path, params={"status": "COMPLETE"})) == \
        ["first", "second", "third"]
    assert names(api.call("GET", path, params={"action": "UPDATE"})) == []
    second = api.call("GET", f"{path}/second").json()["resource"]
    assert names(api.call("GET", path, params={
        "physical_resource_id": second["physical_resource_id"]})) == ["second"]
    detailed = api.call("GET", path, params={"with_detail": "true", "name": "first"})
    assert detailed.json()["resources"][0]["attributes"]["output"] == "one"
    # the filter does not change what a resource is required by
    first = api.call("GET", path, params={"name": "first"}).json()["resources"][0]
    assert first["required_by"] == ["second"]
    error = api.error(api.call("GET", path, params={"colour": "red"}), 400)
    assert error["message"] == "Invalid filter parameters ['colour']"
    assert api.error(api.call("GET", path, params={"nested_depth": "x"}), 400)


def test_event_list_filters_sort_and_paging(api, two):
    name, sid = two
    path = f"/stacks/{name}/{sid}/events"
    every = api.call("GET", path).json()["events"]
    assert len(every) >= 8
    done = api.call("GET", path, params={"resource_status": "COMPLETE",
                                         "resource_action": "CREATE"}).json()["events"]
    assert {e["resource_status"] for e in done} == {"CREATE_COMPLETE"}
    assert {e["resource_name"] for e in done} == {name, "first", "second", "third"}
    typed = api.call("GET", path, params={"resource_type": "OS::Heat::None"}).json()["events"]
    assert {e["resource_name"] for e in typed} == {"third"}
    named = api.call("GET", path, params={"resource_name": ["first", "second"]}).json()
    assert {e["resource_name"] for e in named["events"]} == {"first", "second"}
    desc = api.call("GET", path, params={"sort_dir": "desc"}).json()["events"]
    assert [e["id"] for e in desc] == [e["id"] for e in reversed(every)]
    by_type = api.call("GET", path, params={"sort_keys": "resource_type"}).json()["events"]
    ids = [e["id"] for e in every]
    types = {e["id"]: api.call("GET", e["links"][0]["href"]).json()["event"]["resource_type"]
             for e in every}
    assert [types[e["id"]] for e in by_type] == sorted(types[i] for i in ids)
    page1 = api.call("GET", path, params={"limit": 3}).json()["events"]
    page2 = api.call("GET", path, params={"limit": 3, "marker": page1[-1]["id"]}).json()
    assert [e["id"] for e in page1 + page2["events"]] == ids[:6]
    assert api.call("GET", path, params={"limit": 0}).json()["events"] == []
    assert api.error(api.call("GET", path, params={"sort_dir": "up"}), 400)
    assert api.error(api.call("GET", path, params={"limit": "many"}), 400)
    assert api.error(api.call("GET", path, params={"marker": str(uuid.uuid4())}), 400)
    # Heat's event list reads only the parameters it knows and drops unknown sort keys.
    for ignored in ({"sort_keys": "colour"}, {"colour": "red"}, {"sort_key": "event_time"}):
        assert [e["id"] for e in api.call("GET", path, params=ignored).json()["events"]] == \
            ids, ignored


def test_lists_read_only_the_parameters_heat_knows_as_horizon_sends_them(api, hc, two):
    """heat-dashboard's calls, through heatclient as it makes them: the event list with
    ``sort_key=event_time`` (a parameter Heat does not know, so ignores), the stack list
    with an unknown sort key and an unknown parameter (Heat drops both). Only the
    resource list refuses unknown parameters, as Heat's does."""
    name, sid = two
    every = [e.id for e in hc.events.list(sid)]
    horizon = hc.events.list(sid, sort_key="event_time", sort_dir="desc")
    assert [e.id for e in horizon] == list(reversed(every))
    named = hc.events.list(name, resource_name="first", sort_key="event_time")
    assert {e.resource_name for e in named} == {"first"}
    default = [s["id"] for s in api.call("GET", "/stacks").json()["stacks"]]
    for params in ({"sort_keys": "colour"}, {"sort_key": "stack_name"}, {"colour": "red"},
                   {"sort_keys": ["colour", "creation_time"]}):
        resp = api.call("GET", "/stacks", params=params)
        assert resp.status_code == 200, (params, resp.text)
        assert [s["id"] for s in resp.json()["stacks"]] == default, params
    by_name = api.call("GET", "/stacks", params={"sort_keys": ["colour", "stack_name"],
                                                 "sort_dir": "asc"}).json()["stacks"]
    assert [s["stack_name"] for s in by_name] == sorted(s["stack_name"] for s in by_name)
    refused = api.call("GET", f"/stacks/{name}/{sid}/resources", params={"sort_key": "x"})
    assert api.error(refused, 400)["message"] == "Invalid filter parameters ['sort_key']"


def test_event_show_has_the_resources_properties(api, hc, two):
    """Heat's event show fills ``resource_properties``; the stack's own events have none."""
    name, sid = two
    first = [e for e in hc.events.list(sid, resource_name="first")
             if e.resource_status == "CREATE_COMPLETE"][0]
    shown = hc.events.get(sid, "first", first.id)
    assert shown.resource_properties["value"] == "one", shown.resource_properties
    stack_event = [e for e in hc.events.list(sid) if e.resource_name == name][0]
    assert hc.events.get(sid, name, stack_event.id).resource_properties == {}


def test_software_config_and_deployment_lists(api):
    made = []
    for i in range(3):
        resp = api.call("POST", "/software_configs",
                        {"name": f"cfg{i}", "group": "script", "config": "echo"})
        assert resp.status_code == 200, resp.text
        made.append(resp.json()["software_config"]["id"])
    listed = [c["id"] for c in api.call("GET", "/software_configs").json()["software_configs"]]
    assert set(made) <= set(listed)
    page1 = api.call("GET", "/software_configs", params={"limit": 2}).json()["software_configs"]
    assert len(page1) == 2
    page2 = api.call("GET", "/software_configs",
                     params={"limit": 2, "marker": page1[-1]["id"]}).json()["software_configs"]
    assert not {c["id"] for c in page1} & {c["id"] for c in page2}
    assert [c["id"] for c in page1 + page2][:len(listed)] == listed[:len(page1 + page2)]
    assert api.error(api.call("GET", "/software_configs", params={"limit": "x"}), 400)
    assert api.error(api.call("GET", "/software_configs",
                              params={"marker": str(uuid.uuid4())}), 400)
    unknown = api.call("GET", "/software_configs", params={"colour": "x"})  # ignored (Heat)
    assert [c["id"] for c in unknown.json()["software_configs"]] == listed
    for server in ("srv-a", "srv-b"):
        resp = api.call("POST", "/software_deployments",
                        {"config_id": made[0], "server_id": server, "action": "CREATE"})
        assert resp.status_code == 200, resp.text
    mine = api.call("GET", "/software_deployments", params={"server_id": "srv-a"}).json()
    assert [d["server_id"] for d in mine["software_deployments"]] == ["srv-a"]
    assert len(api.call("GET", "/software_deployments").json()["software_deployments"]) >= 2
    unknown = api.call("GET", "/software_deployments", params={"colour": "x"})
    assert len(unknown.json()["software_deployments"]) >= 2


# 3. Mark unhealthy -------------------------------------------------------------------

def test_mark_unhealthy_then_update_replaces_it(api, hc):
    name, sid = api.create(TWO)
    api.wait(name, sid, "CREATE_COMPLETE")
    path = f"/stacks/{name}/{sid}/resources/second"
    before = api.call("GET", path).json()["resource"]
    resp = api.call("PATCH", path, {"mark_unhealthy": True,
                                    "resource_status_reason": "it fell over"})
    assert resp.status_code == 200, resp.text
    res = api.call("GET", path).json()["resource"]
    assert (res["resource_status"], res["resource_status_reason"]) == \
        ("CHECK_FAILED", "it fell over")
    events = api.call("GET", f"/stacks/{name}/{sid}/events",
                      params={"resource_name": "second"}).json()["events"]
    assert (events[-1]["resource_status"], events[-1]["resource_status_reason"]) == \
        ("CHECK_FAILED", "it fell over")
    # false resets a resource marked unhealthy
    assert api.call("PATCH", path, {"mark_unhealthy": False}).status_code == 200
    assert api.call("GET", path).json()["resource"]["resource_status"] == "CHECK_COMPLETE"
    # the next update replaces the resource marked unhealthy, and only it
    assert api.call("PATCH", path, {"mark_unhealthy": "true"}).status_code == 200
    assert api.call("GET", path).json()["resource"]["resource_status_reason"] == \
        "state changed by resource_mark_unhealthy api"
    first = api.call("GET", f"/stacks/{name}/{sid}/resources/first").json()["resource"]
    # OS::Heat::None: a type no property change replaces, replaced all the same
    third_path = f"/stacks/{name}/{sid}/resources/third"
    third = api.call("GET", third_path).json()["resource"]
    assert api.call("PATCH", third_path, {"mark_unhealthy": True}).status_code == 200
    preview = api.call("PUT", f"/stacks/{name}/{sid}/preview", {"template": TWO}).json()
    assert sorted(r["resource_name"] for r in preview["resource_changes"]["replaced"]) == \
        ["second", "third"]
    hc.stacks.update(sid, template=TWO)
    api.wait(name, sid, "UPDATE_COMPLETE")
    after = api.call("GET", path).json()["resource"]
    assert after["resource_status"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE")
    assert after["physical_resource_id"] != before["physical_resource_id"]
    assert api.call("GET", third_path).json()["resource"]["resource_status"] == \
        "CREATE_COMPLETE"
    rows = api.call("GET", f"/stacks/{name}/{sid}/resources").json()["resources"]
    assert sorted(r["resource_name"] for r in rows) == ["first", "second", "third"]
    events = api.call("GET", f"/stacks/{name}/{sid}/events", params={
        "resource_name": "third"}).json()["events"]
    done = [e["resource_status"] for e in events if e["resource_status"].endswith("COMPLETE")]
    # made, marked, made again and the old one deleted
    assert done.count("CREATE_COMPLETE") == 2 and done.count("DELETE_COMPLETE") == 1, done
    assert third["creation_time"] is not None
    assert api.call("GET", f"/stacks/{name}/{sid}/resources/first").json()["resource"][
        "physical_resource_id"] == first["physical_resource_id"]


def test_mark_unhealthy_bad_input_and_locked_stack(api, info, two):
    name, sid = two
    path = f"/stacks/{name}/{sid}/resources/third"
    assert api.error(api.call("PATCH", path, {"resource_status_reason": "x"}), 400)[
        "message"] == "Missing mandatory (mark_unhealthy) key from mark unhealthy request"
    assert api.error(api.call("PATCH", path, {"mark_unhealthy": "maybe"}), 400)
    assert api.error(api.call("PATCH", path, {"mark_unhealthy": True, "colour": 1}), 400)
    assert api.error(api.call("PATCH", f"/stacks/{name}/{sid}/resources/nope",
                              {"mark_unhealthy": True}), 404)["type"] == "EntityNotFound"
    assert api.call("POST", f"/stacks/{name}/{sid}/actions",
                    {"lock": {"level": "stacks"}}).status_code == 200
    api.wait(name, sid, "LOCK_COMPLETE")
    try:
        refused = api.error(api.call("PATCH", path, {"mark_unhealthy": True}), 409)
        assert refused["type"] == "StackLocked"
        assert api.call("GET", path).json()["resource"]["resource_status"] == "CREATE_COMPLETE"
    finally:
        assert api.call("POST", f"/stacks/{name}/{sid}/actions",
                        {"unlock": None}).status_code == 200
        api.wait(name, sid, "UNLOCK_COMPLETE")
    # the CLI: openstack stack resource mark unhealthy
    done = openstack(info, "stack", "resource", "mark", "unhealthy", sid, "third", "by cli")
    assert done.returncode == 0, done.stderr
    res = api.call("GET", path).json()["resource"]
    assert (res["resource_status"], res["resource_status_reason"]) == ("CHECK_FAILED", "by cli")
    done = openstack(info, "stack", "resource", "mark", "unhealthy", "--reset", sid, "third")
    assert done.returncode == 0, done.stderr
    assert api.call("GET", path).json()["resource"]["resource_status"] == "CHECK_COMPLETE"


# 7. Nested links ---------------------------------------------------------------------

CHILD = {"heat_template_version": "2016-10-14", "resources": {
    "grandchild": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps({
        "heat_template_version": "2016-10-14",
        "resources": {"leaf": {"type": "OS::Heat::None"}}})}},
    "sibling": {"type": "OS::Heat::None"}}}
NESTED = {"heat_template_version": "2016-10-14", "resources": {
    "child": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(CHILD)}},
    "top": {"type": "OS::Heat::None"}}}


def test_nested_links_and_nested_depth_lists(api, hc, info):
    name, sid = api.create(NESTED)
    api.wait(name, sid, "CREATE_COMPLETE")
    rows = api.call("GET", f"/stacks/{name}/{sid}/resources",
                    params={"nested_depth": 2}).json()["resources"]
    assert sorted(r["resource_name"] for r in rows) == \
        ["child", "grandchild", "leaf", "sibling", "top"]
    child = next(r for r in rows if r["resource_name"] == "child")
    nested = next(link["href"] for link in child["links"] if link["rel"] == "nested")
    child_stack = api.call("GET", nested).json()["stack"]
    assert nested.endswith(f"/stacks/{child_stack['stack_name']}/{child_stack['id']}")
    assert child_stack["id"] == child["physical_resource_id"]

    events = api.call("GET", f"/stacks/{name}/{sid}/events",
                      params={"nested_depth": 2}).json()["events"]
    assert {"leaf", "sibling", "top", "grandchild"} <= {e["resource_name"] for e in events}
    assert all(any(link["rel"] == "root_stack" and link["href"].endswith(f"/{sid}")
                   for link in e["links"]) for e in events)
    shallow = api.call("GET", f"/stacks/{name}/{sid}/events",
                       params={"nested_depth": 1}).json()["events"]
    assert "leaf" not in {e["resource_name"] for e in shallow}

    for command in (("stack", "event", "list", "--nested-depth", "2", "-f", "json", sid),
                    ("stack", "resource", "list", "--nested-depth", "2", "-f", "json", sid)):
        done = openstack(info, *command)
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)
        assert "leaf" in {row["resource_name"] for row in listed}, listed
    # heatclient's own client-side recursion follows the nested links too
    from heatclient.common import event_utils
    names_seen = {e.resource_name for e in event_utils._get_nested_events(
        hc, 2, f"{name}/{sid}", {})}
    assert {"leaf", "sibling"} <= names_seen


# 4. Validate -------------------------------------------------------------------------

VALIDATE = """
heat_template_version: 2016-10-14
description: the stack description
parameter_groups:
  - label: str_params
    description: The string params
    parameters: [bparam]
parameters:
  aparam: {type: number, default: 10, description: the param description}
  bparam: {type: string, hidden: true, constraints: [{length: {min: 2, max: 8},
           description: two to eight}, {allowed_pattern: "[a-z]+", description: lower}]}
  cparam: {type: number, constraints: [{modulo: {step: 2, offset: 1}}]}
resources:
  r: {type: OS::Heat::RandomString, properties: {length: {get_param: aparam}}}
"""
ENV_SHAPE = {"event_sinks": [], "parameter_defaults": {}, "parameters": {},
             "resource_registry": {"resources": {}}}


def test_validate_answers_heats_shape(api, hc):
    resp = api.call("POST", "/validate", {"template": VALIDATE})
    assert resp.status_code == 200, resp.text
    assert resp.json() == {
        "Description": "the stack description",
        "ParameterGroups": [{"label": "str_params", "description": "The string params",
                             "parameters": ["bparam"]}],
        "Parameters": {
            "aparam": {"Type": "Number", "Default": 10, "Description": "the param description",
                       "Label": "aparam", "NoEcho": "false"},
            "bparam": {"Type": "String", "Description": "", "Label": "bparam", "NoEcho": "true",
                       "MinLength": 2, "MaxLength": 8, "AllowedPattern": "[a-z]+",
                       "ConstraintDescription": "two to eight lower"},
            "cparam": {"Type": "Number", "Description": "", "Label": "cparam",
                       "NoEcho": "false", "Step": 2, "Offset": 1}},
        "Environment": ENV_SHAPE}
    # heatclient, with a value given and a registry entry
    given = hc.stacks.validate(template=VALIDATE, environment={
        "parameters": {"aparam": 5}, "resource_registry": {"My::Thing": "OS::Heat::None"}})
    assert given["Parameters"]["aparam"]["Value"] == 5
    assert given["Environment"] == {**ENV_SHAPE, "parameters": {"aparam": 5},
                                    "resource_registry": {"My::Thing": "OS::Heat::None",
                                                          "resources": {}}}
    bad = api.call("POST", "/validate", {"template": VALIDATE.replace("2016-10-14", "invalid")})
    assert "The template version is invalid" in api.error(bad, 400)["message"]


def test_validate_checks_given_values_not_missing_ones_against_properties(api):
    """As heat-tempest-plugin's test_template_validate_basic_required_param: a parameter
    without a default and without a value is no error (its property is not checked); a
    value given is checked against the property's constraints."""
    template = {"heat_template_version": "2014-10-16",
                "parameters": {"aparam": {"type": "number"}},
                "resources": {"rs": {"type": "OS::Heat::RandomString",
                                     "properties": {"length": {"get_param": "aparam"}}}}}
    resp = api.call("POST", "/validate", {"template": template})
    assert resp.status_code == 200, resp.text
    assert resp.json()["Parameters"]["aparam"] == {
        "Type": "Number", "Description": "", "Label": "aparam", "NoEcho": "false"}
    refused = api.call("POST", "/validate", {"template": template,
                                             "parameters": {"aparam": 0}})
    assert "0 is out of range" in api.error(refused, 400)["message"]


def test_validate_show_nested_and_ignore_errors(api):
    child = ("heat_template_version: 2016-10-14\n"
             "parameters: {size: {type: number, description: how big}}\n"
             "resources: {n: {type: OS::Heat::None}}\n")
    template = {"heat_template_version": "2016-10-14", "resources": {
        "inline": {"type": "OS::Heat::Stack", "properties": {
            "template": child, "parameters": {"size": 3}}},
        "file": {"type": "child.yaml"}}}
    body = {"template": template, "files": {"child.yaml": child}}
    plain = api.call("POST", "/validate", body).json()
    assert "NestedParameters" not in plain
    nested = api.call("POST", "/validate", body, params={"show_nested": "true"}).json()
    assert nested["NestedParameters"]["inline"] == {
        "Type": "OS::Heat::Stack", "Description": "No description",
        "Parameters": {"size": {"Type": "Number", "Description": "how big", "Label": "size",
                                "NoEcho": "false", "Value": 3}}}
    assert nested["NestedParameters"]["file"]["Type"] == "child.yaml"
    assert "Value" not in nested["NestedParameters"]["file"]["Parameters"]["size"]
    assert api.call("POST", "/validate", body,
                    params={"ignore_errors": "99001"}).status_code == 200
    error = api.error(api.call("POST", "/validate", body, params={"ignore_errors": "1,2"}), 400)
    assert error["message"] == "Invalid codes in ignore_errors : ['1', '2']"


# 5. Preview --------------------------------------------------------------------------

MEMBER = ("heat_template_version: 2016-10-14\n"
          "parameters: {idx: {type: string}}\n"
          "resources: {v: {type: OS::Heat::Value, properties: {value: {get_param: idx}}}}\n")
PREVIEWED = {"heat_template_version": "2016-10-14",
             "parameters": {"n": {"type": "number"}},
             "resources": {
                 "rs": {"type": "OS::Heat::RandomString"},
                 "group": {"type": "OS::Heat::ResourceGroup", "properties": {
                     "count": {"get_param": "n"}, "resource_def": {
                         "type": "member.yaml",
                         "properties": {"idx": {"get_attr": ["rs", "value"]}}}}},
                 "plain": {"type": "OS::Heat::ResourceGroup", "properties": {
                     "count": 2, "resource_def": {"type": "OS::Heat::None"}}},
                 "inline": {"type": "OS::Heat::Stack", "properties": {
                     "template": MEMBER, "parameters": {"idx": "fixed"}}}}}


def test_stack_preview_answers_heats_shape(api, hc):
    body = {"stack_name": "pv1", "template": PREVIEWED, "files": {"member.yaml": MEMBER},
            "parameters": {"n": 2}, "disable_rollback": False}
    resp = api.call("POST", "/stacks/preview", body)
    assert resp.status_code == 200, resp.text
    stack = resp.json()["stack"]
    assert stack["disable_rollback"] is False and stack["stack_name"] == "pv1"
    assert stack["id"] == "None" and stack["links"][0]["rel"] == "self"
    assert stack["parameters"]["n"] == "2"
    flat = {}

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                flat[(item["stack_name"], item["resource_name"])] = item
    walk(stack["resources"])
    rs = flat[("pv1", "rs")]
    assert (rs["resource_action"], rs["resource_status"]) == ("INIT", "COMPLETE")
    assert rs["stack_identity"]["stack_name"] == "pv1"
    assert rs["attributes"] == {"value": None} and rs["required_by"] == ["group"]
    assert rs["resource_identity"]["path"] == "/resources/rs"
    # members of a group of plain resources and of an inline nested stack are listed
    assert {n for s, n in flat if s == "pv1-plain"} == {"0", "1"}
    assert flat[("pv1-inline", "v")]["properties"] == {"value": "fixed"}
    assert flat[("pv1-inline", "v")]["parent_resource"] == "inline"
    # a group of template members whose values come from get_attr: previewed, not a 500
    assert {n for s, n in flat if s.startswith("pv1-group-")} == {"v"}
    assert {s for s, n in flat if s.startswith("pv1-group-")} == {"pv1-group-0", "pv1-group-1"}
    # as heat-tempest-plugin's test_preview checks
    assert stack["template_description"] == "No description" and stack["parent"] is None
    assert stack["parameters"]["OS::stack_id"] == "None"
    assert rs["creation_time"] is None and rs["updated_time"] is None
    assert rs["resource_status_reason"] == rs["physical_resource_id"] == rs["description"] == ""
    assert rs["properties"]["length"] == 32  # the schema's default
    dry = hc.stacks.preview(stack_name="pv2", template=PREVIEWED,
                            files={"member.yaml": MEMBER}, parameters={"n": 1})
    assert dry.stack_name == "pv2"
    missing = api.call("POST", "/stacks/preview", {**body, "parameters": {}})
    error = api.error(missing, 400)
    assert (error["type"], error["message"]) == \
        ("UserParameterMissing", "The Parameter (n) was not provided.")


PORT_MEMBER = ("heat_template_version: 2015-04-30\n"
               "parameters: {net: {type: string}}\n"
               "resources: {port: {type: OS::Neutron::Port, "
               "properties: {network_id: {get_param: net}}}}\n")


def test_preview_of_template_members_given_a_reference_and_of_a_missing_parameter(api):
    """As heat-tempest-plugin's test_preview: a member's template resources are previewed
    with a reference to a resource not made yet (Heat gives its name); a get_param of a
    parameter the template lacks is Heat's property error."""
    template = {"heat_template_version": "2015-04-30", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "rg": {"type": "OS::Heat::ResourceGroup", "properties": {"count": 1, "resource_def": {
            "type": "member.yaml", "properties": {"net": {"get_resource": "net"}}}}}}}
    resp = api.call("POST", "/stacks/preview", {"stack_name": "pv3", "template": template,
                                                "files": {"member.yaml": PORT_MEMBER}})
    assert resp.status_code == 200, resp.text
    resources = resp.json()["stack"]["resources"]
    port = resources[1][0][0]
    assert (port["stack_name"], port["resource_name"]) == ("pv3-rg-0", "port")
    assert port["properties"]["network_id"] == "net"

    template["resources"]["rg"] = {"type": "OS::Heat::Value",
                                   "properties": {"value": {"get_param": "missing"}}}
    error = api.error(api.call("POST", "/stacks/preview",
                               {"stack_name": "pv4", "template": template}), 400)
    assert error["message"] == ("Property error: : resources.rg.properties.value: : "
                                "The Parameter (missing) was not provided.")


def test_update_preview_answers_heats_shape(api, two):
    name, sid = two
    template = {"heat_template_version": "2016-10-14", "resources": {
        "first": {"type": "OS::Heat::TestResource", "properties": {"value": "two"}},
        "second": {"type": "OS::Heat::RandomString", "depends_on": "first"},
        "fourth": {"type": "OS::Heat::None"}}}
    resp = api.call("PUT", f"/stacks/{name}/{sid}/preview", {"template": template})
    assert resp.status_code == 200, resp.text
    changes = resp.json()["resource_changes"]
    assert {k: sorted(r["resource_name"] for r in v) for k, v in changes.items()} == {
        "added": ["fourth"], "deleted": ["third"], "replaced": [], "updated": ["first"],
        "unchanged": ["second"]}
    second = changes["unchanged"][0]
    assert (second["resource_action"], second["resource_status"]) == ("CREATE", "COMPLETE")
    assert second["stack_identity"]["stack_id"] == sid and second["physical_resource_id"]
    assert "attributes" in second and "resource_identity" in second
    missing = api.call("PUT", f"/stacks/{name}/{sid}/preview", {"template": {
        **template, "parameters": {"x": {"type": "string"}}}})
    assert api.error(missing, 400)["message"] == "The Parameter (x) was not provided."


# 6. Tags -----------------------------------------------------------------------------

def test_update_without_tags_clears_them_patch_keeps_them(api, hc):
    name, sid = api.create(TWO, tags="a,b")
    api.wait(name, sid, "CREATE_COMPLETE")
    assert api.call("GET", f"/stacks/{name}/{sid}").json()["stack"]["tags"] == ["a", "b"]
    assert api.call("PATCH", f"/stacks/{name}/{sid}", {"parameters": {}}).status_code == 202
    api.wait(name, sid, "UPDATE_COMPLETE")
    assert api.call("GET", f"/stacks/{name}/{sid}").json()["stack"]["tags"] == ["a", "b"]
    assert api.call("PATCH", f"/stacks/{name}/{sid}", {"tags": "c"}).status_code == 202
    api.wait(name, sid, "UPDATE_COMPLETE")
    assert api.call("GET", f"/stacks/{name}/{sid}").json()["stack"]["tags"] == ["c"]
    hc.stacks.update(sid, template=TWO)  # a PUT without tags
    api.wait(name, sid, "UPDATE_COMPLETE")
    assert api.call("GET", f"/stacks/{name}/{sid}").json()["stack"]["tags"] is None


def test_hidden_stack_tags_hide_stacks_from_lists(api, hc):
    hidden, _ = api.create(TWO, tags="data-processing-cluster,x")
    shown, _ = api.create(TWO, tags="x")
    listed = {s["stack_name"] for s in api.call("GET", "/stacks").json()["stacks"]}
    assert shown in listed and hidden not in listed
    every = {s["stack_name"] for s in
             api.call("GET", "/stacks", params={"show_hidden": "true"}).json()["stacks"]}
    assert {shown, hidden} <= every
    assert hidden in {s.stack_name for s in hc.stacks.list(show_hidden=True)}
    assert hidden not in {s.stack_name for s in hc.stacks.list()}
    # a hidden stack is still there by name
    assert api.call("GET", f"/stacks/{hidden}").status_code in (200, 302)


# 8. OS::Heat::Stack context and template ---------------------------------------------

@pytest.mark.parametrize("properties, message", [
    ({"template": json.dumps(TWO), "context": {"region_name": "Atlantis"}},
     'Cannot establish connection to Heat endpoint at region "Atlantis" due to "public '
     'endpoint for orchestration service in Atlantis region not found"'),
    ({"template": "heat_template_version: not-a-version\n"},
     "The template version is invalid"),
    ({"template": "heat_template_version: 2013-05-23\nresource: {}\n",
      "context": {"region_name": "RegionOne"}},
     'Failed validating stack template using Heat endpoint at region "RegionOne" due to '
     '"ERROR: The template section is invalid: resource"'),
    ({"template": json.dumps({"heat_template_version": "2016-10-14", "resources": {
        "r": {"type": "OS::Heat::None", "properties": {"x": {"get_param": "nope"}}}}})},
     "nope"),
])
def test_nested_stack_bad_region_or_template_is_400_at_create(api, properties, message):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "remote": {"type": "OS::Heat::Stack", "properties": properties}}}
    name = f"bad{uuid.uuid4().hex[:8]}"
    error = api.error(api.call("POST", "/stacks", {"stack_name": name, "template": template}),
                      400)
    assert error["type"] == "StackValidationFailed" and message in error["message"], error
    assert api.call("GET", f"/stacks/{name}").status_code == 404


def test_nested_stack_in_this_region_is_made(api):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "here": {"type": "OS::Heat::Stack", "properties": {
            "template": json.dumps(TWO), "context": {"region_name": "RegionOne"}}}}}
    name, sid = api.create(template)
    api.wait(name, sid, "CREATE_COMPLETE")


def _with_credential_secret(payload):
    """A stack holding a Barbican secret of ``payload`` and a remote stack naming it as
    its ``credential_secret_id`` (Heat's multi-cloud stack), the secret's id as Heat's
    users pass it (the last part of its href)."""
    return {"heat_template_version": "2016-10-14", "resources": {
        "credential": {"type": "OS::Barbican::Secret", "properties": {
            "payload": payload, "payload_content_type": "text/plain"}},
        "remote": {"type": "OS::Heat::Stack", "properties": {
            "template": json.dumps(TWO), "context": {
                "region_name": "RegionOne", "credential_secret_id": {"str_split": [
                    "/", {"get_resource": "credential"}, 5]}}}}},
        "outputs": {"remote": {"value": {"get_attr": ["remote", "outputs"]}}}}


def test_a_remote_stack_with_a_credential_secret_is_made_here(api):
    """Heat's multi-cloud stack: the secret is read and its credential checked (the
    simulated cloud has no Keystone: its format); the stack is made here."""
    credential = json.dumps({"auth_type": "v3applicationcredential", "auth": {
        "auth_url": "http://keystone.simulated/v3", "application_credential_id": "a",
        "application_credential_secret": "s"}})
    name, sid = api.create(_with_credential_secret(credential))
    api.wait(name, sid, "CREATE_COMPLETE")


@pytest.mark.parametrize("payload, why", [
    ("not json", "Failed to parse credential, please check your Stack Credential format."),
    (json.dumps({"auth": {}}), "Missing key in auth information, the correct format "
     "contains ['auth_type', 'auth']."),
])
def test_a_remote_stack_with_a_bad_credential_fails_with_heats_words(api, payload, why):
    name, sid = api.create(_with_credential_secret(payload))
    stack = api.wait(name, sid, "CREATE_FAILED")
    assert f'Cannot establish connection to Heat endpoint at remote cloud due to "{why}"' \
        in stack["stack_status_reason"], stack["stack_status_reason"]


# 9. updated_time ---------------------------------------------------------------------

def test_updated_time_is_null_until_the_first_update(api, hc):
    name, sid = api.create(TWO)
    stack = api.wait(name, sid, "CREATE_COMPLETE")
    assert stack["updated_time"] is None
    listed = next(s for s in api.call("GET", "/stacks").json()["stacks"] if s["id"] == sid)
    assert listed["updated_time"] is None
    hc.stacks.update(sid, template=TWO)
    stack = api.wait(name, sid, "UPDATE_COMPLETE")
    assert stack["updated_time"] is not None
    assert stack["updated_time"] >= stack["creation_time"]


def test_update_preview_show_nested(api, hc):
    name, sid = api.create(NESTED)
    api.wait(name, sid, "CREATE_COMPLETE")
    child = json.loads(NESTED["resources"]["child"]["properties"]["template"])
    child["resources"]["added_inside"] = {"type": "OS::Heat::None"}
    del child["resources"]["sibling"]
    template = {"heat_template_version": "2016-10-14", "resources": {
        "child": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps(child)}},
        "new_nested": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps({
            "heat_template_version": "2016-10-14",
            "resources": {"inner": {"type": "OS::Heat::None"}}})}}}}
    path = f"/stacks/{name}/{sid}/preview"
    plain = api.call("PUT", path, {"template": template}).json()["resource_changes"]
    assert sorted(r["resource_name"] for r in plain["deleted"]) == ["top"]
    deep = api.call("PUT", path, {"template": template}, params={"show_nested": "true"})
    changes = deep.json()["resource_changes"]
    names = {k: sorted(r["resource_name"] for r in v) for k, v in changes.items()}
    assert names["added"] == ["added_inside", "inner", "new_nested"]
    assert names["deleted"] == ["sibling", "top"]
    assert "child" in names["updated"] and "grandchild" in names["unchanged"]
    inside = next(r for r in changes["added"] if r["resource_name"] == "added_inside")
    assert inside["parent_resource"] == "child"
    # heatclient's --show-nested sends the same
    assert "added_inside" in {r["resource_name"] for r in hc.stacks.preview_update(
        sid, template=template, show_nested=True)["resource_changes"]["added"]}


RANDOM = """
heat_template_version: 2014-10-16
description: the stack description
parameters:
  aparam: {type: number, default: 10, description: the param description}
resources:
  myres:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: aparam}
"""
PARENT = """
heat_template_version: 2014-10-16
description: the parent template
parameters:
  pparam: {type: number, default: 5, description: the param description}
resources:
  nres:
    type: mynested.yaml
    properties:
      aparam: {get_param: pparam}
"""


def test_validate_nested_as_heat_tempest_plugin_expects(hc):
    aparam = {"Default": 10, "Description": "the param description", "Label": "aparam",
              "NoEcho": "false", "Type": "Number"}
    env = {**ENV_SHAPE, "resource_registry": {"mynested.yaml": "mynested.yaml",
                                              "resources": {}}}
    pparam = {"Default": 5, "Description": "the param description", "Label": "pparam",
              "NoEcho": "false", "Type": "Number"}
    off = hc.stacks.validate(template=PARENT, files={"mynested.yaml": RANDOM})
    assert off == {"Description": "the parent template", "Parameters": {"pparam": pparam},
                   "Environment": env}
    files = {"mynested.yaml": RANDOM.replace("OS::Heat::RandomString", "mynested2.yaml"),
             "mynested2.yaml": RANDOM}
    on = hc.stacks.validate(template=PARENT, files=files, show_nested=True)
    assert on == {
        "Description": "the parent template", "Parameters": {"pparam": pparam},
        "NestedParameters": {"nres": {
            "Description": "the stack description", "Type": "mynested.yaml",
            "Parameters": {"aparam": {**aparam, "Value": 5}},
            "NestedParameters": {"myres": {
                "Description": "the stack description", "Type": "mynested2.yaml",
                "Parameters": {"aparam": aparam}}}}},
        "Environment": env}
