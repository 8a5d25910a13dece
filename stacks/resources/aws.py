"""The ``AWS::`` resource types Heat maps, on this service's own plugins.

Each type is a CloudFormation properties schema (what a template and
``resource-type-show`` see; it decides update-or-replace) and a mapping of
those properties to the native plugin's (``native_properties``): the native
plugin does the work. ``AWS::AutoScaling::LaunchConfiguration`` is in
``instance_group``. The VPC types (``AWS::EC2::VPC``, ``Subnet``, ``EIP``...)
are not provided.
"""

from heatweb.exceptions import BadRequest
from stacks.models import Resource
from stacks.resources.autoscaling import AutoScalingGroup, ScalingPolicy
from stacks.resources.base import ResourceFailure
from stacks.resources.batches import iso_duration_seconds
from stacks.resources.compute import Server
from stacks.resources.instance_group import LAUNCH_CONFIGURATION_TYPE, member_server
from stacks.resources.neutron import SecurityGroup
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range
from stacks.resources.signal_urls import handle_uuid, signal_url
from stacks.resources.stack import NestedStackResource
from stacks.resources.update_policy import CFN_ROLLING_UPDATE_SCHEMA, cfn_rolling_policy
from stacks.resources.wait_condition import AWS_HANDLE_TYPE, CFN_KEYS, WaitCondition, \
    WaitConditionHandle

AWS_CONDITION_TYPE = "AWS::CloudFormation::WaitCondition"


def _accepted(kind, what="Accepted; not used."):
    return Property(kind, description=what)


class CfnMapped:
    """Mixin: a plugin whose template properties are CloudFormation's, working on the
    native plugin's. ``properties`` reads the native ones; setting it (the engine
    sets the validated CloudFormation properties) maps them."""

    def native_properties(self, cfn):
        raise NotImplementedError

    @property
    def properties(self):
        return self._native

    @properties.setter
    def properties(self, value):
        if value is not None and value is self.__dict__.get("_native"):
            return  # the native plugin setting back what it was given
        self.cfn_properties = value or {}
        self._native = self.native_properties(self.cfn_properties)

    def handle_update(self, new_properties, changed):
        old, new = self._native, self.native_properties(new_properties or {})
        native_changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        self.cfn_properties, self._native = new_properties or {}, new
        return super().handle_update(new, native_changed)


