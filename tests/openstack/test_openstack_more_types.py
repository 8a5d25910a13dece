"""More Nova and Keystone types on the real cloud, each checked with openstacksdk:
an admin's quotas, host aggregate, domain, group (with a member and roles), region,
service and endpoint; a member's key pair, server group, security group rule, address
scope, subnet pool and a subnet allocated from it.
Updates in place keep the objects; after delete they are gone.
"""
import json
import uuid

import pytest

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.test_openstack_admin_stack import _stack_gone, admin, cleanup, \
    physical  # noqa: F401

pytestmark = pytest.mark.openstack


def admin_template(tag, *, cores, hosts):
    return {"heat_template_version": "2018-08-31", "resources": {
        "project": {"type": "OS::Keystone::Project", "properties": {"name": f"{tag}-project"}},
        "quota": {"type": "OS::Nova::Quota", "properties": {
            "project": {"get_resource": "project"}, "cores": cores, "instances": 7}},
        "aggregate": {"type": "OS::Nova::HostAggregate", "properties": {
            "name": f"{tag}-agg", "hosts": hosts, "metadata": {"ssd": "true"}}},
        "domain": {"type": "OS::Keystone::Domain", "properties": {"name": f"{tag}-domain"}},
        "group": {"type": "OS::Keystone::Group", "properties": {
            "name": f"{tag}-group", "roles": [{"role": "reader",
                                               "project": {"get_resource": "project"}}]}},
        "user": {"type": "OS::Keystone::User", "properties": {
            "name": f"{tag}-user", "password": "s3cret-pass",
            "groups": [{"get_resource": "group"}]}},
        "region": {"type": "OS::Keystone::Region", "properties": {"id": f"{tag}-region"}},
        "service": {"type": "OS::Keystone::Service", "properties": {
            "name": f"{tag}-svc", "type": f"{tag}-type"}},
        "endpoint": {"type": "OS::Keystone::Endpoint", "properties": {
            "service": {"get_resource": "service"}, "interface": "internal",
            "url": f"http://{tag}.example.com", "region": {"get_resource": "region"}}},
    }}


def test_an_admins_quotas_aggregate_and_keystone_objects(admin, admin_cloud,  # noqa: F811
                                                         cleanup):  # noqa: F811
    heat, tag = admin.heat, f"adm{uuid.uuid4().hex[:6]}"
    host = next(s.host for s in admin_cloud.compute.services() if s.binary == "nova-compute")
    stack_id = heat.stacks.create(stack_name=tag, template=admin_template(
        tag, cores=11, hosts=[]))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    quota = admin_cloud.compute.get_quota_set(ids["project"])
    assert (quota.cores, quota.instances) == (11, 7)
    aggregate = admin_cloud.compute.get_aggregate(ids["aggregate"])
    assert (aggregate.name, aggregate.metadata.get("ssd")) == (f"{tag}-agg", "true")
    assert admin_cloud.identity.get_domain(ids["domain"]).name == f"{tag}-domain"
    assert admin_cloud.identity.check_user_in_group(ids["user"], ids["group"])
    assert admin_cloud.identity.validate_group_has_project_role(
        ids["project"], ids["group"], admin_cloud.identity.find_role("reader"))
    assert admin_cloud.identity.get_region(f"{tag}-region").id == ids["region"]
    endpoint = admin_cloud.identity.get_endpoint(ids["endpoint"])
    assert (endpoint.service_id, endpoint.region_id, endpoint.url) == \
        (ids["service"], f"{tag}-region", f"http://{tag}.example.com")

    heat.stacks.update(stack_id, template=admin_template(tag, cores=13, hosts=[host]))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id) == ids
    assert admin_cloud.compute.get_quota_set(ids["project"]).cores == 13
    assert admin_cloud.compute.get_aggregate(ids["aggregate"]).hosts == [host]

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert admin_cloud.compute.find_aggregate(f"{tag}-agg") is None
    assert admin_cloud.identity.find_domain(f"{tag}-domain") is None
    assert admin_cloud.identity.find_group(f"{tag}-group") is None
    assert admin_cloud.identity.find_user(f"{tag}-user") is None
    assert admin_cloud.identity.find_service(f"{tag}-svc") is None
    assert admin_cloud.identity.find_region(f"{tag}-region") is None


