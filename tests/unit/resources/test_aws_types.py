"""The AWS:: types without a database: CloudFormation schemas, their mapping to the
native plugins' properties, and which changes update in place."""
import pytest

from heatweb.exceptions import BadRequest, StackValidationFailed
from stacks.resources import registry
from stacks.resources.aws import CfnAutoScalingGroup, CfnScalingPolicy, CfnWaitCondition, \
    CfnWaitConditionHandle, Ec2SecurityGroup, Instance, handle_uuid
from stacks.resources.base import PluginContext
from stacks.resources.compute import Server

CONTEXT = PluginContext(cloud=None, stack_id="s1", stack_name="st", project_id="p")
AWS_TYPES = ("AWS::EC2::Instance", "AWS::EC2::SecurityGroup",
             "AWS::CloudFormation::WaitCondition", "AWS::CloudFormation::WaitConditionHandle",
             "AWS::AutoScaling::AutoScalingGroup", "AWS::AutoScaling::LaunchConfiguration",
             "AWS::AutoScaling::ScalingPolicy", "AWS::CloudFormation::Stack")


def test_aws_types_are_registered_with_heat_names():
    for name in AWS_TYPES:
        assert registry.get_plugin(name).type_name == name
        assert registry.get_plugin(name).schema_doc()["resource_type"] == name


def plugin(cls, props):
    return cls(name="r", properties=cls.validate_properties(props, resource_name="r"),
               context=CONTEXT)


def test_instance_properties_map_to_a_server():
    instance = plugin(Instance, {
        "ImageId": "cirros", "InstanceType": "m1.small", "KeyName": "k",
        "UserData": "#!/bin/sh", "SecurityGroups": ["web"],
        "NetworkInterfaces": ["port-1", {"NetworkInterfaceId": "port-2", "DeviceIndex": "1"}],
        "Tags": [{"Key": "a", "Value": "b"}]})
    assert instance.properties == {
        "image": "cirros", "flavor": "m1.small", "key_name": "k", "user_data": "#!/bin/sh",
        "user_data_format": "HEAT_CFNTOOLS", "security_groups": ["web"],
        "networks": [{"port": "port-1"}, {"port": "port-2"}], "metadata": {"a": "b"}}
    assert instance.cfn_properties["ImageId"] == "cirros"
    subnet = plugin(Instance, {"ImageId": "i", "InstanceType": "f", "SubnetId": "sub"})
    assert subnet.properties["networks"] == [{"subnet": "sub"}]


@pytest.mark.parametrize("cls,changed,replace", [
    (Instance, {"InstanceType"}, False), (Instance, {"Tags"}, False),
    (Instance, {"ImageId"}, True), (Instance, {"UserData"}, True),
    (Ec2SecurityGroup, {"SecurityGroupIngress", "SecurityGroupEgress"}, False),
    (Ec2SecurityGroup, {"GroupDescription"}, True),
    (CfnWaitCondition, {"Count"}, False), (CfnWaitCondition, {"Timeout"}, True),
    (CfnAutoScalingGroup, {"MinSize", "MaxSize", "LaunchConfigurationName"}, False),
    (CfnScalingPolicy, {"ScalingAdjustment", "AdjustmentType", "Cooldown"}, False),
    (CfnScalingPolicy, {"AutoScalingGroupName"}, True),
])
def test_update_or_replace(cls, changed, replace):
    assert cls.needs_replacement(changed) is replace


def test_an_update_hands_the_native_plugin_native_names(monkeypatch):
    seen = {}
    monkeypatch.setattr(Server, "handle_update", lambda self, new, changed: seen.update(
        new=new, changed=changed, properties=self.properties))
    instance = plugin(Instance, {"ImageId": "i", "InstanceType": "m1.small"})
    new = Instance.validate_properties({"ImageId": "i", "InstanceType": "m1.medium",
                                        "Tags": [{"Key": "k", "Value": "v"}]},
                                       resource_name="r")
    instance.handle_update(new, ["InstanceType", "Tags"])
    assert seen["changed"] == ["flavor", "metadata"]
    assert seen["new"]["flavor"] == "m1.medium" and seen["properties"] is seen["new"]
    instance.properties = seen["new"]  # what the native plugin sets back: kept as it is
    assert instance.properties["flavor"] == "m1.medium"
    assert instance.cfn_properties["InstanceType"] == "m1.medium"


