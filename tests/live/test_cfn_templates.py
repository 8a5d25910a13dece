"""CloudFormation-format templates through python-heatclient against the live service:
an instance, a security group and a wait condition signalled by curl (cfn-signal's
body) to the handle's URL, created, updated and deleted; Heat's classic
WordPress_Single_Instance shape validated and created; the template versions."""
import email
import json
import subprocess
import time
import uuid

import pytest
import requests

from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import wait_deleted, wait_stack
from tests.live.test_wait_condition import heat, tenant  # noqa: F401 (fixtures)
from tests.unit.hot.test_cfn_template import WORDPRESS

pytestmark = pytest.mark.live


INIT = {"AWS::CloudFormation::Init": {"config": {"files": {"/tmp/hello": {"content": "hi"}}}}}


def instance_template(*, instance_type="m1.small", ports=("22",)):
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "An instance that signals its wait condition",
        "Parameters": {"InstanceType": {"Type": "String", "Default": "m1.small",
                                        "AllowedValues": ["m1.small", "m1.medium"]}},
        "Resources": {
            "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
            "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
                "GroupDescription": "ssh in",
                "SecurityGroupIngress": [{"IpProtocol": "tcp", "FromPort": p, "ToPort": p,
                                          "CidrIp": "0.0.0.0/0"} for p in ports]}},
            "Server": {"Type": "AWS::EC2::Instance", "Metadata": INIT, "Properties": {
                "ImageId": "cirros", "InstanceType": {"Ref": "InstanceType"},
                "SecurityGroups": [{"Ref": "Group"}],
                "Tags": [{"Key": "role", "Value": "web"}],
                "UserData": {"Fn::Base64": {"Fn::Join": ["", [
                    "#!/bin/sh\n/opt/aws/bin/cfn-signal -e 0 '", {"Ref": "Handle"}, "'\n"]]}}}},
            "Wait": {"Type": "AWS::CloudFormation::WaitCondition", "DependsOn": "Server",
                     "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "600"}}},
        "Outputs": {
            "HandleURL": {"Value": {"Ref": "Handle"}},
            "Data": {"Value": {"Fn::GetAtt": ["Wait", "Data"]}},
            "PublicIp": {"Value": {"Fn::GetAtt": ["Server", "PublicIp"]}},
            "GroupRef": {"Value": {"Ref": "Group"}},
            "Stack": {"Value": {"Fn::Join": [":", [{"Ref": "AWS::StackName"},
                                                   {"Ref": "AWS::Region"}]]}}},
    }


def output(hc, stack_id, key):
    return hc.stacks.output_show(stack_id, key)["output"]["output_value"]


def handle_url(hc, stack_id):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        url = output(hc, stack_id, "HandleURL")
        if isinstance(url, str) and url.startswith("http"):
            return url
        time.sleep(0.3)
    raise AssertionError("the handle never had a URL")


