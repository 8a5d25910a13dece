"""Keystone mode with the OpenStack driver: the engine builds in the stack owner's project.

heatweb's own credentials (``OS_CLOUD``) are the demo project's; a stack made
by a user of the ``alt`` project must land in ``alt``, built through the
stack's trust (``session_for_stack``), and be deleted the same way.
"""
import uuid

import openstack
import pytest

from tests.openstack.keystone_support import Cloud, Heat, keystone_service

pytestmark = pytest.mark.openstack


def test_a_keystone_users_stack_is_built_in_their_project_through_the_trust(request,
                                                                           tmp_path_factory):
    keystone_cloud = Cloud()
    service = keystone_service(request.config, tmp_path_factory)
    token, body = keystone_cloud.token("heatweb-alt-member")
    heat = Heat(service, token, body["project"]["id"])
    name = f"tr{uuid.uuid4().hex[:6]}"
    template = {"heat_template_version": "2016-10-14", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{name}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.43.0.0/24"}},
        "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
            "image": "heatweb-tiny", "flavor": "m1.tiny", "name": f"{name}-server",
            "networks": [{"network": {"get_resource": "net"}}]}}}}

    path = heat.create(name, template)
    heat.wait(path, "CREATE_COMPLETE", timeout=240)

    alt = openstack.connect(cloud="heatweb-alt-member", connect_retries=3)
    demo = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    server = alt.compute.find_server(f"{name}-server")
    assert server is not None and alt.compute.get_server(server.id).status == "ACTIVE"
    assert alt.network.find_network(f"{name}-net").project_id == body["project"]["id"]
    assert demo.compute.find_server(f"{name}-server") is None

    assert heat.call("DELETE", path).status_code == 204
    heat.wait(path, "DELETE_COMPLETE", timeout=240)
    assert alt.compute.find_server(server.id) is None
    assert alt.network.find_network(f"{name}-net") is None