def test_security_group_rules_as_neutron_rules():
    group = plugin(Ec2SecurityGroup, {"GroupDescription": "web", "SecurityGroupIngress": [
        {"IpProtocol": "tcp", "FromPort": "80", "ToPort": "80", "CidrIp": "0.0.0.0/0"},
        {"IpProtocol": "icmp", "FromPort": "-1", "ToPort": "-1", "SourceSecurityGroupId": "g"}],
        "SecurityGroupEgress": [{"IpProtocol": "-1", "CidrIp": "10.0.0.0/8"}]})
    assert group.properties == {"description": "web", "rules": [
        {"direction": "ingress", "ethertype": "IPv4", "protocol": "tcp", "port_range_min": 80,
         "port_range_max": 80, "remote_ip_prefix": "0.0.0.0/0"},
        {"direction": "ingress", "ethertype": "IPv4", "protocol": "icmp",
         "remote_group_id": "g"},
        {"direction": "egress", "ethertype": "IPv4", "protocol": None,
         "remote_ip_prefix": "10.0.0.0/8"}]}
    assert group.get_reference_id() == "r"  # no physical object yet: its name


def test_wait_condition_reads_the_handle_id_from_its_url():
    uuid = "0f0e6a1c-1111-4222-8333-944445555666"
    wait = plugin(CfnWaitCondition, {"Handle": f"http://h/webhooks/signal/{uuid}/abc123",
                                     "Timeout": "60"})
    assert wait.properties == {"handle": uuid, "timeout": 60, "count": 1}
    assert handle_uuid("not-a-url") == "not-a-url"
    with pytest.raises(StackValidationFailed, match="Timeout"):
        CfnWaitCondition.validate_properties({"Handle": "x", "Timeout": 0}, resource_name="w")


def test_auto_scaling_group_validates_its_sizes_and_maps_them():
    props = {"AvailabilityZones": ["nova"], "LaunchConfigurationName": "lc",
             "MinSize": "2", "MaxSize": "4", "DesiredCapacity": "3"}
    group = plugin(CfnAutoScalingGroup, props)
    assert (group.properties["min_size"], group.properties["max_size"],
            group.properties["desired_capacity"]) == (2, 4, 3)
    with pytest.raises(StackValidationFailed, match="min_size can not be greater"):
        CfnAutoScalingGroup.validate_properties({**props, "MinSize": "5"}, resource_name="g")


def test_scaling_policy_adjustment_types():
    policy = plugin(CfnScalingPolicy, {"AutoScalingGroupName": "g",
                                       "AdjustmentType": "PercentChangeInCapacity",
                                       "ScalingAdjustment": "50", "MinAdjustmentStep": "1"})
    assert policy.properties["adjustment_type"] == "percent_change_in_capacity"
    assert policy._new_size(4) == 6
    with pytest.raises(StackValidationFailed, match="AdjustmentType"):
        CfnScalingPolicy.validate_properties({"AutoScalingGroupName": "g",
                                              "AdjustmentType": "change_in_capacity",
                                              "ScalingAdjustment": 1}, resource_name="p")


@pytest.mark.parametrize("details", [
    {"Status": "SUCCESS"}, {"status": "SUCCESS", "reason": "r", "data": "d", "id": "1"},
    {"Status": "SUCCESS", "Reason": "r", "Data": "d", "UniqueId": "1", "Extra": 1}, ["x"]])
def test_an_aws_handle_takes_exactly_cfn_signals_keys(details):
    handle = CfnWaitConditionHandle(name="h", properties={}, context=CONTEXT, physical_id="u")
    with pytest.raises(BadRequest, match="Data, Reason, Status, UniqueId"):
        handle.handle_signal(details)
