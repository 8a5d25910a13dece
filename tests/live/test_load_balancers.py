"""Octavia's types through python-heatclient against the live service on the simulated
cloud: a load balancer with a listener, a pool of two servers behind a health monitor,
an L7 policy and rule; updated in place, deleted, Octavia's refusals. The servers' members
name their subnet, as Heat's scenario test's do (the real cloud's Octavia deletes them
since its network driver is scripts/cloud/octavia_fake).
"""
import uuid

import pytest
from heatclient import client as heat_client_module

from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

LOAD_BALANCER = """
heat_template_version: 2018-08-31
parameters:
  weight: {type: number, default: 1}
  grouped: {type: number, default: 1}
  image: {type: string, default: cirros}
  flavor: {type: string, default: m1.small}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.61.0.0/24}
  web1:
    type: OS::Nova::Server
    depends_on: subnet
    properties: {image: {get_param: image}, flavor: {get_param: flavor},
                 networks: [{network: {get_resource: net}}]}
  web2:
    type: OS::Nova::Server
    depends_on: subnet
    properties: {image: {get_param: image}, flavor: {get_param: flavor},
                 networks: [{network: {get_resource: net}}]}
  lb:
    type: OS::Octavia::LoadBalancer
    properties: {vip_subnet: {get_resource: subnet}}
  listener:
    type: OS::Octavia::Listener
    properties: {loadbalancer: {get_resource: lb}, protocol: HTTP, protocol_port: 80}
  pool:
    type: OS::Octavia::Pool
    properties: {listener: {get_resource: listener}, lb_algorithm: ROUND_ROBIN,
                 protocol: HTTP}
  monitor:
    type: OS::Octavia::HealthMonitor
    properties: {pool: {get_resource: pool}, type: HTTP, delay: 5, timeout: 3,
                 max_retries: 3, url_path: /health}
  member1:
    type: OS::Octavia::PoolMember
    properties: {pool: {get_resource: pool}, address: {get_attr: [web1, first_address]},
                 protocol_port: 80, weight: {get_param: weight},
                 subnet: {get_resource: subnet}}
  member2:
    type: OS::Octavia::PoolMember
    properties: {pool: {get_resource: pool}, address: {get_attr: [web2, first_address]},
                 protocol_port: 80, subnet: {get_resource: subnet}}
  grouped:  # a member in a nested stack of its own (as heat-tempest-plugin's
    # lb_member.yaml): the pool's show lists it too
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: grouped}
      resource_def:
        type: lb_member.yaml
        properties: {pool: {get_resource: pool}}
  policy:
    type: OS::Octavia::L7Policy
    properties: {listener: {get_resource: listener}, action: REJECT, position: 1}
  rule:
    type: OS::Octavia::L7Rule
    properties: {l7policy: {get_resource: policy}, type: PATH, compare_type: STARTS_WITH,
                 value: /admin}
outputs:
  vip: {value: {get_attr: [lb, vip_address]}}
  member_address: {value: {get_attr: [member1, address]}}
  web1: {value: {get_attr: [web1, first_address]}}
  pool_members: {value: {get_attr: [pool, show, members]}}
  net_subnets: {value: {get_attr: [net, subnets]}}
  net_show_subnets: {value: {get_attr: [net, show, subnets]}}
"""
FILES = {"lb_member.yaml": """
heat_template_version: 2018-08-31
parameters:
  pool: {type: string}
resources:
  member:
    type: OS::Octavia::PoolMember
    properties: {pool: {get_param: pool}, address: 10.61.0.50, protocol_port: 80}
"""}
MEMBER2 = """  member2:
    type: OS::Octavia::PoolMember
    properties: {pool: {get_resource: pool}, address: {get_attr: [web2, first_address]},
                 protocol_port: 80, subnet: {get_resource: subnet}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"lbaas-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_a_load_balancer_with_a_pool_of_two_servers(hc, live_service):
    _, stack_id = create(hc, LOAD_BALANCER, files=FILES)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert out["vip"].startswith("10.61.0.")
    assert out["member_address"] == out["web1"]
    pool = cloud(live_service, f'print(json.dumps(c.object_get("pool", "{ids["pool"]}")))')
    assert pool["healthmonitor_id"] == ids["monitor"]
    grouped = [r.physical_resource_id for r in hc.resources.list(ids["grouped"], nested_depth=1)
               if r.resource_type == "OS::Octavia::PoolMember"]
    assert sorted(m["id"] for m in pool["members"]) == \
        sorted([ids["member1"], ids["member2"], *grouped])
    assert ids["member1"].startswith(f"{ids['pool']}/")
    # The pool's show lists the members made after it, the network's its subnet: Heat
    # reads ``show`` live (read again here after each member's, subnet's action); the
    # other attributes are as their resource's own action stored them, as Heat caches
    # them (the network's ``subnets`` when it was made: none yet)
    assert out["pool_members"] == pool["members"]
    assert out["net_show_subnets"] == [ids["subnet"]]
    assert out["net_subnets"] == []

    hc.stacks.update(stack_id, template=LOAD_BALANCER, files=FILES, parameters={"weight": 5})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    after = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}
    assert after == ids
    member = cloud(live_service, f'print(json.dumps(c.object_get("member", "{ids["member1"]}")))')
    assert member["weight"] == 5 and member["provisioning_status"] == "ACTIVE"
    refused = cloud(live_service, f"""
try:
    c.object_delete("loadbalancer", "{ids['lb']}"); print(json.dumps("allowed"))
except CloudError as e:
    print(json.dumps(str(e)))""")
    assert "it has children" in refused

    hc.stacks.update(stack_id, template=LOAD_BALANCER.replace(MEMBER2, ""), files=FILES,
                     parameters={"weight": 5})  # a member removed: the pool lists one
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert sorted(m["id"] for m in out["pool_members"]) == sorted([ids["member1"], *grouped])
    # the group shrinks: its member's nested stack is deleted (a DELETE of that stack), the
    # pool's show read again
    # (heat-tempest-plugin's test_add_delete_poolmember)
    hc.stacks.update(stack_id, existing=True, parameters={"grouped": 0})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert [m["id"] for m in out["pool_members"]] == [ids["member1"]]

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    gone = cloud(live_service, f"""print(json.dumps([c.object_get(k, i) for k, i in [
    ("loadbalancer", "{ids['lb']}"), ("listener", "{ids['listener']}"),
    ("pool", "{ids['pool']}"), ("member", "{ids['member1']}"),
    ("health_monitor", "{ids['monitor']}"), ("l7policy", "{ids['policy']}"),
    ("l7rule", "{ids['rule']}")]]))""")
    assert gone == [None] * 7
