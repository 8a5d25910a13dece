"""Heat's hidden ``OS::Nova::FloatingIP`` and ``FloatingIPAssociation`` on the real cloud:
a floating IP of an external network named by its name, associated with a server's first
port (Nova on its fake driver, Neutron's L3 plugin without agents: the records, no
traffic); moved to a second server in place; replaced when its pool is given by id; gone
after delete. Each checked in Neutron with openstacksdk. The types are neither listed nor
described, as in Heat.
"""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.test_openstack_admin_stack import _stack_gone, admin, cleanup, \
    physical  # noqa: F401

pytestmark = pytest.mark.openstack


def template(tag):
    server = {"type": "OS::Nova::Server", "depends_on": ["private_subnet"], "properties": {
        "image": "heatweb-tiny", "flavor": "m1.tiny",
        "networks": [{"network": {"get_resource": "private"}}]}}
    return {"heat_template_version": "2016-10-14", "parameters": {
        "pool_by_id": {"type": "boolean", "default": False},
        "on_b": {"type": "boolean", "default": False},
    }, "conditions": {"by_id": {"get_param": "pool_by_id"}, "b": {"get_param": "on_b"}},
        "resources": {
        "public": {"type": "OS::Neutron::ProviderNet", "properties": {
            "name": f"{tag}-public", "network_type": "flat", "physical_network": tag,
            "router_external": True}},
        "public_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "public"}, "cidr": "172.31.11.0/24",
            "enable_dhcp": False}},
        "private": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-private"}},
        "private_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "private"}, "cidr": "10.81.0.0/24"}},
        "router": {"type": "OS::Neutron::Router", "depends_on": ["public_subnet"],
                   "properties": {"external_gateway_info": {
                       "network": {"get_resource": "public"}}}},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "private_subnet"}}},
        "server_a": server,
        "server_b": server,
        "fip": {"type": "OS::Nova::FloatingIP", "depends_on": ["public_subnet"],
                "properties": {"pool": {"if": ["by_id", {"get_resource": "public"},
                                               f"{tag}-public"]}}},
        "association": {"type": "OS::Nova::FloatingIPAssociation",
                        "depends_on": ["interface"], "properties": {
                            "floating_ip": {"get_resource": "fip"},
                            "server_id": {"if": ["b", {"get_resource": "server_b"},
                                                 {"get_resource": "server_a"}]}}},
    }, "outputs": {"ip": {"value": {"get_attr": ["fip", "ip"]}},
                   "pool": {"value": {"get_attr": ["fip", "pool"]}}}}


def _outputs(heat, stack_id):
    return {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}


def _first_port(admin_cloud, server_id):
    ports = list(admin_cloud.network.ports(device_id=server_id))
    assert len(ports) == 1, ports
    return ports[0]


def test_a_nova_floating_ip_follows_its_server_and_is_replaced_with_its_pool(
        admin, admin_cloud, cleanup):  # noqa: F811
    assert any(ext.alias == "router" for ext in admin_cloud.network.extensions()), \
        "the cloud's Neutron runs without its L3 plugin (scripts/cloud-up starts it)"
    heat, tag = admin.heat, f"nfip{uuid.uuid4().hex[:6]}"
    for type_name in ("OS::Nova::FloatingIP", "OS::Nova::FloatingIPAssociation"):
        with pytest.raises(heat_exc.HTTPBadRequest) as raised:
            heat.resource_types.get(type_name)
        assert raised.value.error["error"]["type"] == "NotSupported"
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    fip = admin_cloud.network.get_ip(ids["fip"])
    port_a = _first_port(admin_cloud, ids["server_a"])
    assert (fip.port_id, fip.fixed_ip_address) == (port_a.id, port_a.fixed_ips[0]["ip_address"])
    assert fip.floating_network_id == ids["public"] and fip.router_id == ids["router"]
    assert _outputs(heat, stack_id) == {"ip": fip.floating_ip_address, "pool": ids["public"]}
    assert ids["association"] == ids["fip"]

    # Another server: the association moves in place; the floating IP is the same one.
    heat.stacks.update(stack_id, template=template(tag), parameters={"on_b": True})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id) == ids
    port_b = _first_port(admin_cloud, ids["server_b"])
    fip = admin_cloud.network.get_ip(ids["fip"])
    assert (fip.port_id, fip.fixed_ip_address) == (port_b.id, port_b.fixed_ips[0]["ip_address"])

    # The pool by id instead of by name: a new floating IP replaces the old one.
    heat.stacks.update(stack_id, template=template(tag),
                       parameters={"on_b": True, "pool_by_id": True})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    after = physical(heat, stack_id)
    assert after["fip"] != ids["fip"] and after["association"] == after["fip"]
    assert admin_cloud.network.get_ip(after["fip"]).port_id == port_b.id
    assert admin_cloud.network.find_ip(ids["fip"]) is None

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert admin_cloud.network.find_ip(after["fip"]) is None
    assert admin_cloud.network.find_network(f"{tag}-public") is None
