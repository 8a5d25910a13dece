"""Drift on the real cloud: a server's metadata changed, a network renamed and a port
deleted with openstacksdk behind heatweb's back are reported (MODIFIED with property,
expected and actual; DELETED), and an update with ``converge`` brings them back, checked
in Nova and Neutron.
"""
import uuid

import pytest

from tests.openstack.conftest import wait_stack

pytestmark = pytest.mark.openstack


def template(tag):
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.43.0.0/24"}},
        "port": {"type": "OS::Neutron::Port", "depends_on": ["subnet"], "properties": {
            "name": f"{tag}-vip", "network": {"get_resource": "net"}}},
        "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
            "image": "heatweb-tiny", "flavor": "m1.tiny", "name": f"{tag}-db",
            # a number: Nova keeps its JSON text, which is no drift
            "metadata": {"role": "db", "port": 5432}, "networks": [{"network": {"get_resource": "net"}}]}},
    }}


def drift(member, stack_id):
    heat = member.heat
    heat.http_client.json_request("POST", f"/stacks/{stack_id}/actions",
                                  data={"detect_drift": None})
    report = heat.http_client.json_request("GET", f"/stacks/{stack_id}/drift")[1]["drift"]
    return {r["resource_name"]: r for r in report["resources"]}


def test_drift_on_the_real_cloud_and_an_update_that_converges(member, cloud):
    heat, tag = member.heat, f"dr{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag))["stack"]["id"]
    try:
        wait_stack(heat, stack_id, "CREATE_COMPLETE")
        ids = {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}
        first = drift(member, stack_id)
        assert {n: r["drift_status"] for n, r in first.items()} == {
            "net": "IN_SYNC", "subnet": "IN_SYNC", "port": "IN_SYNC", "server": "IN_SYNC"}, first

        cloud.compute.set_server_metadata(ids["server"], role="web")
        cloud.network.update_network(ids["net"], name=f"{tag}-renamed")
        cloud.network.delete_port(ids["port"])
        report = drift(member, stack_id)
        assert report["server"]["differences"] == [
            {"property": "metadata", "expected": {"role": "db", "port": "5432"},
             "actual": {"role": "web", "port": "5432"}}]
        assert report["net"]["differences"] == [
            {"property": "name", "expected": f"{tag}-net", "actual": f"{tag}-renamed"}]
        assert report["port"]["drift_status"] == "DELETED"
        assert report["subnet"]["drift_status"] == "IN_SYNC"

        heat.stacks.update(stack_id, existing=True, converge=True)
        wait_stack(heat, stack_id, "UPDATE_COMPLETE")
        after = {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}
        assert (after["server"], after["net"]) == (ids["server"], ids["net"])
        metadata = cloud.compute.get_server_metadata(ids["server"]).metadata
        assert metadata.get("role") == "db" and "heatweb_creation_key" in metadata
        assert cloud.network.get_network(ids["net"]).name == f"{tag}-net"
        assert cloud.network.get_port(after["port"]).name == f"{tag}-vip"
        assert {n: r["drift_status"] for n, r in drift(member, stack_id).items()} == {
            "net": "IN_SYNC", "subnet": "IN_SYNC", "port": "IN_SYNC", "server": "IN_SYNC"}
    finally:
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
