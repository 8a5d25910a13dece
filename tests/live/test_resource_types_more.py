"""More Neutron, Nova and Keystone types through python-heatclient on the simulated
cloud: floating IP associations, extra routes, trunks, QoS, subnet pools, aggregates,
quotas, and Keystone groups, domains, regions, services and endpoints; what updates
in place keeps its physical id, and what Neutron refuses fails the resource.
"""
import ipaddress
import uuid
from pathlib import Path

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_resource_types_cloud import outputs, physical_ids
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

ROUTED = """
heat_template_version: 2018-08-31
parameters:
  second: {type: boolean, default: false}
  routes: {type: json, default: [{destination: 192.168.10.0/24, nexthop: 10.40.0.20}]}
conditions:
  on_second: {get_param: second}
resources:
  public:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.26.0.0/24}
  private:
    type: OS::Neutron::Net
  private_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: private}, cidr: 10.40.0.0/24}
  router:
    type: OS::Neutron::Router
    depends_on: public_subnet
    properties: {external_gateway_info: {network: {get_resource: public}}}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router_id: {get_resource: router}, subnet_id: {get_resource: private_subnet}}
  first:
    type: OS::Neutron::Port
    depends_on: private_subnet
    properties: {network: {get_resource: private}}
  second:
    type: OS::Neutron::Port
    depends_on: private_subnet
    properties: {network: {get_resource: private}}
  fip:
    type: OS::Neutron::FloatingIP
    depends_on: public_subnet
    properties: {floating_network: {get_resource: public}}
  association:
    type: OS::Neutron::FloatingIPAssociation
    depends_on: interface
    properties:
      floatingip_id: {get_resource: fip}
      port_id: {if: [on_second, {get_resource: second}, {get_resource: first}]}
  routes:
    type: OS::Neutron::ExtraRouteSet
    depends_on: interface
    properties: {router: {get_resource: router}, routes: {get_param: routes}}
  qos:
    type: OS::Neutron::QoSPolicy
  limit:
    type: OS::Neutron::QoSBandwidthLimitRule
    properties: {policy: {get_resource: qos}, max_kbps: 1000}
  dscp:
    type: OS::Neutron::QoSDscpMarkingRule
    properties: {policy: {get_resource: qos}, dscp_mark: 16}
  trunk_parent:
    type: OS::Neutron::Port
    depends_on: private_subnet
    properties: {network: {get_resource: private}, qos_policy: {get_resource: qos}}
  trunk:
    type: OS::Neutron::Trunk
    properties:
      port: {get_resource: trunk_parent}
      sub_ports: [{port: {get_resource: second}, segmentation_type: vlan,
                   segmentation_id: 101}]
  scope:
    type: OS::Neutron::AddressScope
  pool:
    type: OS::Neutron::SubnetPool
    properties: {prefixes: [10.128.0.0/16], address_scope: {get_resource: scope}}
outputs:
  association: {value: {get_attr: [association, show]}}
  first_ip: {value: {get_attr: [first, fixed_ips, 0, ip_address]}}
  second_ip: {value: {get_attr: [second, fixed_ips, 0, ip_address]}}
  first_id: {value: {get_resource: first}}
  second_id: {value: {get_resource: second}}
  routes: {value: {get_attr: [routes, show, routes]}}
  limit: {value: {get_attr: [limit, show]}}
  dscp: {value: {get_attr: [dscp, show, dscp_mark]}}
  qos_id: {value: {get_resource: qos}}
  trunk_subports: {value: {get_attr: [trunk, sub_ports]}}
  pool_scope: {value: {get_attr: [pool, address_scope_id]}}
  scope_id: {value: {get_resource: scope}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"rmore-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_association_routes_trunk_qos_and_pools(hc):
    _, stack_id = create(hc, ROUTED)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert (out["association"]["port_id"], out["association"]["fixed_ip_address"]) == \
        (out["first_id"], out["first_ip"])
    assert out["routes"] == [{"destination": "192.168.10.0/24", "nexthop": "10.40.0.20"}]
    assert (out["limit"]["max_kbps"], out["limit"]["max_burst_kbps"], out["dscp"]) == \
        (1000, 0, 16)
    assert out["limit"]["qos_policy_id"] == out["qos_id"]
    assert out["trunk_subports"][0]["segmentation_id"] == 101
    assert out["pool_scope"] == out["scope_id"]
    before = physical_ids(hc, stack_id)

    # the association moves to the other port and the route set changes, both in place
    hc.stacks.update(stack_id, template=ROUTED, parameters={
        "second": True,
        "routes": '[{"destination": "192.168.20.0/24", "nexthop": "10.40.0.30"}]'})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert (out["association"]["port_id"], out["association"]["fixed_ip_address"]) == \
        (out["second_id"], out["second_ip"])
    assert out["routes"] == [{"destination": "192.168.20.0/24", "nexthop": "10.40.0.30"}]
    assert physical_ids(hc, stack_id) == before

    # a next hop on no subnet of the router is refused, as Neutron refuses it
    hc.stacks.update(stack_id, template=ROUTED, existing=True, parameters={
        "routes": '[{"destination": "192.168.30.0/24", "nexthop": "10.99.0.1"}]'})
    stack = wait_stack(hc, stack_id, "UPDATE_FAILED")
    assert "the nexthop is not connected with router" in stack.stack_status_reason

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


ADMIN = """
heat_template_version: 2018-08-31
parameters:
  cores: {type: number, default: 20}
  hosts: {type: comma_delimited_list, default: [compute-1]}
