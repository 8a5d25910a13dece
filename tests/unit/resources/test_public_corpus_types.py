"""Types openstack/heat-templates uses that heatweb lacked (docs/corpus.md "The public
corpus"): AWS::EC2::Volume and VolumeAttachment on the Cinder plugins, AWS::EC2::EIP and
EIPAssociation, AWS::IAM::User and AccessKey, and Heat's hidden OS::Neutron::RouterGateway with its implicit dependencies."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.definitions import build_definition, normalize_environment
from stacks.resources import aws_more, registry
from stacks.hot.values import UNRESOLVED
from stacks.resources.aws_more import Ec2Volume, Ec2VolumeAttachment, ElasticIp, \
    ElasticIpAssociation, IamAccessKey, IamUser, S3Bucket
from stacks.resources.base import PluginContext, ResourceFailure

CONTEXT = PluginContext(cloud=None, stack_id="s1", stack_name="st", project_id="p")


def plugin(cls, props):
    return cls(name="r", properties=cls.validate_properties(props, resource_name="r"),
               context=CONTEXT)


def test_the_types_are_registered_with_heat_names():
    for name in ("AWS::EC2::Volume", "AWS::EC2::VolumeAttachment", "AWS::EC2::EIP",
                 "AWS::EC2::EIPAssociation", "AWS::S3::Bucket", "AWS::IAM::User",
                 "AWS::IAM::AccessKey", "OS::Neutron::RouterGateway"):
        assert registry.get_plugin(name).type_name == name
    assert registry.get_plugin("OS::Neutron::RouterGateway").hidden


def test_an_ebs_volume_is_a_cinder_volume():
    volume = plugin(Ec2Volume, {"Size": "5", "AvailabilityZone": "nova",
                                "Tags": [{"Key": "role", "Value": "db"}]})
    assert volume.properties == {"size": 5, "availability_zone": "nova",
                                 "metadata": {"role": "db"}}
    with pytest.raises(StackValidationFailed, match="Property AvailabilityZone not assigned"):
        plugin(Ec2Volume, {"Size": 5})
    assert Ec2Volume.needs_replacement({"Size"}) is True


def test_an_ebs_attachment_is_a_cinder_attachment_on_a_vd_device():
    attachment = plugin(Ec2VolumeAttachment, {"InstanceId": "srv", "VolumeId": "vol",
                                              "Device": "/dev/vdb"})
    assert attachment.properties == {"instance_uuid": "srv", "volume_id": "vol",
                                     "mountpoint": "/dev/vdb"}
    with pytest.raises(StackValidationFailed, match="does not match pattern"):
        plugin(Ec2VolumeAttachment, {"InstanceId": "srv", "VolumeId": "vol",
                                     "Device": "/dev/sdb"})


class _Rows:
    """``Resource.objects`` holding the plugin data of the stack's users, by physical id."""

    def __init__(self, users):
        self.users, self.found = users, None

    def filter(self, **kwargs):
        self.found = self.users.get(kwargs["physical_resource_id"])
        return self

    def values_list(self, *fields, flat=False):
        return self

    def first(self):
        return self.found


def test_an_access_key_has_an_id_and_a_secret_of_its_user(monkeypatch):
    """Without Keystone the user is a name and the key a pair only heatweb knows (in
    Keystone mode a stack user and its EC2 credential: tests/openstack)."""
    user = plugin(IamUser, {"Policies": ["WikiDatabase"]})
    user.handle_create()
    assert user.physical_id.startswith("st-r-")
    monkeypatch.setattr(aws_more.Resource, "objects", _Rows({user.physical_id: user.data}))
    key = plugin(IamAccessKey, {"UserName": user.physical_id})
    key.handle_create()
    assert len(key.physical_id) == 32 and key.get_attribute("UserName") == user.physical_id
    secret = key.get_attribute("SecretAccessKey")
    assert len(secret) == 32 and secret != key.physical_id
    with pytest.raises(StackValidationFailed, match="UserName not assigned"):
        plugin(IamAccessKey, {})
    with pytest.raises(ResourceFailure, match="could not find user st-r-nobody"):
        plugin(IamAccessKey, {"UserName": "st-r-nobody"}).handle_create()


def test_a_router_gateway_waits_for_the_router_interfaces_and_the_networks_subnets():
    resources = {
        "public": {"type": "OS::Neutron::Net"},
        "public_subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "public"}, "cidr": "203.0.113.0/24"}},
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.0.0.0/24"}},
        "router": {"type": "OS::Neutron::Router"},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router_id": {"get_resource": "router"}, "subnet_id": {"get_resource": "subnet"}}},
        "gateway": {"type": "OS::Neutron::RouterGateway", "properties": {
            "router_id": {"get_resource": "router"}, "network_id": {"get_resource": "public"}}},
        "fip": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network_id": {"get_resource": "public"}}},
    }
    definition = build_definition({"heat_template_version": "2013-05-23",
                                   "resources": resources}, environment=normalize_environment({}))
    deps = {name: d.depends_on for name, d in definition.resources.items()}
    assert set(deps["gateway"]) == {"router", "public", "public_subnet", "interface"}
    assert "gateway" in deps["fip"]


