"""More of the ``AWS::`` types Heat maps: EBS volumes, elastic IPs, S3 buckets and the
IAM user and access key.

``AWS::EC2::Volume`` and ``AWS::EC2::VolumeAttachment`` are CloudFormation schemas on
the Cinder plugins (``CfnMapped``, as ``aws.py``). ``AWS::EC2::EIP`` is a Neutron
floating IP on the cloud's one external network (Heat's: "Expected 1 external network"
otherwise), its Ref the address; ``AWS::EC2::EIPAssociation`` associates one (by
``EIP`` address or ``AllocationId``) with an instance's first port or a port.
``AWS::S3::Bucket`` is an ``OS::Swift::Container`` with Heat's ACLs for its
``AccessControl``. ``AWS::IAM::User`` and
``AWS::IAM::AccessKey`` are the credentials heat-cfntools' ``cfn-hup`` and
``cfn-init`` are given in a server's metadata: as Heat's, the user is a stack user
(``stacks.resources.stack_user``: a Keystone user of the stack user domain, disabled while
suspended) and its access key an EC2 credential of that user, which heatweb's
CloudFormation API (``softwareconfig.cfn``, Keystone checking each signature) accepts for
``DescribeStackResource`` of any resource of the key's stack (Heat's ``User`` without
``Policies`` allows them all; heatweb enforces no policy). Without Keystone the user is a
name only and the key a pair only heatweb knows, checked by heatweb itself.
"""

from heatweb.exceptions import StackValidationFailed
from stacks.resources.aws import CfnMapped
from stacks.models import Resource
from stacks.resources import stack_user
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cinder import Volume, VolumeAttachment
from stacks.resources.cloud_object import CloudObjectResource
from stacks.resources.nova_floating_ip import one_external_network
from stacks.resources.registry import register
from stacks.resources.swift import SwiftContainer
from stacks.resources.schema import AllowedPattern, AllowedValues, Attribute, Property, \
    Range

TAGS = Property("List", description="Tags (Key, Value): the volume's metadata.",
                schema=Property("Map", schema={"Key": Property("String", required=True),
                                               "Value": Property("String", required=True)}))


@register
class Ec2Volume(CfnMapped, Volume):
    """An EBS-style volume: an ``OS::Cinder::Volume`` of ``Size`` GB in ``AvailabilityZone``
    (``SnapshotId``: from that backup, as Heat's); ``Tags`` become its metadata. Any change
    replaces it. Ref: the volume's id."""

    type_name = "AWS::EC2::Volume"
    properties_schema = {
        "AvailabilityZone": Property("String", required=True,
                                     description="The availability zone in which the volume "
                                                 "will be created."),
        "Size": Property("Integer", description="The size of the volume in GB.",
                         constraints=(Range(1, None),)),
        "SnapshotId": Property("String", description="If specified, the backup used as the "
                                                     "source to create the volume."),
        "Tags": TAGS,
    }
    attributes_schema = {"show": Attribute("Everything the cloud says of the volume.")}

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        return super(Volume, cls).validate_properties(raw, resource_name=resource_name)

    def native_properties(self, cfn):
        props = {"size": cfn.get("Size"), "availability_zone": cfn.get("AvailabilityZone"),
                 "metadata": {tag["Key"]: tag["Value"] for tag in cfn.get("Tags") or []}}
        if cfn.get("SnapshotId"):
            props["backup_id"] = cfn["SnapshotId"]
        return props


