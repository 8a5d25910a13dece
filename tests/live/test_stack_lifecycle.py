"""The stack lifecycle through python-heatclient against the live service
(real gunicorn, real Celery worker, the run mode the environment selects)."""
import threading
import time
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.conftest import LiveService

pytestmark = pytest.mark.live

MIXED = """
heat_template_version: 2018-08-31
description: several resource types with outputs
parameters:
  length:
    type: number
    default: 12
  greeting:
    type: string
    default: hello
resources:
  secret:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: length}
  value:
    type: OS::Heat::Value
    properties:
      value:
        str_replace:
          template: "$greet-$secret"
          params: {"$greet": {get_param: greeting}, "$secret": {get_resource: secret}}
  marker:
    type: OS::Heat::TestResource
    depends_on: value
    properties:
      value: {get_attr: [value, value]}
  nothing:
    type: OS::Heat::None
outputs:
  secret_length:
    value: {get_param: length}
  combined:
    description: greeting and secret
    value: {get_attr: [value, value]}
  marker_output:
    value: {get_attr: [marker, output]}
"""


def wait_stack(hc, stack_id, *states, timeout=60):
    deadline = time.monotonic() + timeout
    stack = None
    while time.monotonic() < deadline:
        stack = hc.stacks.get(stack_id)
        if stack.stack_status in states:
            return stack
        if stack.stack_status.endswith("_FAILED") and not any(s.endswith("_FAILED")
                                                              for s in states):
            break
        time.sleep(0.2)
    raise AssertionError(f"stack {stack_id} is {stack.stack_status if stack else None}: "
                         f"{stack.stack_status_reason if stack else ''}; wanted {states}")


def wait_deleted(hc, stack_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stack = hc.stacks.get(stack_id)
        except heat_exc.HTTPNotFound:
            return None
        if stack.stack_status == "DELETE_COMPLETE":
            return stack
        assert stack.stack_status != "DELETE_FAILED", stack.stack_status_reason
        time.sleep(0.2)
    raise AssertionError(f"stack {stack_id} not deleted")


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"lifecycle-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def create(hc, template, name=None, **kwargs):
    name = name or f"s{uuid.uuid4().hex[:10]}"
    body = hc.stacks.create(stack_name=name, template=template, **kwargs)
    return name, body["stack"]["id"]


def test_create_show_list_resources_events_outputs_delete(hc):
    name, sid = create(hc, MIXED, parameters={"length": "20"})
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    assert stack.stack_name == name
    assert stack.stack_status_reason == "Stack CREATE completed successfully"
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["secret_length"] == 20
    assert outputs["combined"].startswith("hello-") and len(outputs["combined"]) == 26
    assert outputs["marker_output"] == outputs["combined"]
    assert stack.parameters["length"] == "20"

    assert [s.id for s in hc.stacks.list(filters={"name": name})] == [sid]
    by_name = hc.stacks.get(name)  # 302 to name/id, followed by heatclient
    assert by_name.id == sid

    resources = {r.resource_name: r for r in hc.resources.list(sid)}
    assert set(resources) == {"secret", "value", "marker", "nothing"}
    assert all(r.resource_status == "CREATE_COMPLETE" for r in resources.values())
    assert "value" in resources["secret"].required_by
    secret = hc.resources.get(sid, "secret")
    assert len(secret.attributes["value"]) == 20

    events = hc.events.list(sid)
    statuses = [(e.resource_name, e.resource_status) for e in events]
    assert (name, "CREATE_IN_PROGRESS") in statuses and (name, "CREATE_COMPLETE") in statuses
    assert ("marker", "CREATE_IN_PROGRESS") in statuses
    marker_events = hc.events.list(sid, resource_name="marker")
    assert {e.resource_name for e in marker_events} == {"marker"}

    assert {o["output_key"] for o in hc.stacks.output_list(sid)["outputs"]} == \
        {"secret_length", "combined", "marker_output"}
    assert hc.stacks.output_show(sid, "secret_length")["output"]["output_value"] == 20
    assert "secret" in hc.stacks.template(sid)["resources"]

    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
    assert not list(hc.stacks.list(filters={"name": name}))
    # As in Heat: the id still shows the deleted stack, the name no longer finds it.
    assert hc.stacks.get(sid).stack_status == "DELETE_COMPLETE"
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.get(name)
    with pytest.raises(heat_exc.HTTPBadRequest, match="when it is deleted is not supported"):
        hc.stacks.update(sid, template=MIXED)


def test_update_in_place_replacement_and_patch(hc):
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"v": {"type": "string", "default": "one"},
                               "salt": {"type": "string", "default": "a"}},
                "resources": {
                    "inplace": {"type": "OS::Heat::TestResource",
                                "properties": {"value": {"get_param": "v"}}},
                    "replaced": {"type": "OS::Heat::RandomString",
                                 "properties": {"salt": {"get_param": "salt"}}}},
                "outputs": {"v": {"value": {"get_attr": ["inplace", "output"]}}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    before = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}

    hc.stacks.update(sid, template=template, parameters={"v": "two", "salt": "b"})
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    after = {r.resource_name: r for r in hc.resources.list(sid)}
    assert after["inplace"].physical_resource_id == before["inplace"]
    assert after["inplace"].resource_status == "UPDATE_COMPLETE"
    assert after["replaced"].physical_resource_id != before["replaced"]
    assert stack.outputs[0]["output_value"] == "two"

    # PATCH keeps the stored parameters and overlays the given ones.
    hc.stacks.update(sid, existing=True, parameters={"v": "three"})
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert stack.parameters["salt"] == "b" and stack.parameters["v"] == "three"
    # clear_parameters returns one to its default.
    hc.stacks.update(sid, existing=True, clear_parameters=["v"])
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert stack.parameters["v"] == "one"

    # A resource dropped from the template is deleted.
    smaller = dict(template, resources={"inplace": template["resources"]["inplace"]})
    hc.stacks.update(sid, template=smaller, parameters={"v": "four"})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert [r.resource_name for r in hc.resources.list(sid)] == ["inplace"]