resources:
  project:
    type: OS::Keystone::Project
  quota:
    type: OS::Nova::Quota
    properties: {project: {get_resource: project}, cores: {get_param: cores}, instances: 10}
  aggregate:
    type: OS::Nova::HostAggregate
    properties: {name: fast, availability_zone: az1, hosts: {get_param: hosts},
                 metadata: {ssd: "true"}}
  domain:
    type: OS::Keystone::Domain
    properties: {description: a domain}
  group:
    type: OS::Keystone::Group
    properties:
      domain: {get_resource: domain}
      roles: [{role: {get_resource: role}, domain: {get_resource: domain}}]
  role:
    type: OS::Keystone::Role
  user:
    type: OS::Keystone::User
    properties:
      groups: [{get_resource: group}]
      roles: [{role: {get_resource: role}, project: {get_resource: project}}]
  group_roles:
    type: OS::Keystone::GroupRoleAssignment
    properties:
      group: {get_resource: group}
      roles: [{role: {get_resource: role}, project: {get_resource: project}}]
  region:
    type: OS::Keystone::Region
    properties: {id: {list_join: ['-', [{get_param: 'OS::stack_name'}, region]]}}
  service:
    type: OS::Keystone::Service
    properties: {type: dns, name: designate}
  endpoint:
    type: OS::Keystone::Endpoint
    properties: {service: {get_resource: service}, interface: public,
                 url: "http://dns.example.com", region: {get_resource: region}}
  keypair:
    type: OS::Nova::KeyPair
    properties:
      name: {list_join: ['-', [{get_param: 'OS::stack_name'}, key]]}
      public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB3Yb0l2j8g1hYqV7r3OjVb1I9B0+T0JmT8yQ3kcZx2f test
outputs:
  quota: {value: {get_attr: [quota, show]}}
  hosts: {value: {get_attr: [aggregate, show, hosts]}}
  region: {value: {get_resource: region}}
  endpoint_region: {value: {get_attr: [endpoint, show, region_id]}}
  public_key: {value: {get_attr: [keypair, public_key]}}
  private_key: {value: {get_attr: [keypair, private_key]}}
"""


def test_quotas_aggregates_and_keystone_objects(hc):
    name, stack_id = create(hc, ADMIN)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert (out["quota"]["cores"], out["quota"]["instances"]) == (20, 10)
    assert out["hosts"] == ["compute-1"]
    assert out["region"] == out["endpoint_region"] == f"{name}-region"
    assert out["public_key"].startswith("ssh-ed25519 ")
    assert out["private_key"] == ""  # imported, not generated: nothing to save
    before = physical_ids(hc, stack_id)

    hc.stacks.update(stack_id, template=ADMIN, parameters={"cores": 40,
                                                           "hosts": "compute-1,compute-2"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert out["quota"]["cores"] == 40 and out["hosts"] == ["compute-1", "compute-2"]
    assert physical_ids(hc, stack_id) == before

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_a_second_key_pair_of_one_name_is_refused(hc):
    template = """
