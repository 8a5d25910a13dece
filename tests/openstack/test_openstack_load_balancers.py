"""Octavia's types on the real cloud (Octavia with noop amphora, compute and network
drivers): a load balancer with a pool of two servers (and a group's member) behind a
health monitor, checked
in Octavia with openstacksdk; a member naming its subnet removed by an update, and all gone
after delete. The noop network driver (scripts/cloud/octavia_fake: Octavia's noop one
answering a subnet's Neutron network) makes no Neutron port for the VIP and operating
statuses stay OFFLINE: a test cannot see traffic, only Octavia's records of it."""
import uuid

import pytest

from tests.live.test_load_balancers import FILES, LOAD_BALANCER, MEMBER2
from tests.openstack.conftest import wait_for, wait_stack

pytestmark = pytest.mark.openstack


def test_a_load_balancer_with_a_pool_of_two_servers_in_octavia(member, cloud):
    heat, tag = member.heat, f"lb{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=LOAD_BALANCER, files=FILES, parameters={
        "image": "heatweb-tiny", "flavor": "m1.tiny"})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=400)
    ids = {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}
    lbaas = cloud.load_balancer
    lb = lbaas.get_load_balancer(ids["lb"])
    assert lb.provisioning_status == "ACTIVE" and lb.vip_subnet_id == ids["subnet"]
    listener = lbaas.get_listener(ids["listener"])
    assert (listener.protocol, listener.protocol_port) == ("HTTP", 80)
    pool = lbaas.get_pool(ids["pool"])
    assert pool.health_monitor_id == ids["monitor"]
    members = {m.address: m for m in lbaas.members(ids["pool"])}
    servers = [cloud.compute.get_server(ids[name]) for name in ("web1", "web2")]
    addresses = {a["addr"] for s in servers for net in s.addresses.values() for a in net}
    # the two servers' and the one of the group's member (a nested stack)
    assert set(members) == addresses | {"10.61.0.50"} and len(members) == 3
    # the pool's show, read again after the members (in this stack and the nested one)
    shown = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert sorted(m["id"] for m in shown["pool_members"]) == \
        sorted(m.id for m in members.values())
    assert lbaas.get_health_monitor(ids["monitor"]).url_path == "/health"
    [rule] = list(lbaas.l7_rules(ids["policy"]))
    assert (rule.type, rule.rule_value) == ("PATH", "/admin")

    # member2 (it names its subnet, as heat-tempest-plugin's LoadBalancerTest's members)
    # removed: Octavia deletes it
    heat.stacks.update(stack_id, template=LOAD_BALANCER.replace(MEMBER2, ""), files=FILES,
                       parameters={"image": "heatweb-tiny", "flavor": "m1.tiny", "weight": 5})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE", timeout=400)
    member_id = ids["member1"].split("/", 1)[1]
    assert lbaas.get_member(member_id, ids["pool"]).weight == 5
    assert ids["member2"].split("/", 1)[1] not in {m.id for m in lbaas.members(ids["pool"])}

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE", timeout=400)
    wait_for(lambda: lbaas.find_load_balancer(ids["lb"]) is None, "load balancer gone")