def test_a_router_gateway_needs_one_network():
    with pytest.raises(StackValidationFailed, match="At least one of the following"):
        registry.get_plugin("OS::Neutron::RouterGateway").validate_properties(
            {"router_id": "r"}, resource_name="gw")


@pytest.mark.parametrize(("props", "message"), [
    ({"InstanceId": "i"}, "Either EIP or AllocationId must be provided"),
    ({"InstanceId": "i", "EIP": "1.2.3.4", "AllocationId": "a"}, "Either EIP or AllocationId"),
    ({"EIP": "1.2.3.4"}, "At least one of the following properties must be specified: "
                         "InstanceId, NetworkInterfaceId"),
])
def test_an_eip_association_names_one_address_and_a_target(props, message):
    with pytest.raises(StackValidationFailed, match=message):
        ElasticIpAssociation.validate_properties(props, resource_name="assoc")


def test_an_eip_association_takes_an_address_known_at_create():
    props = ElasticIpAssociation.validate_properties({"InstanceId": UNRESOLVED,
                                                      "EIP": UNRESOLVED}, resource_name="a")
    assert props["EIP"] is UNRESOLVED


class OneExternalNetwork:
    """A cloud with external networks ``networks``: what an elastic IP asks of it."""

    def __init__(self, networks):
        self.networks = networks
        self.created = []

    def object_search(self, kind, **fields):
        assert kind == "network" and fields == {"router:external": True}
        return self.networks

    def object_create(self, kind, **fields):
        self.created.append((kind, fields))
        return "fip-1"

    def object_get(self, kind, object_id):
        return {"id": object_id, "floating_ip_address": "203.0.113.9"}


def test_an_elastic_ip_is_a_floating_ip_of_the_one_external_network():
    cloud = OneExternalNetwork(["public"])
    eip = ElasticIp(name="ip", properties=ElasticIp.validate_properties({}, resource_name="ip"),
                    context=PluginContext(cloud=cloud, stack_id="s", stack_name="st",
                                          project_id="p"))
    eip.handle_create()
    assert cloud.created[0][0] == "floating_ip"
    assert cloud.created[0][1]["floating_network_id"] == "public"
    assert eip.get_reference_id() == "203.0.113.9" and eip.get_attribute("AllocationId") == "fip-1"
    # what the engine stores (test_server_cfn_init's output ElasticIp_Id)
    assert eip.attributes() == {"AllocationId": "fip-1"}
    two = ElasticIp(name="ip", properties={}, context=PluginContext(
        cloud=OneExternalNetwork(["a", "b"]), stack_id="s", stack_name="st", project_id="p"))
    with pytest.raises(ResourceFailure, match="Expected 1 external network, found 2"):
        two.handle_create()


def test_an_s3_bucket_is_a_swift_container_with_heats_acls():
    bucket = plugin(S3Bucket, {"AccessControl": "PublicRead", "WebsiteConfiguration": {
        "IndexDocument": "index.html", "ErrorDocument": "error.html"},
        "Tags": [{"Key": "team", "Value": "web"}]})
    assert bucket.properties == {
        "X-Container-Read": ".r:*", "X-Account-Meta": {}, "PurgeOnDelete": False,
        "X-Container-Meta": {"team": "web", "Web-Index": "index.html",
                             "Web-Error": "error.html"}}
    assert plugin(S3Bucket, {"AccessControl": "PublicReadWrite"}).properties[
        "X-Container-Write"] == ".r:*"
    private = plugin(S3Bucket, {"AccessControl": "Private"}).properties
    assert "X-Container-Read" not in private and "X-Container-Write" not in private
    with pytest.raises(StackValidationFailed, match="is not an allowed value"):
        plugin(S3Bucket, {"AccessControl": "Everyone"})
    assert S3Bucket.needs_replacement({"AccessControl"}) is True


def test_vpnaas_types_are_unavailable_not_unknown(monkeypatch):
    from heatweb.exceptions import ResourceTypeUnavailable
    from stacks.resources import unavailable

    monkeypatch.setattr(unavailable, "_has_extension", lambda extension: False)
    with pytest.raises(ResourceTypeUnavailable, match="Required extension vpnaas in neutron "
                                                      "service is not available"):
        registry.get_plugin("OS::Neutron::IPsecSiteConnection")
