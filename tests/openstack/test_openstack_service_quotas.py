"""An admin's Cinder and Octavia quotas and an Octavia flavor of a flavor profile on the
real cloud, each checked with openstacksdk: limits set at create, changed in place by an
update, back to the service's defaults after delete; the flavor and its profile gone.
"""
import json
import uuid

import pytest

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.test_openstack_admin_stack import _stack_gone, admin, cleanup, \
    physical  # noqa: F401

pytestmark = pytest.mark.openstack


def template(tag, *, volumes, loadbalancers, description):
    return {"heat_template_version": "2018-08-31", "resources": {
        "project": {"type": "OS::Keystone::Project", "properties": {"name": f"{tag}-project"}},
        "volume_quota": {"type": "OS::Cinder::Quota", "properties": {
            "project": {"get_resource": "project"}, "volumes": volumes, "gigabytes": 70}},
        "lb_quota": {"type": "OS::Octavia::Quota", "properties": {
            "project": {"get_resource": "project"}, "loadbalancer": loadbalancers,
            "listener": -1}},
        "profile": {"type": "OS::Octavia::FlavorProfile", "properties": {
            "name": f"{tag}-profile", "provider_name": "amphora",
            "flavor_data": json.dumps({"loadbalancer_topology": "SINGLE"})}},
        "flavor": {"type": "OS::Octavia::Flavor", "properties": {
            "name": f"{tag}-flavor", "flavor_profile": {"get_resource": "profile"},
            "description": description}},
    }, "outputs": {"profile_id": {"value": {"get_attr": ["flavor", "flavor_profile_id"]}}}}


def test_an_admins_cinder_and_octavia_quotas_and_octavia_flavor(admin, admin_cloud,  # noqa: F811
                                                                 cleanup):  # noqa: F811
    heat, tag = admin.heat, f"svq{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(
        tag, volumes=7, loadbalancers=3, description="small"))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)
    project = ids["project"]

    volumes = admin_cloud.block_storage.get_quota_set(project)
    assert (volumes.volumes, volumes.gigabytes) == (7, 70)
    balancers = admin_cloud.load_balancer.get_quota(project)
    assert (balancers.load_balancers, balancers.listeners) == (3, -1)
    flavor = admin_cloud.load_balancer.get_flavor(ids["flavor"])
    assert (flavor.name, flavor.flavor_profile_id, flavor.description) == \
        (f"{tag}-flavor", ids["profile"], "small")
    profile = admin_cloud.load_balancer.get_flavor_profile(ids["profile"])
    assert json.loads(profile.flavor_data) == {"loadbalancer_topology": "SINGLE"}
    outputs = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert outputs["profile_id"] == ids["profile"]

    heat.stacks.update(stack_id, template=template(tag, volumes=9, loadbalancers=5,
                                                   description="larger"))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id) == ids  # all in place
    assert admin_cloud.block_storage.get_quota_set(project).volumes == 9
    assert admin_cloud.load_balancer.get_quota(project).load_balancers == 5
    assert admin_cloud.load_balancer.get_flavor(ids["flavor"]).description == "larger"

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert admin_cloud.load_balancer.find_flavor(f"{tag}-flavor") is None
    assert admin_cloud.load_balancer.find_flavor_profile(f"{tag}-profile") is None
    assert admin_cloud.identity.find_project(f"{tag}-project") is None
