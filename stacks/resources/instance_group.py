"""``OS::Heat::InstanceGroup`` and the launch configuration it is made from.

``AWS::AutoScaling::LaunchConfiguration`` holds what every instance of a
group is built with (image, flavor, key, user data); it has no physical
object, its reference id names it. An instance group has ``Size`` servers
built from the configuration its ``LaunchConfigurationName`` refers to, in
a nested stack; ``InstanceList`` is their addresses, comma separated.
"""
import secrets

from stacks.models import Resource
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.nested_stacks import nested
from stacks.resources.registry import register
from stacks.resources.schema import Attribute, Property, Range
from stacks.resources.stack import ChildStackResource, members_within_budget
from stacks.resources.batches import iso_duration_seconds, plan
from stacks.resources.update_policy import BATCHES, CFN_ROLLING_UPDATE_SCHEMA, BatchedGroup, \
    cfn_rolling_policy, scaling_batch

LAUNCH_CONFIGURATION_TYPE = "AWS::AutoScaling::LaunchConfiguration"
MEMBER_TEMPLATE_VERSION = "2016-10-14"


@register
class LaunchConfiguration(ResourcePlugin):
    """The configuration of the instances of an InstanceGroup (image, flavor, key, user
    data, security groups). Nothing is made in the cloud; a change replaces it, and the
    groups using it rebuild their instances."""

    type_name = LAUNCH_CONFIGURATION_TYPE
    properties_schema = {
        "ImageId": Property("String", description="Glance image ID or name.", required=True),
        "InstanceType": Property("String", description="Nova instance type (flavor).",
                                 required=True),
        "KeyName": Property("String", description="Optional Nova keypair name."),
        "UserData": Property("String", description="User data to pass to instance."),
        "SecurityGroups": Property("List", description="Security group names to assign."),
        "BlockDeviceMappings": Property("List", description="Accepted; not used."),
        "NovaSchedulerHints": Property("List", description="Accepted; not used."),
    }

    def handle_create(self):
        self.physical_id = f"{self.context.stack_name}-{self.name}-{secrets.token_hex(6)}"


def member_server(configuration, tags):
    """An instance's OS::Nova::Server properties from a launch configuration's."""
    props = {"image": configuration["ImageId"], "flavor": configuration["InstanceType"]}
    for source, target in (("KeyName", "key_name"), ("UserData", "user_data"),
                           ("SecurityGroups", "security_groups")):
        if configuration.get(source) is not None:
            props[target] = configuration[source]
    if tags:
        props["metadata"] = {tag["Key"]: tag["Value"] for tag in tags}
    return props


def _index(name):
    return int(name) if name.isdigit() else -1


@register
class InstanceGroup(BatchedGroup, ChildStackResource):
    """``Size`` servers built from a launch configuration (``LaunchConfigurationName``:
    ``{get_resource: config}``). Changing ``Size`` adds or removes servers; changing the
    configuration rebuilds them, in batches under a ``RollingUpdate`` update policy
    (``MaxBatchSize``, ``MinInstancesInService``, ``PauseTime``: oldest first, as Heat).
    ``InstanceList``: their IP addresses, comma separated.
    """

    type_name = "OS::Heat::InstanceGroup"
    properties_schema = {
        "AvailabilityZones": Property("List", description="Not Implemented.", required=True),
        "LaunchConfigurationName": Property("String", description="The reference to a "
                                            "LaunchConfiguration resource.", required=True,
                                            update_allowed=True),
        "Size": Property("Integer", description="Desired number of instances.",
                         required=True, update_allowed=True, constraints=(Range(0, None),)),
        "LoadBalancerNames": Property("List", description="Accepted; not used."),
        "Tags": Property("List", description="Tags (Key, Value) of the instances (their "
                         "metadata).", schema=Property("Map", schema={
                             "Key": Property("String", required=True),
                             "Value": Property("String", required=True)})),
    }
    attributes_schema = {
        "InstanceList": Attribute("A comma-delimited list of server ip addresses. "
                                  "(Heat extension).", "string"),
    }
    update_policy_schema = {"RollingUpdate": Property("Map", schema=CFN_ROLLING_UPDATE_SCHEMA)}

    @classmethod
    def validate_update_policy(cls, raw, *, resource_name):
        return cfn_rolling_policy(cls, raw, key="RollingUpdate", resource_name=resource_name)

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        members_within_budget(props.get("Size"), resource_name=resource_name, prop="Size")
        return props

    def _configuration(self):
        reference = self.properties["LaunchConfigurationName"]
        row = Resource.objects.filter(
            stack_id=self.context.stack_id, type=LAUNCH_CONFIGURATION_TYPE,
            physical_resource_id=reference, replaced_by__isnull=True).exclude(
            state="DELETE_COMPLETE").values_list("properties_data", flat=True).first()
        if row is None:
            raise ResourceFailure(f"LaunchConfigurationName ({reference}) reference can not "
                                  f"be found.")
        return row

    def _member_definition(self):
        return {"type": "OS::Nova::Server",
                "properties": member_server(self._configuration(), self.properties.get("Tags"))}

    def _member_names(self):
        """"0" ... "Size - 1"; after a rolling update, the names it left (``members``),
        grown with the next numbers or shrunk oldest first."""
        size = self.properties["Size"]
        names = list(self.data.get("members") or ())
        if not names:
            return [str(i) for i in range(size)]
        following = max(_index(name) for name in names) + 1
        while len(names) < size:
            names.append(str(following))
            following += 1
        return names[len(names) - size:] if size else []

    def _template(self):
        member = self._member_definition()
        names = self._member_names()
        if "members" in self.data:
            self.data["members"] = names
        return {"heat_template_version": MEMBER_TEMPLATE_VERSION,
                "resources": {name: member for name in names}}

    def _batch_template(self, capacity, changed):
        current = self._child_members()
        following = max((_index(name) for name in current), default=-1) + 1

        def new_name():
            nonlocal following
            following += 1
            return str(following - 1)

        members = scaling_batch(current, self._member_definition(), capacity=capacity,
                                changed=changed, order=_index, new_name=new_name)
        self.data["members"] = list(members)
        return {"heat_template_version": MEMBER_TEMPLATE_VERSION, "resources": members}

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        self.data.pop(BATCHES, None)
        policy = self.update_policy.get("RollingUpdate")
        if policy and "LaunchConfigurationName" in changed and self.physical_id:
            current, size = len(self._child_members()), new_properties["Size"]
            target = min(size, current)  # as Heat: replace first, then grow
            batches = plan(target, current, batch_size=policy["MaxBatchSize"],
                           min_in_service=policy["MinInstancesInService"], surplus_stays=True)
            if size > target:
                batches.append((size, size - target))
            if batches:
                self._batches_start(batches, pause=iso_duration_seconds(policy["PauseTime"]))
                return None
        return super().handle_update(new_properties, changed)

    def check_update_complete(self, cookie):
        return self._batches_complete() if BATCHES in self.data else \
            super().check_update_complete(cookie)

    def _parameters(self):
        return {}

    def attributes(self):
        members = nested.nested_resources_data(self.physical_id) if self.physical_id else {}
        order = sorted(members, key=lambda n: int(n) if n.isdigit() else -1)
        addresses = [(members[n]["attrs"] or {}).get("first_address") or "0.0.0.0"
                     for n in order]
        return {"InstanceList": ",".join(addresses) or None}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)

