"""Nova, Neutron and Keystone types through python-heatclient against the live service
on the simulated cloud: a cloud admin's configuration stack, update in place versus
replace, Neutron's refusals a template can meet, and types of missing services.
"""
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

CONFIGURATION = """
heat_template_version: 2018-08-31
parameters:
  ram: {type: number, default: 512}
  specs: {type: json, default: {"hw:cpu_policy": "shared"}}
  project_description: {type: string, default: first}
resources:
  flavor:
    type: OS::Nova::Flavor
    properties: {ram: {get_param: ram}, vcpus: 1, disk: 1,
                 extra_specs: {get_param: specs}}
  public:
    type: OS::Neutron::ProviderNet
    properties: {network_type: flat, physical_network: public, router_external: true}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.24.4.0/24, enable_dhcp: false}
  private:
    type: OS::Neutron::Net
  private_subnet:
    type: OS::Neutron::Subnet
    properties: {network_id: {get_resource: private}, cidr: 10.20.0.0/24}
  router:
    type: OS::Neutron::Router
    depends_on: public_subnet
    properties:
      external_gateway_info: {network: {get_resource: public}}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: private_subnet}}
  group:
    type: OS::Neutron::SecurityGroup
    properties: {rules: []}
  ssh:
    type: OS::Neutron::SecurityGroupRule
    properties: {security_group: {get_resource: group}, protocol: tcp,
                 port_range_min: 22, port_range_max: 22, remote_ip_prefix: 0.0.0.0/0}
  port:
    type: OS::Neutron::Port
    depends_on: private_subnet
    properties: {network: {get_resource: private},
                 security_groups: [{get_resource: group}]}
  fip:
    type: OS::Neutron::FloatingIP
    depends_on: [interface, router]
    properties: {floating_network: {get_resource: public}, port_id: {get_resource: port}}
  key:
    type: OS::Nova::KeyPair
    properties: {name: {list_join: ['-', [{get_param: 'OS::stack_name'}, key]]},
                 save_private_key: true}
  servers:
    type: OS::Nova::ServerGroup
    properties: {policies: [affinity]}
  project:
    type: OS::Keystone::Project
    properties: {description: {get_param: project_description}}
  user:
    type: OS::Keystone::User
    properties: {default_project: {get_resource: project}, password: s3cret}
  role:
    type: OS::Keystone::Role
  member:
    type: OS::Keystone::UserRoleAssignment
    properties:
      user: {get_resource: user}
      roles: [{role: {get_resource: role}, project: {get_resource: project}}]
outputs:
  flavor_specs: {value: {get_attr: [flavor, extra_specs]}}
  gateway: {value: {get_attr: [router, external_gateway_info]}}
  floating_ip: {value: {get_attr: [fip, floating_ip_address]}}
  fixed_ip: {value: {get_attr: [fip, fixed_ip_address]}}
  port_ip: {value: {get_attr: [port, fixed_ips, 0, ip_address]}}
  private_key: {value: {get_attr: [key, private_key]}}
  public_key: {value: {get_attr: [key, public_key]}}
  key_ref: {value: {get_resource: key}}
  project_description: {value: {get_attr: [project, description]}}
  user_project: {value: {get_attr: [user, default_project_id]}}
  project_id: {value: {get_resource: project}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"rtypes-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def outputs(hc, stack_id):
    stack = hc.stacks.get(stack_id)
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def physical_ids(hc, stack_id):
    return {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}


def test_a_cloud_admins_configuration_stack(hc):
    name, stack_id = create(hc, CONFIGURATION)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert out["flavor_specs"] == {"hw:cpu_policy": "shared"}
    assert out["gateway"]["external_fixed_ips"][0]["ip_address"].startswith("172.24.4.")
    assert out["floating_ip"].startswith("172.24.4.")
    assert out["fixed_ip"] == out["port_ip"] and out["port_ip"].startswith("10.20.0.")
    assert out["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert out["public_key"].startswith("ssh-rsa ")
    assert out["key_ref"] == f"{name}-key"  # a key pair is known by its name
    assert out["project_description"] == "first"
    assert out["user_project"] == out["project_id"]
    before = physical_ids(hc, stack_id)
    assert all(before.values()), before

    # extra_specs and a project's description update in place; ram replaces the flavor
    hc.stacks.update(stack_id, template=CONFIGURATION, parameters={
        "specs": '{"hw:cpu_policy": "dedicated"}', "project_description": "second"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    after = physical_ids(hc, stack_id)
    assert after == before
    out = outputs(hc, stack_id)
    assert out["flavor_specs"] == {"hw:cpu_policy": "dedicated"}
    assert out["project_description"] == "second"

    hc.stacks.update(stack_id, template=CONFIGURATION, parameters={"ram": 1024},
                     existing=True)
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    replaced = physical_ids(hc, stack_id)
    assert replaced["flavor"] != before["flavor"]
    assert {k: v for k, v in replaced.items() if k != "flavor"} == \
        {k: v for k, v in before.items() if k != "flavor"}

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


UNREACHABLE = """
heat_template_version: 2018-08-31
resources:
  public:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.25.0.0/24}
  private:
    type: OS::Neutron::Net
  private_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: private}, cidr: 10.30.0.0/24}
  port:
    type: OS::Neutron::Port
    depends_on: private_subnet
    properties: {network: {get_resource: private}}
  fip:
    type: OS::Neutron::FloatingIP
    depends_on: [public_subnet]
    properties: {floating_network: {get_resource: public}, port_id: {get_resource: port}}
"""


def test_a_floating_ip_needs_a_router_to_its_port_as_in_neutron(hc):
    _, stack_id = create(hc, UNREACHABLE, disable_rollback=True)
    stack = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "is not reachable from subnet" in stack.stack_status_reason
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_a_router_gateway_must_be_on_an_external_network(hc):
    template = """
