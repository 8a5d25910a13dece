"""Parameters' custom constraints are checked against the cloud, as Heat checks them: a
network, subnet or key pair that does not exist is a 400 at validate, create and update
(naming the parameter and value), one that exists (by name or id) passes; ip_addr,
net_cidr and mac_addr check the value's form."""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import wait_deleted, wait_stack

pytestmark = pytest.mark.live

NETWORK = """
heat_template_version: 2018-08-31
resources:
  net:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.77.0.0/24}
  key:
    type: OS::Nova::KeyPair
    properties: {name: {list_join: ["-", ["cc", {get_param: "OS::stack_id"}]]}}
outputs:
  net: {value: {get_resource: net}}
  net_name: {value: {get_attr: [net, name]}}
  subnet: {value: {get_resource: subnet}}
  key: {value: {get_resource: key}}
"""

CONSTRAINED = """
heat_template_version: 2018-08-31
parameters:
  network:
    type: string
    constraints: [{custom_constraint: neutron.network}]
  subnet:
    type: string
    constraints: [{custom_constraint: neutron.subnet}]
  key_name:
    type: string
    constraints: [{custom_constraint: nova.keypair}]
  address:
    type: string
    default: 10.77.0.10
    constraints: [{custom_constraint: ip_addr}]
  image:
    type: string
    default: cirros
    constraints: [{custom_constraint: glance.image}]
resources:
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_param: network}
      fixed_ips: [{subnet: {get_param: subnet}, ip_address: {get_param: address}}]
outputs:
  ip: {value: {get_attr: [port, fixed_ips, 0, ip_address]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    return live_service.heat()


@pytest.fixture(scope="module")
def cloud(hc):
    """The outputs of a stack holding a network, its subnet and a key pair."""
    stack_id = hc.stacks.create(stack_name=f"cc-net-{uuid.uuid4().hex[:6]}",
                                template=NETWORK)["stack"]["id"]
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    yield {o["output_key"]: o["output_value"] for o in stack.outputs}
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def _refused(call, match):
    with pytest.raises(heat_exc.HTTPBadRequest) as caught:
        call()
    error = caught.value.error["error"]
    assert error["type"] == "StackValidationFailed" and match in error["message"], error


def test_a_missing_network_is_refused_at_validate_and_create(hc, cloud):
    params = {"network": "no-such-network", "subnet": cloud["subnet"],
              "key_name": cloud["key"]}
    expected = "Parameter 'network' is invalid: Error validating value 'no-such-network'"
    _refused(lambda: hc.stacks.validate(template=CONSTRAINED, parameters=params), expected)
    name = f"cc-bad-{uuid.uuid4().hex[:6]}"
    _refused(lambda: hc.stacks.create(stack_name=name, template=CONSTRAINED,
                                      parameters=params), expected)
    assert not [s for s in hc.stacks.list() if s.stack_name == name]


@pytest.mark.parametrize("param, value", [("subnet", "no-such-subnet"),
                                          ("key_name", "no-such-key"),
                                          ("address", "10.77.0.300")])
def test_each_constraint_names_its_parameter(hc, cloud, param, value):
    params = {"network": cloud["net"], "subnet": cloud["subnet"], "key_name": cloud["key"],
              param: value}
    _refused(lambda: hc.stacks.validate(template=CONSTRAINED, parameters=params),
             f"Parameter '{param}' is invalid: Error validating value '{value}'")


def test_existing_objects_by_name_or_id_pass_and_an_update_is_checked(hc, cloud):
    result = hc.stacks.validate(template=CONSTRAINED, parameters={
        "network": cloud["net_name"], "subnet": cloud["subnet"], "key_name": cloud["key"]})
    assert result["Parameters"]["network"]["CustomConstraint"] == "neutron.network"
    stack_id = hc.stacks.create(
        stack_name=f"cc-ok-{uuid.uuid4().hex[:6]}", template=CONSTRAINED,
        parameters={"network": cloud["net"], "subnet": cloud["subnet"],
                    "key_name": cloud["key"]})["stack"]["id"]
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    assert stack.outputs[0]["output_value"] == "10.77.0.10"
    _refused(lambda: hc.stacks.update(stack_id, existing=True,
                                      parameters={"key_name": "no-such-key"}),
             "Parameter 'key_name' is invalid: Error validating value 'no-such-key'")
    assert hc.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"  # not started
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_a_parameter_not_given_is_not_looked_up_at_validate(hc, cloud):
    result = hc.stacks.validate(template=CONSTRAINED, parameters={
        "network": cloud["net"], "subnet": cloud["subnet"]})
    assert result["Parameters"]["key_name"]["CustomConstraint"] == "nova.keypair"
