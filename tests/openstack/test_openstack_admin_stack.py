"""A cloud admin's configuration stack on the real cloud: a flavor, an external provider
network, a private network and subnet, a router with its gateway and interface (when
Neutron has its L3 plugin), a project, a user and a role assignment, each checked
directly in Nova, Neutron and Keystone with openstacksdk, and gone after delete.
"""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.keystone_support import Cloud as KeystoneCloud, keystone_service

pytestmark = pytest.mark.openstack


class Admin:
    """The cloud's ``admin`` as a Heat user: a Keystone token and python-heatclient."""

    def __init__(self, service, keystone):
        from heatclient import client

        token, body = keystone.token("heatweb-admin")
        self.heat = client.Client("1", endpoint=f"{service.url}/v1/{body['project']['id']}",
                                  token=token)


@pytest.fixture
def admin(request, tmp_path_factory):
    return Admin(keystone_service(request.config, tmp_path_factory), KeystoneCloud())


@pytest.fixture
def cleanup():
    """Stacks to delete when a test ends early, so the shared cloud keeps nothing of them."""
    made = []
    yield made
    for heat, stack_id in made:
        try:
            if not _stack_gone(heat, stack_id):
                heat.stacks.delete(stack_id)
                wait_for(lambda: _stack_gone(heat, stack_id), "the leftover stack's delete")
        except Exception:  # noqa: BLE001 - best effort; the test's own failure is reported
            pass


def configuration(tag, *, with_router):
    resources = {
        "flavor": {"type": "OS::Nova::Flavor", "properties": {
            "name": f"{tag}-flavor", "ram": 256, "vcpus": 1, "disk": 1,
            "extra_specs": {"hw:cpu_policy": "shared"}}},
        "public": {"type": "OS::Neutron::ProviderNet", "properties": {
            "name": f"{tag}-public", "network_type": "flat", "physical_network": tag,
            "router_external": True, "shared": False}},
        "public_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "public"}, "cidr": "172.31.7.0/24",
            "enable_dhcp": False}},
        "private": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-private"}},
        "private_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network_id": {"get_resource": "private"}, "cidr": "10.77.0.0/24"}},
        "project": {"type": "OS::Keystone::Project", "properties": {
            "name": f"{tag}-project", "description": "made by heatweb"}},
        "user": {"type": "OS::Keystone::User", "properties": {
            "name": f"{tag}-user", "password": "s3cret-pass",
            "default_project": {"get_resource": "project"}}},
        "member": {"type": "OS::Keystone::UserRoleAssignment", "properties": {
            "user": {"get_resource": "user"},
            "roles": [{"role": "member", "project": {"get_resource": "project"}}]}},
    }
    if with_router:
        resources["router"] = {"type": "OS::Neutron::Router", "depends_on": ["public_subnet"],
                               "properties": {"name": f"{tag}-router", "external_gateway_info":
                                              {"network": {"get_resource": "public"}}}}
        resources["interface"] = {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"},
            "subnet": {"get_resource": "private_subnet"}}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def physical(heat, stack_id):
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}


