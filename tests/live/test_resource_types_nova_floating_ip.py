"""Heat's hidden ``OS::Nova::FloatingIP`` and ``FloatingIPAssociation`` through
python-heatclient against the live service on the simulated cloud: a floating IP of a
pool associated with a server's first port, the association moved to another server in
place, the floating IP replaced when its pool changes, delete; a bad pool fails the
resource with Neutron's reason; the types are neither listed nor described, as in Heat.
"""
import re
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_resource_types_cloud import outputs, physical_ids
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

NOVA_FIP = """
heat_template_version: 2016-10-14
parameters:
  pool_by_id: {type: boolean, default: false}
  on_b: {type: boolean, default: false}
conditions:
  by_id: {get_param: pool_by_id}
  b: {get_param: on_b}
resources:
  public:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.27.8.0/24, enable_dhcp: false}
  private:
    type: OS::Neutron::Net
  private_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: private}, cidr: 10.88.0.0/24}
  router:
    type: OS::Neutron::Router
    depends_on: public_subnet
    properties: {external_gateway_info: {network: {get_resource: public}}}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: private_subnet}}
  server_a:
    type: OS::Nova::Server
    depends_on: private_subnet
    properties: {image: cirros, flavor: m1.small, networks: [{network: {get_resource: private}}]}
  server_b:
    type: OS::Nova::Server
    depends_on: private_subnet
    properties: {image: cirros, flavor: m1.small, networks: [{network: {get_resource: private}}]}
  fip:
    type: OS::Nova::FloatingIP
    depends_on: public_subnet
    properties:
      pool: {if: [by_id, {get_resource: public}, {get_attr: [public, name]}]}
  association:
    type: OS::Nova::FloatingIPAssociation
    depends_on: interface
    properties:
      floating_ip: {get_resource: fip}
      server_id: {if: [b, {get_resource: server_b}, {get_resource: server_a}]}
outputs:
  ip: {value: {get_attr: [fip, ip]}}
  pool: {value: {get_attr: [fip, pool]}}
  public: {value: {get_resource: public}}
  association: {value: {get_attr: [association, show]}}
  association_ref: {value: {get_resource: association}}
  fip_ref: {value: {get_resource: fip}}
  a_port: {value: {get_attr: [server_a, addresses, {get_resource: private}, 0, port]}}
  a_addr: {value: {get_attr: [server_a, addresses, {get_resource: private}, 0, addr]}}
  b_port: {value: {get_attr: [server_b, addresses, {get_resource: private}, 0, port]}}
  b_addr: {value: {get_attr: [server_b, addresses, {get_resource: private}, 0, addr]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"novafip-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def floating_ip(live_service, fip_id):
    return cloud(live_service, f"print(json.dumps(c.object_get('floating_ip', {fip_id!r})))")


def test_a_nova_floating_ip_follows_its_server_and_is_replaced_with_its_pool(hc, live_service):
    hc.stacks.validate(template=NOVA_FIP)
    _, stack_id = create(hc, NOVA_FIP)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert out["pool"] == out["public"]  # the network's id, though named by its name
    assert out["ip"].startswith("172.27.8.")
    assert out["association_ref"] == out["fip_ref"]
    assert (out["association"]["port_id"], out["association"]["fixed_ip_address"]) == \
        (out["a_port"], out["a_addr"])
    found = floating_ip(live_service, out["fip_ref"])
    assert (found["floating_ip_address"], found["port_id"], found["status"]) == \
        (out["ip"], out["a_port"], "ACTIVE")
    before = physical_ids(hc, stack_id)

    # Another server: the association moves in place, the floating IP is the same one.
    hc.stacks.update(stack_id, template=NOVA_FIP, parameters={"on_b": True})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert physical_ids(hc, stack_id) == before
    assert (out["association"]["port_id"], out["association"]["fixed_ip_address"]) == \
        (out["b_port"], out["b_addr"])
    assert floating_ip(live_service, out["fip_ref"])["port_id"] == out["b_port"]

    # The pool changes (its id for its name): a new floating IP replaces the old one, the
    # association takes it in place, and the old one is deleted.
    old_fip = out["fip_ref"]
    hc.stacks.update(stack_id, template=NOVA_FIP, parameters={"on_b": True,
                                                               "pool_by_id": True})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    after = physical_ids(hc, stack_id)
    assert after["fip"] != old_fip and after["association"] == after["fip"]
    assert out["association"]["port_id"] == out["b_port"]
    assert floating_ip(live_service, after["fip"])["port_id"] == out["b_port"]
    assert floating_ip(live_service, old_fip) is None
    assert {k: v for k, v in after.items() if k not in ("fip", "association")} == \
        {k: v for k, v in before.items() if k not in ("fip", "association")}

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert floating_ip(live_service, after["fip"]) is None


def _failed(hc, template):
    _, stack_id = create(hc, template, disable_rollback=True)
    wait_stack(hc, stack_id, "CREATE_FAILED")
    failed = {r.resource_name: r.resource_status_reason for r in hc.resources.list(stack_id)
              if r.resource_status == "CREATE_FAILED"}
    return stack_id, failed


def test_a_bad_pool_fails_the_floating_ip_with_neutrons_reason(hc):
    missing = """
heat_template_version: 2018-08-31
resources:
  fip:
    type: OS::Nova::FloatingIP
    properties: {pool: no-such-pool}
"""
    hc.stacks.validate(template=missing)  # as in Heat, the pool is looked up at create
    stack_id, failed = _failed(hc, missing)
    assert "Network no-such-pool could not be found" in failed["fip"]
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)

    not_external = """
heat_template_version: 2018-08-31
resources:
  internal:
    type: OS::Neutron::Net
  fip:
    type: OS::Nova::FloatingIP
    properties: {pool: {get_resource: internal}}
"""
    stack_id, failed = _failed(hc, not_external)
    internal = hc.resources.get(stack_id, "internal").physical_resource_id
    assert (f"Bad floatingip request: Network {internal} is not a valid external network"
            in failed["fip"])
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_without_a_pool_it_needs_the_clouds_one_external_network(hc):
    # The simulated cloud is shared by the tests: this stack makes sure it has several.
    template = """
heat_template_version: 2018-08-31
resources:
  one:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  two:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  fip:
    type: OS::Nova::FloatingIP
    depends_on: [one, two]
"""
    stack_id, failed = _failed(hc, template)
    found = re.search(r"Expected 1 external network, found (\d+)", failed["fip"])
    assert found and int(found.group(1)) >= 2, failed
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_an_association_needs_a_server_with_a_port(hc):
    template = """
heat_template_version: 2018-08-31
resources:
  public:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.27.9.0/24, enable_dhcp: false}
  fip:
    type: OS::Nova::FloatingIP
    depends_on: public_subnet
    properties: {pool: {get_resource: public}}
  association:
    type: OS::Nova::FloatingIPAssociation
    properties: {server_id: 6c1a3f2e-0000-4000-8000-000000000000,
                 floating_ip: {get_resource: fip}}
"""
    stack_id, failed = _failed(hc, template)
    assert list(failed) == ["association"]
    assert "The server (6c1a3f2e-0000-4000-8000-000000000000) could not be found." in \
        failed["association"]
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_the_nova_floating_ip_types_are_hidden_as_in_heat(hc):
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert "OS::Neutron::FloatingIP" in listed
    for type_name in ("OS::Nova::FloatingIP", "OS::Nova::FloatingIPAssociation"):
        assert type_name not in listed
        with pytest.raises(heat_exc.HTTPBadRequest) as raised:
            hc.resource_types.get(type_name)
        assert raised.value.error["error"]["type"] == "NotSupported"
