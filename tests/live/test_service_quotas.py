"""Cinder's and Octavia's quotas and Octavia's flavors through python-heatclient against
the live service on the simulated cloud: the limits as set and updated in place, the
flavor of its profile, Heat's refusals (no limit given, flavor data that is not JSON).
"""
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  volumes: {type: number}
resources:
  project: {type: OS::Keystone::Project}
  volume_quota:
    type: OS::Cinder::Quota
    properties: {project: {get_resource: project}, volumes: {get_param: volumes},
                 snapshots: 4}
  lb_quota:
    type: OS::Octavia::Quota
    properties: {project: {get_resource: project}, loadbalancer: 2, healthmonitor: -1}
  profile:
    type: OS::Octavia::FlavorProfile
    properties: {provider_name: amphora, flavor_data: '{"loadbalancer_topology": "SINGLE"}'}
  flavor:
    type: OS::Octavia::Flavor
    properties: {flavor_profile: {get_resource: profile}}
outputs:
  profile_id: {value: {get_attr: [flavor, flavor_profile_id]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"quotas-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_quotas_and_a_flavor_of_a_profile(hc, live_service):
    _, stack_id = create(hc, TEMPLATE, parameters={"volumes": 7})
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == \
        {"profile_id": ids["profile"]}
    read = f"""print(json.dumps([c.object_get("volume_quota", "{ids['volume_quota']}"),
    c.object_get("lb_quota", "{ids['lb_quota']}"), c.object_get("lb_flavor", "{ids['flavor']}")]))"""
    volumes, balancers, flavor = cloud(live_service, read)
    assert (volumes["volumes"], volumes["snapshots"]) == (7, 4)
    assert (balancers["load_balancer"], balancers["health_monitor"]) == (2, -1)
    assert (flavor["flavor_profile_id"], flavor["enabled"], flavor["description"]) == \
        (ids["profile"], True, "")

    hc.stacks.update(stack_id, template=TEMPLATE, parameters={"volumes": 9})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert {r.resource_name: r.physical_resource_id
            for r in hc.resources.list(stack_id)} == ids  # in place
    assert cloud(live_service, read)[0]["volumes"] == 9

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert cloud(live_service, read)[2] is None


@pytest.mark.parametrize("resources, message", [
    ({"q": {"type": "OS::Cinder::Quota", "properties": {"project": "p"}}},
     "At least one of the following properties must be specified: gigabytes, snapshots, "
     "volumes"),
    ({"q": {"type": "OS::Octavia::Quota", "properties": {"project": "p"}}},
     "At least one of the following properties must be specified: healthmonitor, listener, "
     "loadbalancer, member, pool"),
    ({"p": {"type": "OS::Octavia::FlavorProfile", "properties": {"flavor_data": "{nope"}}},
     "Value must be a valid JSON string"),
])
def test_heats_refusals(hc, resources, message):
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.create(stack_name=f"bad{uuid.uuid4().hex[:6]}", template={
            "heat_template_version": "2018-08-31", "resources": resources})
    assert message in str(refused.value)