@register
class Ec2VolumeAttachment(CfnMapped, VolumeAttachment):
    """An EBS-style attachment: ``VolumeId`` attached to the server ``InstanceId`` at
    ``Device`` (``/dev/vd[b-z]``), as ``OS::Cinder::VolumeAttachment``; a change detaches
    and attaches again."""

    changes_objects = {"InstanceId": "server", "VolumeId": "volume"}
    type_name = "AWS::EC2::VolumeAttachment"
    properties_schema = {
        "InstanceId": Property("String", required=True, update_allowed=True,
                               description="The ID of the instance to which the volume "
                                           "attaches."),
        "VolumeId": Property("String", required=True, update_allowed=True,
                             description="The ID of the volume to be attached."),
        "Device": Property("String", required=True, update_allowed=True,
                           description="The device where the volume is exposed on the "
                                       "instance.",
                           constraints=(AllowedPattern("/dev/vd[b-z]"),)),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        return super(VolumeAttachment, cls).validate_properties(raw,
                                                                resource_name=resource_name)

    def native_properties(self, cfn):
        return {"instance_uuid": cfn.get("InstanceId"), "volume_id": cfn.get("VolumeId"),
                "mountpoint": cfn.get("Device")}


class LocalCredential(ResourcePlugin):
    """Base of the IAM types: in Keystone, not in the cloud; updates are in place."""

    def handle_update(self, new_properties, changed):
        self.properties = new_properties

    def check_delete_complete(self, cookie):
        return True


@register
class IamUser(LocalCredential):
    """A user for the instances' tools: Heat's stack domain user (Keystone mode), disabled
    while suspended. Ref: its name, ``<stack>-<resource>-<random>`` (Heat's physical
    resource name); the properties are accepted as Heat's and not used (heatweb has no IAM
    policies to enforce)."""

    type_name = "AWS::IAM::User"
    properties_schema = {
        "Path": Property("String", description="Not implemented."),
        "Groups": Property("List", description="Not implemented."),
        "LoginProfile": Property("Map", description="A login profile for the user.",
                                 schema={"Password": Property("String")}),
        "Policies": Property("List", description="Access policies to apply to the user."),
    }
    attributes_schema = {}

    def handle_create(self):
        stack_user.ensure_user(self)
        self.physical_id = stack_user.physical_name(self)

    def handle_delete(self):
        stack_user.delete_user(self)

    def handle_suspend(self):
        stack_user.suspend_user(self)

    def handle_resume(self):
        stack_user.resume_user(self)


@register
class IamAccessKey(LocalCredential):
    """An access key of an ``AWS::IAM::User`` of the stack (``UserName``: the user's Ref):
    an EC2 credential of its stack user (Heat's ``AccessKey``, the user's keypair). Ref:
    the key's id; attributes ``UserName`` and ``SecretAccessKey``."""

    type_name = "AWS::IAM::AccessKey"
    properties_schema = {
        "Serial": Property("Integer", description="Not implemented."),
        "UserName": Property("String", required=True,
                             description="The name of the user that the new key will belong "
                                         "to."),
        "Status": Property("String", description="Not implemented.",
                           constraints=(AllowedValues(("Active", "Inactive")),)),
    }
    attributes_schema = {
        "UserName": Attribute("Username associated with the AccessKey."),
        "SecretAccessKey": Attribute("Keypair secret key."),
    }

    def handle_create(self):
        name = self.properties["UserName"]
        user = (Resource.objects.filter(stack_id=self.context.stack_id, type=IamUser.type_name,
                                        physical_resource_id=name)
                .values_list("plugin_data", flat=True).first())
        if user is None:
            raise ResourceFailure(f"could not find user {name}")  # Heat's words
        for key in (stack_user.USER_ID, stack_user.PROJECT):
            if (user or {}).get(key):  # the key is the user's (no user of its own)
                self.data[key] = user[key]
        self.physical_id = stack_user.ensure_keypair(self)[stack_user.ACCESS_KEY]

    def handle_delete(self):
        stack_user.delete_keypair(self)

    def get_attribute(self, name, *path):
        if name == "UserName":
            return self.properties.get("UserName")
        if name == "SecretAccessKey":
            if self.data.get(stack_user.SECRET_KEY):
                return stack_user.secret_key(self.data)
            return self.data.get("secret")  # a key made before it was an EC2 credential
        return None


def _first_port(cloud, server_id):
    ports = _cloud_call(cloud.server_interfaces, server_id)
    if not ports:
        raise ResourceFailure(f"No port of instance {server_id} to associate the address with")
    return ports[0]["port"]


@register
class ElasticIp(CloudObjectResource):
    """An elastic IP: a floating IP of the cloud's external network, associated with the
    first port of ``InstanceId`` when given (changed in place). Ref: the address;
    attribute ``AllocationId``: the floating IP's id."""

    type_name = "AWS::EC2::EIP"
    kind = "floating_ip"
    named = False
    properties_schema = {
        "Domain": Property("String", description="Set to \"vpc\" to have IP address "
                                                 "allocation associated to your VPC.",
                           constraints=(AllowedValues(("vpc",)),)),
        "InstanceId": Property("String", update_allowed=True,
                               description="Instance ID to associate with EIP."),
    }
    attributes_schema = {"AllocationId": Attribute("ID that AWS assigns to represent the "
                                                   "allocation of the address for use with "
                                                   "Amazon VPC.")}

    def handle_create(self):
        fields = {"floating_network_id": one_external_network(self.cloud)}
        if self.properties.get("InstanceId"):
            fields["port_id"] = _first_port(self.cloud, self.properties["InstanceId"])
        self.physical_id = _cloud_call(
            self.cloud.object_create, self.kind, project_id=self.context.project_id,
            name=None, creation_key=self.creation_key, find_first=self.creation_key_reused,
            **fields)
        self.data["address"] = self.existing().get("floating_ip_address")

    def handle_update(self, new_properties, changed):
        instance = new_properties.get("InstanceId")
        port = _first_port(self.cloud, instance) if instance else None
        _cloud_call(self.cloud.object_update, self.kind, self.physical_id, port_id=port)
        self.properties = new_properties

    def get_reference_id(self):
        return self.data.get("address") or self.name

    # the stored attributes (``attributes()``, from the floating IP as Neutron shows it)
    attribute_fields = {"AllocationId": "id"}

    def get_attribute(self, name, *path):
        return self.physical_id if name == "AllocationId" else None


@register
class ElasticIpAssociation(CloudObjectResource):
    """Associates an elastic IP (``EIP``: its address, or ``AllocationId``) with
    ``InstanceId``'s first port or the port ``NetworkInterfaceId``; a change moves it."""

    type_name = "AWS::EC2::EIPAssociation"
    kind = "floating_ip_association"
    named = False
    changes_objects = {"InstanceId": "server", "NetworkInterfaceId": "port"}
    properties_schema = {
        "InstanceId": Property("String", update_allowed=True,
                               description="Instance ID to associate with EIP specified by "
                                           "EIP property."),
        "EIP": Property("String", update_allowed=True,
                        description="EIP address to associate with instance."),
        "AllocationId": Property("String", update_allowed=True,
                                 description="Allocation ID for VPC EIP address."),
        "NetworkInterfaceId": Property("String", update_allowed=True,
                                       description="Network interface ID to associate with "
                                                   "EIP."),
    }
    attributes_schema = {}

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        where = f"Property error: resources.{resource_name}.properties"
        given = {k for k, v in props.items() if v is not None}  # a value known later counts
        if ("EIP" in given) == ("AllocationId" in given):
            raise StackValidationFailed(f"{where}: Either EIP or AllocationId must be "
                                        f"provided.")
        if not given & {"InstanceId", "NetworkInterfaceId"}:
            raise StackValidationFailed(f"{where}: At least one of the following properties "
                                        f"must be specified: InstanceId, NetworkInterfaceId.")
        return props

    def _floating_ip(self, props):
        if props.get("AllocationId"):
            return props["AllocationId"]
        found = _cloud_call(self.cloud.object_search, "floating_ip",
                            floating_ip_address=props["EIP"])
        if not found:
            raise ResourceFailure(f"No elastic IP {props['EIP']} found")
        return found[0]

    def _associate(self, props):
        port = props.get("NetworkInterfaceId") or _first_port(self.cloud, props["InstanceId"])
        return _cloud_call(self.cloud.object_create, self.kind,
                           project_id=self.context.project_id, name=None,
                           floatingip_id=self._floating_ip(props), port_id=port)

    def handle_create(self):
        self.physical_id = self._associate(self.properties)

    def handle_update(self, new_properties, changed):
        _cloud_call(self.cloud.object_delete, self.kind, self.physical_id)
        self.properties = new_properties
        self.physical_id = self._associate(new_properties)


BUCKET_ACLS = ("Private", "PublicRead", "PublicReadWrite", "AuthenticatedRead",
               "BucketOwnerRead", "BucketOwnerFullControl")


@register
class S3Bucket(CfnMapped, SwiftContainer):
    """An S3-style bucket: a Swift container named after the stack and the resource.
    ``AccessControl`` sets its ACLs as Heat's (PublicRead: anyone reads; PublicReadWrite:
    anyone writes too; AuthenticatedRead: the project reads; the others: only the
    project's own users, where Heat names the project's user); ``WebsiteConfiguration``
    and ``Tags`` become its metadata. Any change replaces it. Ref: the container's name."""

    type_name = "AWS::S3::Bucket"
    properties_schema = {
        "AccessControl": Property("String", description="A predefined access control list "
                                  "(ACL) that grants permissions on the bucket.",
                                  constraints=(AllowedValues(BUCKET_ACLS),)),
        "WebsiteConfiguration": Property("Map", description="Information used to configure "
                                         "the bucket as a static website.", schema={
                                             "IndexDocument": Property("String"),
                                             "ErrorDocument": Property("String")}),
        "Tags": Property("List", description="Tags to attach to the bucket.",
                         schema=Property("Map", schema={
                             "Key": Property("String", required=True),
                             "Value": Property("String", required=True)})),
    }
    attributes_schema = {
        "DomainName": Attribute("The DNS name of the specified bucket."),
        "WebsiteURL": Attribute("The website endpoint for the specified bucket."),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        return super(SwiftContainer, cls).validate_properties(raw,
                                                              resource_name=resource_name)

    def native_properties(self, cfn):
        acl = cfn.get("AccessControl")
        meta = {tag["Key"]: tag["Value"] for tag in cfn.get("Tags") or []}
        website = cfn.get("WebsiteConfiguration") or {}
        for key, header in (("IndexDocument", "Web-Index"), ("ErrorDocument", "Web-Error")):
            if website.get(key):
                meta[header] = website[key]
        props = {"X-Container-Meta": meta, "X-Account-Meta": {}, "PurgeOnDelete": False}
        if acl in ("PublicRead", "PublicReadWrite"):
            props["X-Container-Read"] = ".r:*"
        elif acl == "AuthenticatedRead" and self.context is not None:
            props["X-Container-Read"] = f"{self.context.project_id}:*"
        if acl == "PublicReadWrite":
            props["X-Container-Write"] = ".r:*"
        return props