def test_a_cloud_admins_configuration_stack_lives_in_nova_neutron_and_keystone(
        admin, admin_cloud, cleanup):
    heat, tag = admin.heat, f"cfg{uuid.uuid4().hex[:6]}"
    with_router = any(ext.alias == "router" for ext in admin_cloud.network.extensions())
    stack_id = heat.stacks.create(stack_name=tag, template=configuration(
        tag, with_router=with_router))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    flavor = admin_cloud.compute.get_flavor(ids["flavor"])
    assert (flavor.name, flavor.ram, flavor.vcpus, flavor.disk) == (f"{tag}-flavor", 256, 1, 1)
    assert admin_cloud.compute.fetch_flavor_extra_specs(flavor).extra_specs == \
        {"hw:cpu_policy": "shared"}
    public = admin_cloud.network.get_network(ids["public"])
    assert public.is_router_external and public.provider_network_type == "flat"
    subnet = admin_cloud.network.get_subnet(ids["private_subnet"])
    assert (subnet.network_id, subnet.cidr) == (ids["private"], "10.77.0.0/24")
    project = admin_cloud.identity.get_project(ids["project"])
    assert (project.name, project.description) == (f"{tag}-project", "made by heatweb")
    user = admin_cloud.identity.get_user(ids["user"])
    assert (user.name, user.default_project_id) == (f"{tag}-user", ids["project"])
    member_role = admin_cloud.identity.find_role("member")
    assert admin_cloud.identity.validate_user_has_project_role(ids["project"], ids["user"],
                                                               member_role)
    if with_router:
        router = admin_cloud.network.get_router(ids["router"])
        assert router.external_gateway_info["network_id"] == ids["public"]
        port = admin_cloud.network.get_port(ids["interface"])
        assert (port.device_id, port.fixed_ips[0]["subnet_id"]) == \
            (ids["router"], ids["private_subnet"])

    # extra_specs update in place: the same flavor, its specs changed in Nova
    template = configuration(tag, with_router=with_router)
    template["resources"]["flavor"]["properties"]["extra_specs"] = {"hw:cpu_policy": "dedicated"}
    heat.stacks.update(stack_id, template=template)
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id)["flavor"] == ids["flavor"]
    assert admin_cloud.compute.fetch_flavor_extra_specs(ids["flavor"]).extra_specs == \
        {"hw:cpu_policy": "dedicated"}

    # Locked at level all (these objects have no physical lock: heatweb's own refusals
    # hold them), an update is refused; unlocked, the objects are as they were.
    heat.http_client.post(f"/stacks/{tag}/{stack_id}/actions",
                          data={"lock": {"level": "all"}, "reason": "network maintenance"})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict, match="locked"):
        heat.stacks.update(stack_id, template=configuration(tag, with_router=with_router))
    heat.http_client.post(f"/stacks/{tag}/{stack_id}/actions", data={"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")
    assert physical(heat, stack_id) == ids
    assert admin_cloud.compute.get_flavor(ids["flavor"]).name == f"{tag}-flavor"

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert admin_cloud.compute.find_flavor(f"{tag}-flavor") is None
    assert admin_cloud.network.find_network(f"{tag}-public") is None
    assert admin_cloud.network.find_network(f"{tag}-private") is None
    assert admin_cloud.identity.find_project(f"{tag}-project") is None
    assert admin_cloud.identity.find_user(f"{tag}-user") is None
    if with_router:
        assert admin_cloud.network.find_router(f"{tag}-router") is None


def test_a_router_on_a_neutron_without_its_l3_plugin_is_unavailable_as_in_heat(
        admin, admin_cloud):
    """Heat's answer for a type whose Neutron extension the cloud lacks; on a cloud with
    the L3 plugin the same template validates."""
    has_router = any(ext.alias == "router" for ext in admin_cloud.network.extensions())
    template = {"heat_template_version": "2018-08-31",
                "resources": {"router": {"type": "OS::Neutron::Router"}}}
    if has_router:
        assert admin.heat.stacks.validate(template=template) is not None
        return
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        admin.heat.stacks.validate(template=template)
    assert raised.value.error["error"]["type"] == "ResourceTypeUnavailable"
    assert raised.value.error["error"]["message"] == (
        "HEAT-E99001 Service neutron is not available for resource type OS::Neutron::Router, "
        "reason: Required extension router in neutron service is not available.")


def test_resource_types_leave_out_what_neutron_cannot_run_as_heat(admin, admin_cloud):
    """Heat lists only the types whose service and Neutron extension the cloud has; the
    plugin's tests skip on what is not listed."""
    aliases = {ext.alias for ext in admin_cloud.network.extensions()}
    listed = {t.resource_type for t in admin.heat.resource_types.list()}
    for type_name, extension in (("OS::Neutron::Trunk", "trunk"),
                                 ("OS::Neutron::Router", "router"),
                                 ("OS::Neutron::ExtraRouteSet", "extraroute-atomic")):
        assert (type_name in listed) == (extension in aliases), type_name
    assert {"OS::Neutron::Net", "OS::Neutron::Port", "OS::Nova::Server"} <= listed


def _stack_gone(heat, stack_id):
    try:
        return heat.stacks.get(stack_id).stack_status == "DELETE_COMPLETE"
    except heat_exc.HTTPNotFound:
        return True


CONSTRAINED = {"heat_template_version": "2018-08-31", "parameters": {"net": {
    "type": "string", "constraints": [{"custom_constraint": "neutron.network"}]}},
    "resources": {"none": {"type": "OS::Heat::None"}}}


def test_a_custom_constraint_looks_as_the_caller_does(admin, member, admin_cloud):
    """Heat checks a parameter's custom constraint in the request's context: the admin's
    private network validates for the admin, and is not found for a member of another
    project (whatever heatweb's own account sees)."""
    tag = f"cc{uuid.uuid4().hex[:6]}"
    net = admin_cloud.network.create_network(name=f"{tag}-admin-only", shared=False)
    try:
        admin.heat.stacks.validate(template=CONSTRAINED, parameters={"net": f"{tag}-admin-only"})
        stack_id = admin.heat.stacks.create(stack_name=tag, template=CONSTRAINED,
                                            parameters={"net": net.id})["stack"]["id"]
        wait_stack(admin.heat, stack_id, "CREATE_COMPLETE")
        for call in (lambda: member.heat.stacks.validate(template=CONSTRAINED,
                                                         parameters={"net": net.id}),
                     lambda: member.heat.stacks.create(stack_name=tag, template=CONSTRAINED,
                                                       parameters={"net": net.id})):
            with pytest.raises(heat_exc.HTTPBadRequest) as caught:
                call()
            assert f"Error validating value '{net.id}'" in caught.value.error["error"]["message"]
        assert not [s for s in member.heat.stacks.list() if s.stack_name == tag]
        admin.heat.stacks.delete(stack_id)
        wait_stack(admin.heat, stack_id, "DELETE_COMPLETE")
    finally:
        admin_cloud.network.delete_network(net.id)