def test_a_server_on_a_port_is_replaced_onto_the_same_port(hc):
    """As Heat's prepare_for_replace: the old server lets go of the port, the new one boots
    on it (without that, the cloud refuses the new server: the port is still in use)."""
    def template(image):
        return {"heat_template_version": "2016-10-14", "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "onto-port"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.9.0.0/24"}},
            "port": {"type": "OS::Neutron::Port", "depends_on": "subnet",
                     "properties": {"network": {"get_resource": "net"}}},
            "web": {"type": "OS::Nova::Server", "properties": {
                "image": image, "flavor": "m1.tiny",
                "networks": [{"port": {"get_resource": "port"}}]}}},
            "outputs": {"address": {"value": {"get_attr": ["web", "first_address"]}},
                        "port": {"value": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]}},
                        "port_id": {"value": {"get_attr": ["web", "addresses", "onto-port", 0,
                                                           "port"]}}}}

    _, sid = create(hc, template("cirros"))
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    before = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs["address"] == outputs["port"]
    # Each of the server's addresses names its port, as Heat's ``addresses``.
    assert outputs["port_id"] == before["port"]

    hc.stacks.update(sid, template=template("fedora"))  # a new image: a new server
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    after = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}
    assert after["web"] != before["web"] and after["port"] == before["port"]
    # The new server's address is the port's: it booted on it.
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == outputs


def test_suspend_resume_check_and_wrong_states(hc):
    _, sid = create(hc, MIXED)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict):
        hc.actions.resume(sid)
    hc.actions.suspend(sid)
    wait_stack(hc, sid, "SUSPEND_COMPLETE")
    assert {r.resource_status for r in hc.resources.list(sid)} == {"SUSPEND_COMPLETE"}
    hc.actions.suspend(sid)  # already suspended: a no-op answered 200
    assert hc.stacks.get(sid).stack_status == "SUSPEND_COMPLETE"
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.update(sid, template=MIXED)
    assert "suspended" in str(refused.value)
    hc.actions.resume(sid)
    wait_stack(hc, sid, "RESUME_COMPLETE")
    hc.actions.check(sid)
    stack = wait_stack(hc, sid, "CHECK_COMPLETE")
    assert stack.stack_status_reason == "Stack CHECK completed successfully"
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.actions.cancel_update(sid)
    assert "Cancelling update when stack is CHECK_COMPLETE is not supported" in \
        str(refused.value)