def cfn_signal(url, body, *, method="POST"):
    """curl as a template's UserData runs it; PUT with no Content-Type is what heat-cfntools'
    cfn-signal sends."""
    content_type = "Content-Type: application/json" if method == "POST" else "Content-Type:"
    done = subprocess.run(["curl", "-s", "-i", "-X", method, "-H", content_type,
                           "--data-binary", json.dumps(body), url],
                          capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.startswith("HTTP/1.1 200"), done.stdout + done.stderr


def _user_data_parts(live_service, server_id):
    """The user_data the simulated Nova got for the server: (type, file name, text)."""
    text = cloud(live_service, "from stacks.cloud.models import SimServer\n"
                               f"print(json.dumps(SimServer.objects.get(pk={server_id!r})"
                               ".user_data))")
    return [(p.get_content_type(), p.get_filename(), p.get_payload())
            for p in email.message_from_string(text).get_payload()]


def test_instance_security_group_and_wait_condition_create_update_delete(
        heat, live_service):  # noqa: F811
    name = f"cfn-{uuid.uuid4().hex[:8]}"
    stack_id = heat.stacks.create(stack_name=name, template=instance_template())["stack"]["id"]
    url = handle_url(heat, stack_id)
    assert "/webhooks/signal/" in url
    time.sleep(0.5)
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"  # still waiting
    cfn_signal(url, {"Status": "SUCCESS", "Reason": "configured", "UniqueId": "web1",
                     "Data": "ready"}, method="PUT")
    stack = wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert json.loads(output(heat, stack_id, "Data")) == {"web1": "ready"}
    assert output(heat, stack_id, "PublicIp")
    assert output(heat, stack_id, "GroupRef") == f"{name}-Group"
    assert output(heat, stack_id, "Stack") == f"{name}:ap-southeast-1"
    assert stack.parameters["AWS::StackName"] == name
    assert stack.parameters["AWS::StackId"].endswith(f":stacks/{name}/{stack_id}")
    types = {r.resource_name: r.resource_type for r in heat.resources.list(stack_id)}
    assert types == {"Handle": "AWS::CloudFormation::WaitConditionHandle",
                     "Group": "AWS::EC2::SecurityGroup", "Server": "AWS::EC2::Instance",
                     "Wait": "AWS::CloudFormation::WaitCondition"}
    server_id = heat.resources.get(stack_id, "Server").physical_resource_id
    group_id = heat.resources.get(stack_id, "Group").physical_resource_id
    # Heat's HEAT_CFNTOOLS user data: its MIME with the UserData as cfn-userdata, the
    # Metadata as cfn-init-data, ec2-user made by cloud-init.
    parts = _user_data_parts(live_service, server_id)
    assert [n for _, n, _ in parts] == [
        "cloud-config", "boothook.sh", "part-handler.py", "cfn-userdata", "loguserdata.py",
        "cfn-init-data", "cfn-metadata-server", "cfn-boto-cfg"]
    assert parts[3][2] == f"#!/bin/sh\n/opt/aws/bin/cfn-signal -e 0 '{url}'\n"
    assert json.loads(parts[5][2]) == INIT and "user: ec2-user" in parts[0][2]
    assert parts[6][2].endswith("/v1/")

    # A resize and a new ingress rule: both in place.
    heat.stacks.update(stack_id, template=instance_template(ports=("22", "80")),
                       parameters={"InstanceType": "m1.medium"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "Server").physical_resource_id == server_id
    assert heat.resources.get(stack_id, "Group").physical_resource_id == group_id
    assert heat.stacks.get(stack_id).parameters["InstanceType"] == "m1.medium"

    # The wait condition is unchanged by the update: it does not wait again.
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


def test_a_failure_signal_fails_the_wait_condition(heat):  # noqa: F811
    stack_id = heat.stacks.create(stack_name=f"cfn-{uuid.uuid4().hex[:8]}",
                                  template=instance_template())["stack"]["id"]
    url = handle_url(heat, stack_id)
    refused = requests.post(url, json={"Status": "SUCCESS"})  # Heat: all four keys
    assert refused.status_code == 400 and "Metadata format invalid" in refused.text
    cfn_signal(url, {"Status": "FAILURE", "Reason": "no disk", "UniqueId": "1", "Data": ""})
    stack = wait_stack(heat, stack_id, "CREATE_FAILED")
    assert "no disk" in stack.stack_status_reason
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


def test_wordpress_single_instance_shape_validates_and_creates(heat):  # noqa: F811
    shown = heat.stacks.validate(template=WORDPRESS)
    assert shown["Description"] == "WordPress on a single instance"
    assert shown["Parameters"]["InstanceType"]["AllowedValues"] == ["m1.tiny", "m1.small",
                                                                     "m1.medium"]
    assert shown["Parameters"]["DBPassword"]["NoEcho"] == "true"
    preview = heat.stacks.preview(stack_name="wp-preview", template=WORDPRESS,
                                  parameters={"KeyName": "heat_key"})
    (server,) = preview.resources
    assert server["resource_type"] == "AWS::EC2::Instance"
    assert server["properties"]["ImageId"] == "F18-x86_64-cfntools"  # FindInMap of FindInMap
    stack_id = heat.stacks.create(stack_name=f"wp-{uuid.uuid4().hex[:8]}", template=WORDPRESS,
                                  parameters={"KeyName": "heat_key",
                                              "InstanceType": "m1.medium"})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    url = output(heat, stack_id, "WebsiteURL")
    assert url.startswith("http://") and url.endswith("/wordpress") and len(url) > 17
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


def test_a_bad_cfn_parameter_is_refused_with_its_constraint_description(heat):  # noqa: F811
    from heatclient import exc as heat_exc
    with pytest.raises(heat_exc.HTTPBadRequest, match="must be a valid EC2 instance type"):
        heat.stacks.create(stack_name=f"wp-{uuid.uuid4().hex[:8]}", template=WORDPRESS,
                           parameters={"KeyName": "k", "InstanceType": "m9.huge"})


def test_template_versions_list_the_cfn_formats_with_their_functions(heat):  # noqa: F811
    versions = {v.version: v.type for v in heat.template_versions.list()}
    assert versions["AWSTemplateFormatVersion.2010-09-09"] == "cfn"
    assert versions["HeatTemplateFormatVersion.2012-12-12"] == "cfn"
    aws = {f.functions for f in heat.template_versions.get(
        "AWSTemplateFormatVersion.2010-09-09")}
    assert {"Fn::If", "Fn::FindInMap", "Fn::GetAtt", "Ref", "Fn::Base64"} <= aws
    assert "Fn::Equals" not in aws
    with_conditions = {f.functions for f in heat.template_versions.get(
        "AWSTemplateFormatVersion.2010-09-09", with_condition_func=True)}
    assert {"Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"} <= with_conditions
    heat_format = {f.functions for f in heat.template_versions.get(
        "HeatTemplateFormatVersion.2012-12-12")}
    assert "Fn::If" not in heat_format and "Fn::FindInMap" in heat_format


SCALING = {
    "HeatTemplateFormatVersion": "2012-12-12",
    "Parameters": {"MaxSize": {"Type": "Number", "Default": "3"}},
    "Resources": {
        "LaunchConfig": {"Type": "AWS::AutoScaling::LaunchConfiguration", "Properties": {
            "ImageId": "cirros", "InstanceType": "m1.small", "UserData": "#!/bin/sh\n"}},
        "Group": {"Type": "AWS::AutoScaling::AutoScalingGroup", "Properties": {
            "AvailabilityZones": {"Fn::GetAZs": ""},
            "LaunchConfigurationName": {"Ref": "LaunchConfig"},
            "MinSize": "1", "MaxSize": {"Ref": "MaxSize"}, "DesiredCapacity": "1",
            "Tags": [{"Key": "tier", "Value": "web"}]}},
        "ScaleUp": {"Type": "AWS::AutoScaling::ScalingPolicy", "Properties": {
            "AutoScalingGroupName": {"Ref": "Group"}, "AdjustmentType": "ChangeInCapacity",
            "ScalingAdjustment": "1"}}},
    "Outputs": {"Instances": {"Value": {"Fn::GetAtt": ["Group", "InstanceList"]}},
                "AlarmUrl": {"Value": {"Fn::GetAtt": ["ScaleUp", "AlarmUrl"]}},
                "PolicyRef": {"Value": {"Ref": "ScaleUp"}}},
}


def test_auto_scaling_group_from_a_launch_configuration_scaled_by_its_policy(heat):  # noqa: F811
    stack_id = heat.stacks.create(stack_name=f"asg-{uuid.uuid4().hex[:8]}",
                                  template=SCALING)["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert len(output(heat, stack_id, "Instances").split(",")) == 1
    alarm_url = output(heat, stack_id, "AlarmUrl")
    assert "/webhooks/signal/" in alarm_url and output(heat, stack_id, "PolicyRef") == alarm_url
    assert requests.post(alarm_url, json={}).status_code == 200  # signed: no token
    # The members' stack (the group's physical id) grows to two servers.
    members_id = heat.resources.get(stack_id, "Group").physical_resource_id
    deadline = time.monotonic() + 60
    while len(servers := [r for r in heat.resources.list(members_id)
                          if r.resource_status == "CREATE_COMPLETE"]) != 2:
        assert time.monotonic() < deadline, [r.resource_status for r in servers]
        time.sleep(0.3)
    assert {r.resource_type for r in servers} == {"OS::Nova::Server"}
    # A smaller MaxSize removes members (the oldest first) down to it.
    heat.stacks.update(stack_id, template=SCALING, parameters={"MaxSize": "1"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert len(output(heat, stack_id, "Instances").split(",")) == 1
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


CHILD = json.dumps({
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {"Name": {"Type": "String"}},
    "Resources": {"Nothing": {"Type": "OS::Heat::None"}},
    "Outputs": {"Greeting": {"Value": {"Fn::Join": [" ", ["hello", {"Ref": "Name"}]]}}}})


def test_cloudformation_stack_from_a_template_url_in_files(heat):  # noqa: F811
    parent = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {
            "TemplateURL": "https://example.com/child.json", "TimeoutInMinutes": "5",
            "Parameters": {"Name": "world"}}}},
        "Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Child", "Outputs.Greeting"]}}}}
    stack_id = heat.stacks.create(stack_name=f"nest-{uuid.uuid4().hex[:8]}", template=parent,
                                  files={"https://example.com/child.json": CHILD}
                                  )["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert output(heat, stack_id, "Greeting") == "hello world"
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


def test_resource_type_template_in_cfn_format_creates(heat):  # noqa: F811
    body = heat.resource_types.generate_template("AWS::EC2::SecurityGroup",
                                                 template_type="cfn")
    assert body["HeatTemplateFormatVersion"] == "2012-12-12"
    assert body["Resources"]["SecurityGroup"]["Properties"]["GroupDescription"] == {
        "Ref": "GroupDescription"}
    shown = heat.resource_types.get("AWS::EC2::Instance")
    assert shown["properties"]["InstanceType"]["update_allowed"] is True
    assert set(shown["attributes"]) == {"AvailabilityZone", "PrivateDnsName",
                                        "PublicDnsName", "PrivateIp", "PublicIp"}
    stack_id = heat.stacks.create(
        stack_name=f"rt-{uuid.uuid4().hex[:8]}", template=body,
        parameters={"GroupDescription": "from the type's template", "VpcId": "",
                    "SecurityGroupIngress": "", "SecurityGroupEgress": ""})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)