def member_template(tag):
    return {"heat_template_version": "2018-08-31", "resources": {
        "key": {"type": "OS::Nova::KeyPair", "properties": {
            "name": f"{tag}-key", "save_private_key": True}},
        "group": {"type": "OS::Nova::ServerGroup", "properties": {
            "name": f"{tag}-sg", "policies": ["anti-affinity"]}},
        "secgroup": {"type": "OS::Neutron::SecurityGroup", "properties": {
            "name": f"{tag}-secgroup", "rules": []}},
        "ssh": {"type": "OS::Neutron::SecurityGroupRule", "properties": {
            "security_group": {"get_resource": "secgroup"}, "protocol": "tcp",
            "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "10.0.0.0/8"}},
        "scope": {"type": "OS::Neutron::AddressScope", "properties": {"name": f"{tag}-scope"}},
        "pool": {"type": "OS::Neutron::SubnetPool", "properties": {
            "name": f"{tag}-pool", "prefixes": ["10.99.0.0/16"],
            "address_scope": {"get_resource": "scope"}, "default_prefixlen": 24}},
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "subnetpool": {"get_resource": "pool"},
            "prefixlen": 26}},
    }, "outputs": {"private_key": {"value": {"get_attr": ["key", "private_key"]}},
                   "key": {"value": {"get_resource": "key"}}}}