def test_failing_resource_gives_create_failed_with_reason(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "ok": {"type": "OS::Heat::None"},
        "bad": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}}
    _, sid = create(hc, template)
    stack = wait_stack(hc, sid, "CREATE_FAILED")
    assert stack.stack_status_reason.startswith("Resource CREATE failed: ")
    bad = hc.resources.get(sid, "bad")
    assert bad.resource_status == "CREATE_FAILED"
    assert bad.resource_status_reason in stack.stack_status_reason


def test_rollback_on_create_failure(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "ok": {"type": "OS::Heat::RandomString"},
        "bad": {"type": "OS::Heat::TestResource", "depends_on": "ok",
                "properties": {"fail": True}}}}
    _, sid = create(hc, template, disable_rollback=False)
    wait_stack(hc, sid, "ROLLBACK_COMPLETE")
    assert list(hc.resources.list(sid)) == []


@pytest.fixture(scope="module")
def one_second_minutes(tmp_path_factory):
    """A service of its own where a minute of timeout_mins lasts one second."""
    service = LiveService(tmp_path_factory.mktemp("minute"), name="minute", workers=1,
                          HEATWEB_MINUTE_SECONDS="1").start()
    yield service
    service.stop()


def test_timeout_fails_the_stack(one_second_minutes):
    hc = one_second_minutes.heat()
    template = {"heat_template_version": "2016-10-14", "resources": {
        "slow": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 120}}}}
    _, sid = create(hc, template, timeout_mins=2)
    assert hc.stacks.get(sid).timeout_mins == 2
    stack = wait_stack(hc, sid, "CREATE_FAILED", timeout=60)
    assert stack.stack_status_reason == "Timed out"


def test_cancel_update_rolls_back(hc):
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"v": {"type": "string", "default": "one"}},
                "resources": {"slow": {"type": "OS::Heat::TestResource", "properties": {
                    "value": {"get_param": "v"}, "action_wait_secs": {"update": 30}}}},
                "outputs": {"v": {"value": {"get_attr": ["slow", "output"]}}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=template, parameters={"v": "two"})
    wait_stack(hc, sid, "UPDATE_IN_PROGRESS")
    time.sleep(0.5)
    hc.actions.cancel_update(sid)
    stack = wait_stack(hc, sid, "ROLLBACK_COMPLETE", timeout=60)
    assert stack.outputs[0]["output_value"] == "one"


def test_cancel_without_rollback(hc):
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"v": {"type": "string", "default": "one"}},
                "resources": {"slow": {"type": "OS::Heat::TestResource", "properties": {
                    "value": {"get_param": "v"}, "action_wait_secs": {"update": 30}}}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=template, parameters={"v": "two"})
    wait_stack(hc, sid, "UPDATE_IN_PROGRESS")
    hc.actions.cancel_without_rollback(sid)
    stack = wait_stack(hc, sid, "UPDATE_FAILED")
    assert stack.stack_status_reason == "Stack UPDATE cancelled"


NESTED_CHILD = """
heat_template_version: 2016-10-14
parameters:
  size: {type: number, default: 4}
resources:
  rs: {type: OS::Heat::RandomString, properties: {length: {get_param: size}}}
outputs:
  value: {value: {get_attr: [rs, value]}}
"""


def test_nested_stack_create_and_delete(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "child": {"type": "OS::Heat::Stack", "properties": {
            "template": NESTED_CHILD, "parameters": {"size": 7}}},
        "tmpl": {"type": "child.yaml", "properties": {"size": 9}}},
        "outputs": {"child_value": {"value": {"get_attr": ["child", "outputs", "value"]}},
                    "tmpl_value": {"value": {"get_attr": ["tmpl", "value"]}}}}
    _, sid = create(hc, template, files={"child.yaml": NESTED_CHILD})
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert len(outputs["child_value"]) == 7 and len(outputs["tmpl_value"]) == 9
    nested = list(hc.resources.list(sid, nested_depth=1))
    assert {r.resource_name for r in nested} == {"child", "tmpl", "rs"}
    child_ids = [r.physical_resource_id for r in nested if r.resource_name in ("child", "tmpl")]
    children = list(hc.stacks.list(show_nested=True, filters={"id": child_ids}))
    assert {c.stack_status for c in children} == {"CREATE_COMPLETE"}
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
    for child_id in child_ids:
        wait_deleted(hc, child_id)


