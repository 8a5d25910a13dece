"""A cloud admin's edge on the real cloud: an external provider network, a private
network behind a router with extra routes (ExtraRoute, ExtraRouteSet), a server on a
port of it with a floating IP, a second floating IP associated afterwards
(FloatingIPAssociation), and a role granted to a group on a project; each checked in Neutron, Nova and Keystone with openstacksdk, moved by an
update, and gone after delete. (Neutron runs its L3 plugin without agents: the floating
IPs are Neutron's records, no traffic flows.)
"""
import uuid

import pytest

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.test_openstack_admin_stack import _stack_gone, admin, cleanup, \
    physical  # noqa: F401

pytestmark = pytest.mark.openstack


def template(tag, *, associated_port):
    return {"heat_template_version": "2018-08-31", "resources": {
        "public": {"type": "OS::Neutron::ProviderNet", "properties": {
            "name": f"{tag}-public", "network_type": "flat", "physical_network": tag,
            "router_external": True}},
        "public_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "public"}, "cidr": "172.31.9.0/24",
            "enable_dhcp": False}},
        "private": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-private"}},
        "private_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "private"}, "cidr": "10.79.0.0/24"}},
        "router": {"type": "OS::Neutron::Router", "properties": {
            "external_gateway_info": {"network": {"get_resource": "public"}}}},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "private_subnet"}}},
        "web_port": {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "private"},
            "fixed_ips": [{"subnet": {"get_resource": "private_subnet"}}]}},
        "spare_port": {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "private"},
            "fixed_ips": [{"subnet": {"get_resource": "private_subnet"}}]}},
        "extra_port": {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "private"},
            "fixed_ips": [{"subnet": {"get_resource": "private_subnet"}}]}},
        "web": {"type": "OS::Nova::Server", "properties": {
            "image": "heatweb-tiny", "flavor": "m1.tiny", "name": f"{tag}-web",
            "networks": [{"port": {"get_resource": "web_port"}}]}},
        "web_ip": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network": {"get_resource": "public"},
            "port_id": {"get_resource": "web_port"}}},
        "spare_ip": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network": {"get_resource": "public"}}},
        "spare_association": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {
            "floatingip_id": {"get_resource": "spare_ip"},
            "port_id": {"get_resource": associated_port}}},
        "route": {"type": "OS::Neutron::ExtraRoute", "depends_on": ["interface"],
                  "properties": {"router_id": {"get_resource": "router"},
                                 "destination": "192.168.50.0/24", "nexthop": "10.79.0.250"}},
        "routes": {"type": "OS::Neutron::ExtraRouteSet", "depends_on": ["interface"],
                   "properties": {"router": {"get_resource": "router"}, "routes": [
                       {"destination": "192.168.60.0/24", "nexthop": "10.79.0.251"}]}},
        "project": {"type": "OS::Keystone::Project", "properties": {"name": f"{tag}-project"}},
        "operators": {"type": "OS::Keystone::Group", "properties": {"name": f"{tag}-ops"}},
        "role": {"type": "OS::Keystone::Role", "properties": {"name": f"{tag}-operator"}},
        "grant": {"type": "OS::Keystone::GroupRoleAssignment", "properties": {
            "group": {"get_resource": "operators"},
            "roles": [{"role": {"get_resource": "role"},
                       "project": {"get_resource": "project"}}]}},
    }, "outputs": {"web_address": {"value": {"get_attr": ["web_ip", "floating_ip_address"]}}}}


def test_a_server_with_a_floating_ip_and_a_groups_role(admin, admin_cloud,  # noqa: F811
                                                       cleanup):  # noqa: F811
    assert any(ext.alias == "router" for ext in admin_cloud.network.extensions()), \
        "the cloud's Neutron runs without its L3 plugin (scripts/cloud-up starts it)"
    heat, tag = admin.heat, f"fip{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(
        tag, associated_port="spare_port"))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    web_ip = admin_cloud.network.get_ip(ids["web_ip"])
    port = admin_cloud.network.get_port(ids["web_port"])
    assert (web_ip.port_id, web_ip.fixed_ip_address) == \
        (ids["web_port"], port.fixed_ips[0]["ip_address"])
    assert web_ip.floating_network_id == ids["public"] and web_ip.router_id == ids["router"]
    assert port.device_id == ids["web"]  # the server is on that port
    outputs = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert outputs["web_address"] == web_ip.floating_ip_address
    assert admin_cloud.network.get_ip(ids["spare_ip"]).port_id == ids["spare_port"]
    routes = {(r["destination"], r["nexthop"])
              for r in admin_cloud.network.get_router(ids["router"]).routes}
    assert routes == {("192.168.50.0/24", "10.79.0.250"), ("192.168.60.0/24", "10.79.0.251")}
    role = admin_cloud.identity.get_role(ids["role"])
    assert role.name == f"{tag}-operator"
    assert admin_cloud.identity.validate_group_has_project_role(
        ids["project"], ids["operators"], role)

    # The association moves to another port; the same floating IP follows it.
    heat.stacks.update(stack_id, template=template(tag, associated_port="extra_port"))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id)["spare_ip"] == ids["spare_ip"]
    assert admin_cloud.network.get_ip(ids["spare_ip"]).port_id == ids["extra_port"]

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    for name in ("web_ip", "spare_ip"):
        assert admin_cloud.network.find_ip(ids[name]) is None
    assert admin_cloud.network.find_network(f"{tag}-public") is None
    assert admin_cloud.compute.find_server(f"{tag}-web") is None
    assert admin_cloud.identity.find_role(f"{tag}-operator") is None
    assert admin_cloud.identity.find_group(f"{tag}-ops") is None
