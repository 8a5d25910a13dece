"""Neutron's trunk and QoS on the real cloud (its ``trunk`` and ``qos`` service plugins,
scripts/cloud/configs.sh): a QoS policy with its three rules on a network and a port, a
trunk with two VLAN sub-ports under a server, each checked in Neutron and Nova with
openstacksdk, changed in place by an update, and gone after delete. (No agents: the
trunk stays DOWN and no traffic is shaped; Neutron keeps and checks the records.)
"""
import uuid

import pytest

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.test_openstack_admin_stack import _stack_gone, admin, cleanup, \
    physical  # noqa: F401

pytestmark = pytest.mark.openstack


def template(tag, *, max_kbps, vlans):
    ports = {f"vlan{v}": {"type": "OS::Neutron::Port", "depends_on": "trunk_subnet",
                          "properties": {"network": {"get_resource": "trunk_net"}}}
             for v in (10, 20)}
    return {"heat_template_version": "2018-08-31", "resources": {
        "policy": {"type": "OS::Neutron::QoSPolicy", "properties": {
            "name": f"{tag}-gold", "description": "Gold service"}},
        "limit": {"type": "OS::Neutron::QoSBandwidthLimitRule", "properties": {
            "policy": {"get_resource": "policy"}, "max_kbps": max_kbps, "max_burst_kbps": 100}},
        "mark": {"type": "OS::Neutron::QoSDscpMarkingRule", "properties": {
            "policy": {"get_resource": "policy"}, "dscp_mark": 26}},
        "minimum": {"type": "OS::Neutron::QoSMinimumBandwidthRule", "properties": {
            "policy": {"get_resource": "policy"}, "min_kbps": 100}},
        "net": {"type": "OS::Neutron::Net", "properties": {
            "name": f"{tag}-net", "qos_policy": {"get_resource": "policy"}}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.81.0.0/24"}},
        "shaped": {"type": "OS::Neutron::Port", "depends_on": ["subnet", "limit", "mark"],
                   "properties": {"network": {"get_resource": "net"},
                                  "qos_policy": {"get_resource": "policy"}}},
        # The trunk and its server on a network without the policy: its minimum
        # bandwidth rule would make Nova ask Placement for bandwidth no host offers.
        "trunk_net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-trunk-net"}},
        "trunk_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "trunk_net"}, "cidr": "10.82.0.0/24"}},
        "parent": {"type": "OS::Neutron::Port", "depends_on": "trunk_subnet",
                   "properties": {"network": {"get_resource": "trunk_net"}}},
        **ports,
        "trunk": {"type": "OS::Neutron::Trunk", "properties": {
            "name": f"{tag}-trunk", "port": {"get_resource": "parent"},
            "sub_ports": [{"port": {"get_resource": f"vlan{v}"}, "segmentation_type": "vlan",
                           "segmentation_id": v} for v in vlans]}},
        "server": {"type": "OS::Nova::Server", "depends_on": "trunk", "properties": {
            "image": "heatweb-tiny", "flavor": "m1.tiny", "name": f"{tag}-vm",
            "networks": [{"port": {"get_resource": "parent"}}]}},
    }, "outputs": {"trunk_sub_ports": {"value": {"get_attr": ["trunk", "sub_ports"]}}}}


def test_a_trunk_and_a_qos_policy_live_in_neutron(admin, admin_cloud, cleanup):  # noqa: F811
    aliases = {ext.alias for ext in admin_cloud.network.extensions()}
    assert {"trunk", "qos"} <= aliases, \
        "the cloud's Neutron runs without its trunk and qos plugins (scripts/cloud-up starts them)"
    heat, tag, net = admin.heat, f"tq{uuid.uuid4().hex[:6]}", admin_cloud.network
    stack_id = heat.stacks.create(stack_name=tag, template=template(
        tag, max_kbps=1000, vlans=(10, 20)))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    policy = net.get_qos_policy(ids["policy"])
    rules = {r["type"]: r for r in policy.rules}
    assert (rules["bandwidth_limit"]["max_kbps"], rules["dscp_marking"]["dscp_mark"],
            rules["minimum_bandwidth"]["min_kbps"]) == (1000, 26, 100)
    # heatweb's id of a rule names its policy too (``<policy>/<rule>``; Heat's is the rule's)
    limit_id = ids["limit"].split("/")[-1]
    assert rules["bandwidth_limit"]["id"] == limit_id
    assert net.get_network(ids["net"]).qos_policy_id == ids["policy"]
    assert net.get_port(ids["shaped"]).qos_policy_id == ids["policy"]
    trunk = net.get_trunk(ids["trunk"])
    assert trunk.port_id == ids["parent"] and trunk.name == f"{tag}-trunk"
    assert {(s["port_id"], s["segmentation_type"], s["segmentation_id"])
            for s in trunk.sub_ports} == {(ids["vlan10"], "vlan", 10), (ids["vlan20"], "vlan", 20)}
    assert net.get_port(ids["parent"]).device_id == ids["server"]
    outputs = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert {s["segmentation_id"] for s in outputs["trunk_sub_ports"]} == {10, 20}

    # In place, as Heat: the rule's limit and the trunk's sub-ports change, same objects.
    heat.stacks.update(stack_id, template=template(tag, max_kbps=2000, vlans=(10,)))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    after = physical(heat, stack_id)
    assert (after["limit"], after["trunk"]) == (ids["limit"], ids["trunk"])
    assert net.get_qos_bandwidth_limit_rule(limit_id, ids["policy"]).max_kbps == 2000
    assert [(s["port_id"], s["segmentation_id"]) for s in net.get_trunk(ids["trunk"]).sub_ports] \
        == [(ids["vlan10"], 10)]

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert net.find_trunk(ids["trunk"]) is None
    assert net.find_qos_policy(ids["policy"]) is None
    assert net.find_network(ids["net"]) is None and net.find_network(ids["trunk_net"]) is None
    assert admin_cloud.compute.find_server(f"{tag}-vm") is None