def test_two_parallel_updates_serialise_or_supersede(hc, live_service):
    """Two updates at once on one stack: the stack row is moved by compare-and-swap,
    so either one wins and the other gets 409, or the second supersedes the first
    (a new traversal, as in Heat's convergence); either way the stack converges to
    exactly one of the two requests."""
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"v": {"type": "string", "default": "a"}},
                "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {
                    "value": {"get_param": "v"}, "action_wait_secs": {"update": 2}}}},
                "outputs": {"v": {"value": {"get_attr": ["r", "output"]}}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    barrier = threading.Barrier(2)
    results, errors = {}, []

    def update(value):
        barrier.wait()
        try:
            hc.stacks.update(sid, template=template, parameters={"v": value})
            results[value] = 202
        except heat_exc.HTTPConflict as conflict:
            results[value] = 409
            errors.append(conflict.error["error"]["type"])

    threads = [threading.Thread(target=update, args=(v,)) for v in ("b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) in ([202, 202], [202, 409]), results
    assert set(errors) <= {"ActionInProgress", "ConcurrentTransaction"}
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    accepted = {v for v, code in results.items() if code == 202}
    assert stack.parameters["v"] in accepted
    assert stack.outputs[0]["output_value"] == stack.parameters["v"]


def test_update_while_create_is_in_progress_applies_the_newest_template(hc):
    def template(value, wait):
        return {"heat_template_version": "2016-10-14", "resources": {
            "slow": {"type": "OS::Heat::TestResource", "properties": {
                "value": value, "action_wait_secs": {"create": wait, "update": wait}}},
            "after": {"type": "OS::Heat::Value", "depends_on": "slow",
                      "properties": {"value": {"get_attr": ["slow", "output"]}}}},
            "outputs": {"v": {"value": {"get_attr": ["after", "value"]}}}}

    _, sid = create(hc, template("first", 3))
    wait_stack(hc, sid, "CREATE_IN_PROGRESS")
    hc.stacks.update(sid, template=template("second", 1))
    hc.stacks.update(sid, template=template("third", 0))
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE", timeout=90)
    assert stack.outputs[0]["output_value"] == "third"
    resources = {r.resource_name: r for r in hc.resources.list(sid)}
    assert {r.resource_status for r in resources.values()} <= {"CREATE_COMPLETE",
                                                               "UPDATE_COMPLETE"}
    events = [(e.resource_name, e.resource_status) for e in hc.events.list(sid)]
    assert ("slow", "CREATE_COMPLETE") in events


def test_a_servers_networks_update_in_place_keeping_the_ports_still_wanted(hc):
    """As Heat: an entry that pins what the server has (its address, its subnet, its port)
    keeps the port; another subnet gets a new port there; the server stays."""
    def template(networks):
        return {"heat_template_version": "2016-10-14", "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": "in-place"}},
            "subnet_a": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.21.0.0/24"}},
            "subnet_b": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.22.0.0/24"}},
            "web": {"type": "OS::Nova::Server", "properties": {
                "image": "cirros", "flavor": "m1.tiny", "networks": networks}}},
            "outputs": {"port": {"value": {"get_attr": ["web", "addresses", "in-place", 0,
                                                        "port"]}},
                        "addr": {"value": {"get_attr": ["web", "addresses", "in-place", 0,
                                                        "addr"]}}}}

    def state(stack):
        servers = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}
        return servers["web"], {o["output_key"]: o["output_value"] for o in stack.outputs}

    net = {"network": {"get_resource": "net"}}
    _, sid = create(hc, template([{"subnet": {"get_resource": "subnet_a"}}]))
    server, first = state(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert first["addr"].startswith("10.21.0.") and first["port"]
    for networks in ([net], [{**net, "fixed_ip": first["addr"]}], [{"port": first["port"]}]):
        hc.stacks.update(sid, template=template(networks))
        assert state(wait_stack(hc, sid, "UPDATE_COMPLETE")) == (server, first), networks

    hc.stacks.update(sid, template=template([{"subnet": {"get_resource": "subnet_b"}}]))
    after, outputs = state(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert after == server and outputs["port"] != first["port"]
    assert outputs["addr"].startswith("10.22.0.")