def test_a_members_key_pair_server_group_and_rule(member, cloud, cleanup):  # noqa: F811
    heat, tag = member.heat, f"mem{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=member_template(tag))["stack"]["id"]
    cleanup.append((heat, stack_id))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)
    stack = heat.stacks.get(stack_id)
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert out["key"] == f"{tag}-key" == ids["key"]
    assert out["private_key"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert cloud.compute.get_keypair(f"{tag}-key").public_key.startswith("ssh-rsa ")
    group = cloud.compute.get_server_group(ids["group"])
    assert (group.name, group.policy or group.policies[0]) == (f"{tag}-sg", "anti-affinity")
    pool = cloud.network.get_subnet_pool(ids["pool"])
    assert (pool.prefixes, pool.address_scope_id) == (["10.99.0.0/16"], ids["scope"])
    subnet = cloud.network.get_subnet(ids["subnet"])
    assert subnet.subnet_pool_id == ids["pool"] and subnet.cidr.endswith("/26")
    rule = cloud.network.get_security_group_rule(ids["ssh"])
    assert (rule.security_group_id, rule.protocol, rule.port_range_min,
            rule.remote_ip_prefix) == (ids["secgroup"], "tcp", 22, "10.0.0.0/8")

    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    assert cloud.compute.find_keypair(f"{tag}-key") is None
    assert cloud.network.find_security_group(f"{tag}-secgroup") is None
    assert cloud.network.find_subnet_pool(f"{tag}-pool") is None
    assert cloud.network.find_address_scope(f"{tag}-scope") is None


def test_a_nested_stack_takes_the_members_own_key_pair(member, cloud, cleanup):  # noqa: F811
    """A template resource's key_name (a nova.keypair constraint) is looked up as the stack's
    owner, as the root's is: Nova's key pairs are each user's own, so heatweb's service user
    (the engine that creates the nested stack) does not see it (the public corpus's
    asg_of_stacks.yaml failed so: "No key pair found")."""
    heat, tag = member.heat, f"nkp{uuid.uuid4().hex[:6]}"
    cloud.compute.create_keypair(name=f"{tag}-key")
    try:
        member_file = {"heat_template_version": "2018-08-31", "parameters": {"key_name": {
            "type": "string", "constraints": [{"custom_constraint": "nova.keypair"}]}},
            "resources": {"none": {"type": "OS::Heat::None"}},
            "outputs": {"key": {"value": {"get_param": "key_name"}}}}
        template = {"heat_template_version": "2018-08-31", "resources": {"member": {
            "type": "member.yaml", "properties": {"key_name": f"{tag}-key"}}},
            "outputs": {"key": {"value": {"get_attr": ["member", "key"]}}}}
        stack_id = heat.stacks.create(stack_name=tag, template=template, files={
            "member.yaml": json.dumps(member_file)})["stack"]["id"]
        cleanup.append((heat, stack_id))
        stack = wait_stack(heat, stack_id, "CREATE_COMPLETE")
        assert [o["output_value"] for o in stack.outputs] == [f"{tag}-key"]
        heat.stacks.delete(stack_id)
        wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    finally:
        cloud.compute.delete_keypair(f"{tag}-key", ignore_missing=True)


def test_an_instances_availability_zone_is_novas(member, cloud, cleanup):  # noqa: F811
    """AWS::EC2::Instance's AvailabilityZone is the server's zone in Nova, whether or not it
    has an address (in a project with no network, or several, a server given none boots
    without one): an EBS volume takes its instance's zone (the public corpus's
    WordPress_*_With_EBS templates failed "Property AvailabilityZone not assigned")."""
    heat, tag = member.heat, f"az{uuid.uuid4().hex[:6]}"
    template = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {
        "Instance": {"Type": "AWS::EC2::Instance", "Properties": {
            "ImageId": "heatweb-tiny", "InstanceType": "m1.tiny"}},
        "DataVolume": {"Type": "AWS::EC2::Volume", "Properties": {
            "Size": 1, "AvailabilityZone": {"Fn::GetAtt": ["Instance", "AvailabilityZone"]}}}},
        "Outputs": {"Zone": {"Value": {"Fn::GetAtt": ["Instance", "AvailabilityZone"]}}}}
    stack_id = heat.stacks.create(stack_name=tag, template=template)["stack"]["id"]
    cleanup.append((heat, stack_id))
    stack = wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)
    zone = cloud.compute.get_server(ids["Instance"]).availability_zone
    assert zone and [o["output_value"] for o in stack.outputs] == [zone]
    assert cloud.block_storage.get_volume(ids["DataVolume"]).availability_zone == zone
    heat.stacks.delete(stack_id)
    wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")


def test_an_admins_port_takes_its_own_projects_security_group(admin, admin_cloud,  # noqa: F811
                                                               cleanup):  # noqa: F811
    """A security group named on a port is the stack's project's own when an admin sees
    several of that name (every project has a "default"), as Heat's get_secgroup_uuids
    picks it (the public corpus's openshift nodeinstance.yaml failed "More than one
    security group named default")."""
    heat, tag = admin.heat, f"sgd{uuid.uuid4().hex[:6]}"
    demo = admin_cloud.identity.find_project("demo")
    other = admin_cloud.network.create_security_group(name=f"{tag}-sg", project_id=demo.id)
    own = admin_cloud.network.create_security_group(name=f"{tag}-sg")
    try:
        template = {"heat_template_version": "2018-08-31", "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"}},
            "port": {"type": "OS::Neutron::Port", "properties": {
                "network": {"get_resource": "net"}, "security_groups": [f"{tag}-sg"],
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}}}}
        stack_id = heat.stacks.create(stack_name=tag, template=template)["stack"]["id"]
        cleanup.append((heat, stack_id))
        wait_stack(heat, stack_id, "CREATE_COMPLETE")
        port = admin_cloud.network.get_port(physical(heat, stack_id)["port"])
        assert port.security_group_ids == [own.id] and own.project_id != other.project_id
        heat.stacks.delete(stack_id)
        wait_for(lambda: _stack_gone(heat, stack_id), "the stack's delete")
    finally:
        for group in (own, other):
            admin_cloud.network.delete_security_group(group, ignore_missing=True)