heat_template_version: 2018-08-31
resources:
  net: {type: OS::Neutron::Net}
  router:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {network: {get_resource: net}}}
"""
    _, stack_id = create(hc, template, disable_rollback=True)
    stack = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "is not a valid external network" in stack.stack_status_reason
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_a_type_of_a_missing_service_is_unavailable(hc):
    template = """
heat_template_version: 2018-08-31
resources:
  container:
    type: OS::Zun::Container
    properties: {image: cirros}
"""
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template=template)
    assert raised.value.error["error"]["type"] == "ResourceTypeUnavailable"
    assert ("HEAT-E99001 Service zun is not available for resource type "
            "OS::Zun::Container, reason: zun container endpoint is not in service "
            "catalog.") in str(raised.value)
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.resource_types.get("OS::Zun::Container")
    assert raised.value.error["error"]["type"] == "ResourceTypeUnavailable"
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.resource_types.get("OS::Zun::NoSuchType")


def test_the_new_types_are_listed_and_described(hc):
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Nova::Flavor", "OS::Neutron::Router", "OS::Neutron::FloatingIP",
            "OS::Keystone::UserRoleAssignment"} <= listed
    assert not any(t.startswith("OS::Zun::") or t.startswith("OS::Sahara::")
                   for t in listed)
    flavor = hc.resource_types.get("OS::Nova::Flavor")
    assert flavor["properties"]["extra_specs"]["update_allowed"] is True
    assert flavor["properties"]["ram"]["update_allowed"] is False
    assert flavor["properties"]["ram"]["required"] is True


def net_template(**net):
    return {"heat_template_version": "2016-10-14",
            "resources": {"net": {"type": "OS::Neutron::Net", **net}},
            "outputs": {"ref": {"value": {"get_resource": "net"}},
                        "name": {"value": {"get_attr": ["net", "name"]}}}}


def test_external_id_takes_an_object_no_one_holds_and_never_deletes_it(hc):
    owner_name, owner = create(hc, net_template(properties={"name": "adopted-net"},
                                                deletion_policy="Retain"))
    wait_stack(hc, owner, "CREATE_COMPLETE")
    net_id = outputs(hc, owner)["ref"]
    # Held by the owner's resource: not taken (409, nothing stored).
    with pytest.raises(heat_exc.HTTPConflict) as refused:
        create(hc, net_template(external_id=net_id))
    assert refused.value.error["error"]["type"] == "ObjectHeld"
    assert f"is held by resource net of stack {owner_name}" in str(refused.value)
    hc.stacks.delete(owner)
    wait_deleted(hc, owner)  # retained: the network stays, held by no one

    _, adopter = create(hc, net_template(external_id=net_id))
    wait_stack(hc, adopter, "CREATE_COMPLETE")
    assert outputs(hc, adopter) == {"ref": net_id, "name": "adopted-net"}
    assert physical_ids(hc, adopter)["net"] == net_id

    # changing (or removing) external_id in an update is refused, as Heat refuses it
    hc.stacks.update(adopter, template=net_template(properties={"name": "x"}))
    stack = wait_stack(hc, adopter, "UPDATE_FAILED")
    assert "NotSupported: resources.net: Update to property external_id of net " \
           "(OS::Neutron::Net) is not supported." in stack.stack_status_reason

    hc.stacks.delete(adopter)
    wait_deleted(hc, adopter)
    # Never deleted by the external resource: an adopt takes it (and its delete deletes it).
    taker = hc.stacks.create(stack_name=f"taker{uuid.uuid4().hex[:6]}", adopt_stack_data={
        "template": net_template(), "resources": {"net": {
            "resource_id": net_id, "type": "OS::Neutron::Net"}}})["stack"]["id"]
    wait_stack(hc, taker, "ADOPT_COMPLETE")
    assert outputs(hc, taker)["name"] == "adopted-net"
    hc.stacks.delete(taker)
    wait_deleted(hc, taker)
    with pytest.raises(heat_exc.HTTPNotFound):  # gone now
        create(hc, net_template(external_id=net_id))


def test_external_id_of_a_missing_object_is_refused_before_anything_is_stored(hc):
    with pytest.raises(heat_exc.HTTPNotFound) as refused:
        create(hc, net_template(external_id="no-such-net"), disable_rollback=True)
    assert "The network (no-such-net) could not be found." in str(refused.value)


def test_heats_global_aliases_reach_older_templates(hc):
    """Heat's global environment maps old names: OS::Quantum::* to Neutron's types, and the
    Ceilometer alarms to Aodh's (the simulated cloud has Aodh's alarms)."""
    quantum = {"heat_template_version": "2013-05-23", "resources": {
        "net": {"type": "OS::Quantum::Net", "properties": {"name": "old-style"}},
        "subnet": {"type": "OS::Quantum::Subnet", "properties": {
            "network_id": {"get_resource": "net"}, "cidr": "10.33.0.0/24"}}},
        "outputs": {"cidr": {"value": {"get_attr": ["subnet", "cidr"]}}}}
    _, stack_id = create(hc, quantum)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    assert outputs(hc, stack_id)["cidr"] == "10.33.0.0/24"
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    alarm = {"heat_template_version": "2013-05-23", "resources": {"cpu": {
        "type": "OS::Ceilometer::Alarm", "properties": {
            "meter_name": "cpu_util", "statistic": "avg", "period": 60,
            "evaluation_periods": 1, "threshold": 50, "comparison_operator": "gt"}}}}
    hc.stacks.validate(template=alarm)
    _, stack_id = create(hc, alarm)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    assert hc.resources.get(stack_id, "cpu").resource_type == "OS::Ceilometer::Alarm"
