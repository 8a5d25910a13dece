"""Drift of networks and ports, and an update that converges with the cloud, through
python-heatclient and ``openstack stack update --converge`` against the live service on
the simulated cloud: a network renamed, a port deleted and a server's metadata changed
behind the stack's back are reported (MODIFIED with the property, expected and actual;
DELETED), and an update with ``converge`` brings all three back to the template.
"""
import json
import uuid

import pytest
from heatclient import client as heat_client_module

from tests.live.door import openstack_command
from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import create, wait_stack

pytestmark = pytest.mark.live

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  net:
    type: OS::Neutron::Net
    properties: {name: backend, admin_state_up: true}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.66.0.0/24}
  port:
    type: OS::Neutron::Port
    depends_on: subnet
    properties: {network: {get_resource: net}, name: vip}
  server:
    type: OS::Nova::Server
    properties: {image: cirros, flavor: m1.small, metadata: {role: db}}
"""


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"drift-{uuid.uuid4().hex[:6]}",
                                    f"drift-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def hc(info):
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def drift(hc, stack_id):
    hc.http_client.json_request("POST", f"/stacks/{stack_id}/actions",
                                data={"detect_drift": None})
    report = hc.http_client.json_request("GET", f"/stacks/{stack_id}/drift")[1]["drift"]
    return {r["resource_name"]: r for r in report["resources"]}


def physical(hc, stack_id):
    return {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}


def test_drift_is_reported_and_an_update_with_converge_brings_it_back(hc, info, live_service):
    name, stack_id = create(hc, TEMPLATE)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = physical(hc, stack_id)
    assert {n: r["drift_status"] for n, r in drift(hc, stack_id).items()} == {
        "net": "IN_SYNC", "subnet": "IN_SYNC", "port": "IN_SYNC", "server": "IN_SYNC"}

    cloud(live_service, f"""c.object_update("network", "{ids['net']}", name="renamed")
c.object_delete("port", "{ids['port']}")
c.server_update("{ids['server']}", metadata={{"role": "web"}})
print(json.dumps({{}}))""")
    report = drift(hc, stack_id)
    assert report["net"]["drift_status"] == "MODIFIED"
    assert report["net"]["differences"] == [
        {"property": "name", "expected": "backend", "actual": "renamed"}]
    assert report["port"]["drift_status"] == "DELETED"
    assert report["server"]["differences"] == [
        {"property": "metadata", "expected": {"role": "db"}, "actual": {"role": "web"}}]
    assert report["subnet"]["drift_status"] == "IN_SYNC"

    # A plain update of the same template changes nothing: the drift stays.
    hc.stacks.update(stack_id, existing=True)
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert drift(hc, stack_id)["net"]["drift_status"] == "MODIFIED"

    done = openstack_command(info, "stack", "update", "--existing", "--converge", "--wait",
                             name)
    assert done.returncode == 0, done.stderr
    assert hc.stacks.get(stack_id).stack_status == "UPDATE_COMPLETE"
    assert {n: r["drift_status"] for n, r in drift(hc, stack_id).items()} == {
        "net": "IN_SYNC", "subnet": "IN_SYNC", "port": "IN_SYNC", "server": "IN_SYNC"}
    after = physical(hc, stack_id)
    assert (after["net"], after["server"]) == (ids["net"], ids["server"])  # in place
    assert after["port"] != ids["port"]  # made again
    state = cloud(live_service, f"""print(json.dumps([c.object_get("network", "{ids['net']}")["name"],
    c.object_get("port", "{after['port']}")["name"], c.server_get("{ids['server']}")["metadata"]]))""")
    assert state == ["backend", "vip", {"role": "db"}]
    reasons = [e.resource_status_reason for e in hc.events.list(stack_id)]
    assert any(r.startswith("Converging 3 drifted resource(s) with the template") for r in reasons)


def test_drift_inside_a_nested_stack_is_reported_on_its_parent(hc, live_service):
    child = json.dumps({"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": "inner"}}}})
    _, stack_id = create(hc, {"heat_template_version": "2018-08-31", "resources": {
        "tier": {"type": "OS::Heat::Stack", "properties": {"template": child}},
        "word": {"type": "OS::Heat::RandomString"}}})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    report = drift(hc, stack_id)
    assert (report["tier"]["drift_status"], report["word"]["drift_status"]) == \
        ("IN_SYNC", "NOT_CHECKED")
    [inner] = report["tier"]["nested"]
    cloud(live_service, f'c.object_update("network", "{inner["physical_resource_id"]}", '
                        f'name="outer")\nprint(json.dumps({{}}))')
    report = drift(hc, stack_id)
    assert report["tier"]["drift_status"] == "MODIFIED"
    assert [(r["resource_name"], r["drift_status"], r["differences"])
            for r in report["tier"]["nested"]] == \
        [("net", "MODIFIED", [{"property": "name", "expected": "inner", "actual": "outer"}])]