heat_template_version: 2018-08-31
resources:
  one: {type: OS::Nova::KeyPair, properties: {name: twin}}
  two: {type: OS::Nova::KeyPair, depends_on: one, properties: {name: twin}}
"""
    _, stack_id = create(hc, template, disable_rollback=True)
    stack = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "Key pair with name twin already exists" in stack.stack_status_reason
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_lock_level_all_holds_the_new_types_without_a_physical_lock(hc):
    """None of these services has a lock of its own: level ``all`` locks the stack
    (heatweb refuses its delete) and records no physical lock for them."""
    template = """
heat_template_version: 2018-08-31
resources:
  flavor: {type: OS::Nova::Flavor, properties: {ram: 64, vcpus: 1}}
  router: {type: OS::Neutron::Router}
  project: {type: OS::Keystone::Project}
"""
    name, stack_id = create(hc, template)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    path = f"/stacks/{name}/{stack_id}/actions"
    hc.http_client.json_request("POST", path, data={"lock": {"level": "all"}})
    stack = wait_stack(hc, stack_id, "LOCK_COMPLETE")
    assert stack.to_dict().get("lock_level") == "all"
    events = [e.resource_status_reason or "" for e in hc.events.list(stack_id)]
    assert events.count("Resource locked (no physical object to lock)") == 3
    with pytest.raises(heat_exc.HTTPConflict):
        hc.stacks.delete(stack_id)
    hc.http_client.json_request("POST", path, data={"unlock": None})
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_subnets_take_their_cidr_from_a_subnet_pool(hc):
    template = (Path(__file__).parent / "corpus_rtypes" / "32_subnet_from_pool.yaml").read_text()
    _, stack_id = create(hc, template)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    first, second = (ipaddress.ip_network(out[key]) for key in ("first_cidr", "second_cidr"))
    pool = ipaddress.ip_network("10.210.0.0/16")
    # created side by side: either may take the pool's first prefix, never the same space
    assert (first.prefixlen, second.prefixlen) == (24, 26)
    assert first.subnet_of(pool) and second.subnet_of(pool) and not first.overlaps(second)
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def _routes_template(count):
    resources = {
        "private": {"type": "OS::Neutron::Net"},
        "private_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "private"}, "cidr": "10.41.0.0/24"}},
        "router": {"type": "OS::Neutron::Router"},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "private_subnet"}}},
        "set": {"type": "OS::Neutron::ExtraRouteSet", "properties": {
            "router": {"get_resource": "router"},
            "routes": [{"destination": "192.168.200.0/24", "nexthop": "10.41.0.200"}]}},
        **{f"route{i}": {"type": "OS::Neutron::ExtraRoute", "properties": {
            "router_id": {"get_resource": "router"}, "destination": f"192.168.{i}.0/24",
            "nexthop": f"10.41.0.{10 + i}"}} for i in range(count)}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _router_routes(live_service, router_id):
    return {tuple(r) for r in cloud(live_service, (
        f"print(json.dumps([[r['destination'], r['nexthop']] "
        f"for r in c.object_get('router', {router_id!r})['routes']]))"))}


def test_routes_added_to_one_router_at_once_are_all_kept(hc, live_service):
    """Eight route resources change one router's routes side by side (seen on the real
    cloud: a read-then-write of the list lost another resource's route)."""
    _, stack_id = create(hc, _routes_template(7))
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    router_id = physical_ids(hc, stack_id)["router"]
    assert _router_routes(live_service, router_id) == {("192.168.200.0/24", "10.41.0.200")} | \
        {(f"192.168.{i}.0/24", f"10.41.0.{10 + i}") for i in range(7)}
    hc.stacks.update(stack_id, template=_routes_template(2))
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert _router_routes(live_service, router_id) == {
        ("192.168.200.0/24", "10.41.0.200"), ("192.168.0.0/24", "10.41.0.10"),
        ("192.168.1.0/24", "10.41.0.11")}
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