@register
class Instance(CfnMapped, Server):
    """An EC2-style instance: an ``OS::Nova::Server`` named by CloudFormation's properties.

    ``ImageId`` → image, ``InstanceType`` → flavor (changed in place, a resize),
    ``KeyName``, ``UserData`` (plain text, as Heat takes it), ``SecurityGroups``,
    ``NetworkInterfaces`` (port ids, or ``{NetworkInterfaceId}``) or ``SubnetId``,
    ``Tags`` (``[{Key, Value}]``, the server's metadata, changed in place).
    """

    type_name = "AWS::EC2::Instance"
    cloudinit_user = "ec2-user"  # Heat's Instance: build_userdata(..., 'ec2-user')
    properties_schema = {
        "ImageId": Property("String", description="Glance image ID or name.", required=True),
        "InstanceType": Property("String", description="Nova instance type (flavor).",
                                 required=True, update_allowed=True),
        "KeyName": Property("String", description="Optional Nova keypair name."),
        "UserData": Property("String", description="User data to pass to instance."),
        "SecurityGroups": Property("List", description="Security group names to assign."),
        "SecurityGroupIds": Property("List", description="Security group IDs to assign."),
        "NetworkInterfaces": Property("List", description="Network interfaces (port ids or "
                                      "maps with NetworkInterfaceId) to attach."),
        "SubnetId": Property("String", description="Subnet ID to launch the instance in."),
        "Tags": Property("List", description="Tags (Key, Value): the server's metadata.",
                         update_allowed=True, schema=Property("Map", schema={
                             "Key": Property("String", required=True),
                             "Value": Property("String", required=True)})),
        "AvailabilityZone": _accepted("String"),
        "DisableApiTermination": _accepted("String"),
        "KernelId": _accepted("String"),
        "RamDiskId": _accepted("String"),
        "Monitoring": _accepted("Boolean"),
        "PlacementGroupName": _accepted("String"),
        "PrivateIpAddress": _accepted("String"),
        "SourceDestCheck": _accepted("Boolean"),
        "Tenancy": _accepted("String"),
        "NovaSchedulerHints": _accepted("List"),
        "Volumes": _accepted("List"),
        "BlockDeviceMappings": _accepted("List"),
    }
    attributes_schema = {
        "AvailabilityZone": Attribute("The Availability Zone where the specified instance "
                                      "is launched."),
        "PrivateDnsName": Attribute("Private DNS name of the specified instance."),
        "PublicDnsName": Attribute("Public DNS name of the specified instance."),
        "PrivateIp": Attribute("Private IP address of the specified instance."),
        "PublicIp": Attribute("Public IP address of the specified instance."),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        # CloudFormation's schema (ImageId is required: always bootable); the server's
        # own checks are on native names.
        return super(Server, cls).validate_properties(raw, resource_name=resource_name)

    def native_properties(self, cfn):
        props = {"image": cfn.get("ImageId"), "flavor": cfn.get("InstanceType"),
                 "user_data": cfn.get("UserData") or "", "user_data_format": "HEAT_CFNTOOLS"}
        if cfn.get("KeyName"):
            props["key_name"] = cfn["KeyName"]
        groups = (cfn.get("SecurityGroups") or []) + (cfn.get("SecurityGroupIds") or [])
        if groups:
            props["security_groups"] = groups
        ports = [nic.get("NetworkInterfaceId") if isinstance(nic, dict) else nic
                 for nic in cfn.get("NetworkInterfaces") or []]
        if ports:
            props["networks"] = [{"port": port} for port in ports if port]
        elif cfn.get("SubnetId"):
            props["networks"] = [{"subnet": cfn["SubnetId"]}]
        if cfn.get("Tags"):
            props["metadata"] = {tag["Key"]: tag["Value"] for tag in cfn["Tags"]}
        return props

    def attributes(self):
        server = super().attributes()
        address = server.get("first_address") or None
        # Nova's zone of the server (Heat's OS-EXT-AZ:availability_zone), address or not: a
        # server booted without a network is in a zone too (the EBS templates' volumes take
        # their instance's).
        return {"AvailabilityZone": (server.get("show") or {}).get("availability_zone"),
                "PrivateDnsName": address, "PublicDnsName": address, "PrivateIp": address,
                "PublicIp": address}


def _rule(direction, rule):
    """One SecurityGroupIngress/Egress entry as a Neutron rule."""
    protocol = str(rule.get("IpProtocol", "")).lower()
    out = {"direction": direction, "ethertype": "IPv4",
           "protocol": None if protocol in ("", "-1") else protocol}
    for key, field in (("FromPort", "port_range_min"), ("ToPort", "port_range_max")):
        value = rule.get(key)
        if value not in (None, "", -1, "-1"):
            out[field] = int(value)
    remote_group = rule.get("SourceSecurityGroupId") or rule.get("DestinationSecurityGroupId")
    if remote_group:
        out["remote_group_id"] = remote_group
    elif rule.get("CidrIp"):
        out["remote_ip_prefix"] = rule["CidrIp"]
    return out


_RULE = Property("Map", schema={
    "CidrIp": Property("String"), "FromPort": Property("String"),
    "ToPort": Property("String"), "IpProtocol": Property("String"),
    "SourceSecurityGroupName": Property("String"), "SourceSecurityGroupId": Property("String"),
    "SourceSecurityGroupOwnerId": Property("String"),
    "DestinationSecurityGroupId": Property("String")})


@register
class Ec2SecurityGroup(CfnMapped, SecurityGroup):
    """A security group with CloudFormation's rules (``SecurityGroupIngress`` and
    ``SecurityGroupEgress``: ``IpProtocol``, ``FromPort``, ``ToPort``, ``CidrIp`` or
    ``SourceSecurityGroupId``), a Neutron security group. Rules are changed in place.
    Its reference is its name (what an instance's ``SecurityGroups`` lists), or its id
    with a ``VpcId``, as in Heat."""

    type_name = "AWS::EC2::SecurityGroup"
    properties_schema = {
        "GroupDescription": Property("String", description="Description of the security "
                                     "group.", required=True),
        "VpcId": Property("String", description="Physical ID of the VPC (accepted)."),
        "SecurityGroupIngress": Property("List", description="Ingress rules.",
                                         update_allowed=True, schema=_RULE),
        "SecurityGroupEgress": Property("List", description="Egress rules.",
                                        update_allowed=True, schema=_RULE),
    }
    attributes_schema = {}

    def native_properties(self, cfn):
        rules = [_rule("ingress", r) for r in cfn.get("SecurityGroupIngress") or []]
        rules += [_rule("egress", r) for r in cfn.get("SecurityGroupEgress") or []]
        return {"description": cfn.get("GroupDescription"), "rules": rules}

    def get_reference_id(self):
        if self.cfn_properties.get("VpcId"):
            return super().get_reference_id()
        return self.object_name(self.properties) if self.physical_id else self.name

    def attributes(self):
        return {}


@register
class CfnWaitConditionHandle(WaitConditionHandle):
    """The handle of an ``AWS::CloudFormation::WaitCondition``: its reference is a signed
    URL that cfn-signal (or curl) POSTs to, with ``{"Status": "SUCCESS"|"FAILURE",
    "Reason", "Data", "UniqueId"}`` (no token needed)."""

    type_name = AWS_HANDLE_TYPE
    properties_schema = {}
    attributes_schema = {}

    def get_reference_id(self):
        return signal_url(self.physical_id) if self.physical_id else self.name

    def attributes(self):
        return {}

    def handle_signal(self, details):
        # As Heat's AWS handle: exactly cfn-signal's four keys.
        if not isinstance(details, dict) or set(details) != set(CFN_KEYS):
            raise BadRequest(f"Metadata format invalid: a signal to {self.type_name} has the "
                             f"keys {', '.join(sorted(CFN_KEYS))}")
        return super().handle_signal(details)

    def signal_wakes(self):
        if not self.physical_id:
            return []
        rows = Resource.objects.filter(stack_id=self.context.stack_id, type=AWS_CONDITION_TYPE,
                                       action_cookie__isnull=False)
        return [pk for pk, pending in rows.values_list("pk", "action_cookie")
                if handle_uuid(((pending or {}).get("props") or {}).get("Handle"))
                == self.physical_id]


@register
class CfnWaitCondition(CfnMapped, WaitCondition):
    """Waits for ``Count`` SUCCESS signals on ``Handle`` (a WaitConditionHandle's
    reference, its URL) for at most ``Timeout`` seconds. ``Data``: a JSON string of
    ``{UniqueId: Data}`` of the signals."""

    type_name = AWS_CONDITION_TYPE
    properties_schema = {
        "Handle": Property("String", description="A reference to the wait condition handle "
                           "({Ref: handle}).", required=True),
        "Timeout": Property("Integer", description="Seconds to wait for the signals.",
                            required=True, constraints=(Range(1, 43200),)),
        "Count": Property("Integer", description="SUCCESS signals needed.", default=1,
                          update_allowed=True, constraints=(Range(1, None),)),
    }
    attributes_schema = {
        "Data": Attribute("JSON string containing data associated with wait condition "
                          "signals sent to the handle."),
    }

    def native_properties(self, cfn):
        return {"handle": handle_uuid(cfn.get("Handle")), "timeout": cfn.get("Timeout", 3600),
                "count": cfn.get("Count", 1)}

    def attributes(self):
        data = super().attributes().get("data")
        return {"Data": data} if data is not None else {}


_ADJUSTMENTS = {"ChangeInCapacity": "change_in_capacity", "ExactCapacity": "exact_capacity",
                "PercentChangeInCapacity": "percent_change_in_capacity"}


@register
class CfnAutoScalingGroup(CfnMapped, AutoScalingGroup):
    """``MinSize`` to ``MaxSize`` servers (``DesiredCapacity`` to start with) built from the
    launch configuration ``LaunchConfigurationName`` refers to. Changing the sizes adds or
    removes servers (oldest first); changing the configuration rebuilds them, in batches
    under an ``AutoScalingRollingUpdate`` update policy (``MaxBatchSize``,
    ``MinInstancesInService``, ``PauseTime``).
    ``InstanceList``: their addresses, comma separated."""

    type_name = "AWS::AutoScaling::AutoScalingGroup"
    properties_schema = {
        "AvailabilityZones": Property("List", description="Not Implemented.", required=True),
        "LaunchConfigurationName": Property("String", description="The reference to a "
                                            "LaunchConfiguration resource.", required=True,
                                            update_allowed=True),
        "MaxSize": Property("Integer", description="Maximum number of instances in the group.",
                            required=True, update_allowed=True, constraints=(Range(0, None),)),
        "MinSize": Property("Integer", description="Minimum number of instances in the group.",
                            required=True, update_allowed=True, constraints=(Range(0, None),)),
        "DesiredCapacity": Property("Integer", description="Desired initial number of "
                                    "instances.", update_allowed=True),
        "Cooldown": Property("Integer", description="Cooldown period, in seconds.",
                             update_allowed=True),
        "Tags": Property("List", description="Tags (Key, Value) of the instances (their "
                         "metadata).", schema=Property("Map", schema={
                             "Key": Property("String", required=True),
                             "Value": Property("String", required=True)})),
        "LoadBalancerNames": _accepted("List"),
        "VPCZoneIdentifier": _accepted("List"),
        "InstanceId": _accepted("String"),
        "HealthCheckGracePeriod": _accepted("Integer"),
        "HealthCheckType": _accepted("String"),
    }
    attributes_schema = {
        "InstanceList": Attribute("A comma-delimited list of server ip addresses. "
                                  "(Heat extension).", "string"),
    }
    update_policy_schema = {
        "AutoScalingRollingUpdate": Property("Map", schema=CFN_ROLLING_UPDATE_SCHEMA),
    }

    @classmethod
    def validate_update_policy(cls, raw, *, resource_name):
        return cfn_rolling_policy(cls, raw, key="AutoScalingRollingUpdate",
                                  resource_name=resource_name)

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super(AutoScalingGroup, cls).validate_properties(raw, resource_name=resource_name)
        native = cls.native_properties(None, props)
        AutoScalingGroup.validate_properties(native, resource_name=resource_name)
        return props

    @classmethod
    def member_definitions(cls, properties):
        return {}  # the launch configuration is validated as a resource of its own

    def native_properties(self, cfn):
        return {"min_size": cfn.get("MinSize"), "max_size": cfn.get("MaxSize"),
                "desired_capacity": cfn.get("DesiredCapacity"), "cooldown": cfn.get("Cooldown"),
                "resource": {"type": "OS::Nova::Server",
                             "configuration": cfn.get("LaunchConfigurationName"),
                             "tags": cfn.get("Tags")}}

    def _member_definition(self):
        reference = self.cfn_properties["LaunchConfigurationName"]
        configuration = Resource.objects.filter(
            stack_id=self.context.stack_id, type=LAUNCH_CONFIGURATION_TYPE,
            physical_resource_id=reference, replaced_by__isnull=True).exclude(
            state="DELETE_COMPLETE").values_list("properties_data", flat=True).first()
        if configuration is None:
            raise ResourceFailure(f"LaunchConfigurationName ({reference}) reference can not "
                                  f"be found.")
        return {"type": "OS::Nova::Server",
                "properties": member_server(configuration, self.cfn_properties.get("Tags"))}

    def _rolling_policy(self):
        policy = self.update_policy.get("AutoScalingRollingUpdate") or {}
        return (policy.get("MinInstancesInService", 0), policy.get("MaxBatchSize", 1),
                iso_duration_seconds(policy.get("PauseTime", "PT0S")))

    def _rolling_update(self, size):
        """As Heat: a new launch configuration is rolled out only under an update policy."""
        return bool(self.update_policy.get("AutoScalingRollingUpdate")) and \
            super()._rolling_update(size)

    def attributes(self):
        native = super().attributes()
        members = self.members_view(native)  # the members' refs and attributes, read
        order = (members.get("refs_map") or {}).keys()
        addresses = (members.get("attributes") or {}).get("first_address") or {}
        native["InstanceList"] = ",".join(addresses.get(n) or "0.0.0.0" for n in order) or None
        return native


@register
class CfnScalingPolicy(CfnMapped, ScalingPolicy):
    """Resizes ``AutoScalingGroupName`` by ``ScalingAdjustment`` (``AdjustmentType``:
    ChangeInCapacity, ExactCapacity, PercentChangeInCapacity) when its ``AlarmUrl`` (also
    its reference) is POSTed to; signals within ``Cooldown`` seconds after a scaling are
    ignored."""

    type_name = "AWS::AutoScaling::ScalingPolicy"
    properties_schema = {
        "AutoScalingGroupName": Property("String", description="AutoScaling group name to "
                                         "apply policy to.", required=True),
        "ScalingAdjustment": Property("Number", description="Size of adjustment.",
                                      required=True, update_allowed=True),
        "AdjustmentType": Property("String", description="Type of adjustment (absolute or "
                                   "percentage).", required=True, update_allowed=True,
                                   constraints=(AllowedValues(tuple(_ADJUSTMENTS)),)),
        "Cooldown": Property("Number", description="Cooldown period, in seconds.",
                             update_allowed=True),
        "MinAdjustmentStep": Property("Integer", description="Minimum number of resources "
                                      "that are added or removed when the AutoScaling group "
                                      "scales up or down.", update_allowed=True,
                                      constraints=(Range(0, None),)),
    }
    attributes_schema = {
        "AlarmUrl": Attribute("A signed url to handle the alarm. (Heat extension)."),
    }
    signed_url_attributes = ("AlarmUrl",)

    def native_properties(self, cfn):
        return {"auto_scaling_group_id": cfn.get("AutoScalingGroupName"),
                "adjustment_type": _ADJUSTMENTS.get(cfn.get("AdjustmentType")),
                "scaling_adjustment": cfn.get("ScalingAdjustment"),
                "cooldown": cfn.get("Cooldown"),
                "min_adjustment_step": cfn.get("MinAdjustmentStep")}

    def get_attribute(self, name, *path):
        return super().get_attribute("alarm_url") if name == "AlarmUrl" else None

    def get_reference_id(self):
        return self.get_attribute("AlarmUrl") or self.name


@register
class CfnStack(CfnMapped, NestedStackResource):
    """A nested stack from the template at ``TemplateURL``, which must be one of the
    request's ``files`` (this service fetches no URLs). ``Parameters`` are its parameters;
    ``Outputs.<name>`` reads one of its outputs."""

    type_name = "AWS::CloudFormation::Stack"
    properties_schema = {
        "TemplateURL": Property("String", description="The URL of a template that specifies "
                                "the stack (a key of the request's files).", required=True,
                                update_allowed=True),
        "TimeoutInMinutes": Property("Integer", description="The length of time, in minutes, "
                                    "to wait for the nested stack creation.",
                                    update_allowed=True, constraints=(Range(1, None),)),
        "Parameters": Property("Map", description="The set of parameters passed to this "
                               "nested stack.", update_allowed=True),
    }
    attributes_schema = {"Outputs.<name>": Attribute("Output <name> of the nested stack.")}

    def native_properties(self, cfn):
        return {"template_url": cfn.get("TemplateURL"), "timeout": cfn.get("TimeoutInMinutes"),
                "parameters": cfn.get("Parameters") or {}}

    def _template(self):
        url = self.properties["template_url"]
        files = self._files()
        if url not in files:
            raise ResourceFailure(f"Could not fetch remote template \"{url}\": this service "
                                  f"fetches no URLs; send the template in the request's files")
        return files[url]

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        if name.startswith("Outputs."):
            return (attrs.get("outputs") or {}).get(name[len("Outputs."):])
        return super().resolve_attribute(attrs, name, path)
