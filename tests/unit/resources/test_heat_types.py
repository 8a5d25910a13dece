"""Heat's own types without a database: schemas, update/replace rules, derived templates
and attributes of CloudConfig, MultipartMime, StructuredDeployment, the deployment
groups, ResourceChain, Delay, UpdateWaitConditionHandle and AutoScalingGroup."""
import email

import pytest
import yaml

from heatweb.exceptions import StackValidationFailed
from softwareconfig.deployment_groups import SoftwareDeploymentGroup, StructuredDeploymentGroup
from softwareconfig.structured import CloudConfigResource, MultipartMimeResource, \
    StructuredDeploymentResource, mime_message, substitute_inputs
from stacks.resources import registry
from stacks.resources.autoscaling import AutoScalingGroup
from stacks.resources.base import PluginContext
from stacks.resources.delay import Delay
from stacks.resources.resource_chain import ResourceChain, chain_template
from stacks.resources.resource_group import group_attribute


def test_heat_types_are_registered_with_heat_names():
    for name in ("OS::Heat::CloudConfig", "OS::Heat::MultipartMime",
                 "OS::Heat::StructuredDeployment", "OS::Heat::SoftwareDeploymentGroup",
                 "OS::Heat::StructuredDeploymentGroup", "OS::Heat::SoftwareDeployments",
                 "OS::Heat::StructuredDeployments", "OS::Heat::ResourceChain",
                 "OS::Heat::Delay", "OS::Heat::UpdateWaitConditionHandle"):
        assert registry.get_plugin(name).type_name == name


def test_cloud_config_is_cloud_config_yaml_and_replaced_on_change():
    plugin = CloudConfigResource(name="cc", context=None, properties={
        "cloud_config": {"packages": ["nginx"], "runcmd": ["echo hi"]}})
    group, config = plugin.group_and_config()
    assert group == "Heat::Ungrouped"
    assert config.startswith("#cloud-config\n")
    assert yaml.safe_load(config) == {"packages": ["nginx"], "runcmd": ["echo hi"]}
    assert CloudConfigResource.needs_replacement({"cloud_config"})


def test_multipart_mime_parts_inline_by_id_and_nested():
    stored = {"6f1e2a34-1111-4222-8333-944455556666": "#!/bin/sh\necho stored"}
    inner = mime_message([{"config": "inner-a"}, {"config": "inner-b", "subtype": "x-shellscript"}],
                         stored.get)
    message = mime_message([
        {"config": "#cloud-config\npackages: [a]", "subtype": "cloud-config"},
        {"config": "6f1e2a34-1111-4222-8333-944455556666", "filename": "boot.sh"},
        {"config": inner, "type": "multipart"}], stored.get)
    parts = email.message_from_string(message).get_payload()
    assert [p.get_content_type() for p in parts] == [
        "text/cloud-config", "text/boot", "text/plain", "text/x-shellscript"]
    assert parts[1].get_filename() == "boot.sh"
    assert parts[1].get_payload() == "#!/bin/sh\necho stored"
    assert [p.get_payload() for p in parts[2:]] == ["inner-a", "inner-b"]


def test_multipart_mime_schema_as_heat():
    props = MultipartMimeResource.validate_properties(
        {"parts": [{"config": "x"}]}, resource_name="m")
    assert props == {"group": "Heat::Ungrouped", "parts": [{"config": "x", "type": "text"}]}
    with pytest.raises(StackValidationFailed, match="parts"):
        MultipartMimeResource.validate_properties({"parts": [{"type": "text"}]},
                                                  resource_name="m")
    with pytest.raises(StackValidationFailed, match="parts"):
        MultipartMimeResource.validate_properties({"parts": [{"config": "x", "type": "zip"}]},
                                                  resource_name="m")


def test_structured_deployment_substitutes_its_inputs():
    config = {"config": {"port": {"get_input": "port"}, "list": [{"get_input": "name"}],
                         "server": {"get_input": "deploy_server_id"},
                         "kept": {"get_input": "x", "other": 1}, "missing": {"get_input": "m"}}}
    inputs = {"port": 80, "name": "web", "deploy_server_id": "s-1"}
    assert substitute_inputs(config, inputs) == {"config": {
        "port": 80, "list": ["web"], "server": "s-1", "kept": {"get_input": "x", "other": 1},
        "missing": None}}
    assert substitute_inputs({"a": {"my_input": "port"}, "b": {"get_input": "port"}}, inputs,
                             input_key="my_input") == {"a": 80, "b": {"get_input": "port"}}
    with pytest.raises(Exception, match="m"):
        substitute_inputs(config, inputs, strict=True)


def test_structured_deployment_schema():
    props = StructuredDeploymentResource.validate_properties(
        {"server": "s", "config": "c"}, resource_name="d")
    assert props["input_key"] == "get_input" and props["input_values_validate"] == "LAX"
    with pytest.raises(StackValidationFailed, match="input_values_validate"):
        StructuredDeploymentResource.validate_properties(
            {"server": "s", "input_values_validate": "SOMETIMES"}, resource_name="d")


def test_deployment_group_members_and_attributes():
    props = SoftwareDeploymentGroup.validate_properties(
        {"servers": {"a": "s-a", "b": "s-b"}, "config": "c", "input_values": {"k": 1}},
        resource_name="g")
    members = SoftwareDeploymentGroup.member_definitions(props)
    assert set(members) == {"a", "b"}
    member_type, member_props = members["b"]
    assert member_type == "OS::Heat::SoftwareDeployment"
    assert member_props["server"] == "s-b" and member_props["config"] == "c"
    assert "servers" not in member_props
    assert StructuredDeploymentGroup.member_definitions(props)["a"][0] == \
        "OS::Heat::StructuredDeployment"
    assert not SoftwareDeploymentGroup.needs_replacement({"servers", "config", "input_values",
                                                          "name", "actions"})
    assert SoftwareDeploymentGroup.needs_replacement({"signal_transport"})
    attrs = {"refs_map": {"a": "d-a", "b": "d-b"}, "refs": ["d-a", "d-b"],
             "attributes": {"deploy_stdout": {"a": "out-a", "b": "out-b"},
                            "result": {"a": {"x": 1}, "b": {"x": 2}}}}
    resolve = SoftwareDeploymentGroup.resolve_attribute
    assert resolve(attrs, "deploy_stdouts", ()) == {"a": "out-a", "b": "out-b"}
    assert resolve(attrs, "result", ()) == {"a": {"x": 1}, "b": {"x": 2}}
    assert resolve(attrs, "result", ("b", "x")) == 2
    assert resolve(attrs, "refs", ()) == ["d-a", "d-b"]


def test_resource_chain_template_orders_members_unless_concurrent():
    chained = chain_template(["OS::Heat::None", "OS::Heat::Value"], {"value": "v"},
                             concurrent=False)["resources"]
    assert chained["0"] == {"type": "OS::Heat::None", "properties": {"value": "v"}}
    assert chained["1"]["depends_on"] == ["0"]
    concurrent = chain_template(["A", "B", "C"], {}, concurrent=True)["resources"]
    assert all("depends_on" not in r for r in concurrent.values())
    props = ResourceChain.validate_properties({"resources": ["OS::Heat::None"]},
                                              resource_name="c")
    assert props["concurrent"] is False
    assert ResourceChain.needs_replacement({"concurrent"})
    assert not ResourceChain.needs_replacement({"resources", "resource_properties"})


def test_member_attribute_paths_as_heat_splits_them():
    attrs = {"refs_map": {"0": "r0", "1": "r1"},
             "attributes": {"value": {"0": "v0", "1": {"k": "deep"}}}}
    assert group_attribute(attrs, "resource.0.value", ()) == "v0"
    assert group_attribute(attrs, "resource.1.value", ("k",)) == "deep"
    assert group_attribute(attrs, "resource.1", ("value", "k")) == "deep"
    assert group_attribute(attrs, "resource.1", ()) == "r1"


def test_autoscaling_group_outputs_by_member_and_oldest_first():
    attrs = {"current_size": 3, "refs": ["r2", "r10", "r11"],
             "refs_map": {"m11": "r11", "m2": "r2", "m10": "r10"},
             "attributes": {"first_address": {"m2": "10.0.0.2", "m10": "10.0.0.10",
                                              "m11": "10.0.0.11"},
                            "show": {"m2": {"id": "a"}, "m10": {"id": "b"}, "m11": {"id": "c"}}}}
    resolve = AutoScalingGroup.resolve_attribute
    assert resolve(attrs, "outputs_list", ("first_address",)) == [
        "10.0.0.2", "10.0.0.10", "10.0.0.11"]
    assert resolve(attrs, "outputs", ("show", "id")) == {"m2": "a", "m10": "b", "m11": "c"}
    assert resolve(attrs, "current_size", ()) == 3
    assert resolve(attrs, "refs_map", ()) == attrs["refs_map"]
    assert resolve(attrs, "resource.m10.first_address", ()) == "10.0.0.10"


def test_delay_waits_only_during_its_actions():
    context = PluginContext(cloud=None, stack_id="s", stack_name="n", project_id="p")
    props = Delay.validate_properties({"min_wait": 5, "actions": ["CREATE", "DELETE"]},
                                      resource_name="d")
    assert props["max_jitter"] == 0 and props["jitter_multiplier"] == 1.0
    delay = Delay(name="d", properties=props, context=context)
    assert not delay.check_create_complete(delay.handle_create())
    assert not delay.check_delete_complete(delay.handle_delete())
    assert delay.check_suspend_complete(delay.handle_suspend())
    assert Delay.never_replaced()
    with pytest.raises(StackValidationFailed, match="actions"):
        Delay.validate_properties({"actions": ["UPDATE"]}, resource_name="d")


def test_update_wait_condition_handle_is_replaced_by_every_update():
    handle = registry.get_plugin("OS::Heat::UpdateWaitConditionHandle")
    assert handle.replace_on_update and not handle.never_replaced()
    assert not registry.get_plugin("OS::Heat::WaitConditionHandle").replace_on_update


def test_instance_group_members_from_the_launch_configuration():
    from stacks.resources.instance_group import InstanceGroup, LaunchConfiguration, \
        member_server
    configuration = LaunchConfiguration.validate_properties(
        {"ImageId": "cirros", "InstanceType": "m1.tiny", "KeyName": "k",
         "UserData": "#!/bin/sh"}, resource_name="lc")
    assert member_server(configuration, [{"Key": "role", "Value": "web"}]) == {
        "image": "cirros", "flavor": "m1.tiny", "key_name": "k", "user_data": "#!/bin/sh",
        "metadata": {"role": "web"}}
    with pytest.raises(StackValidationFailed, match="InstanceType"):
        LaunchConfiguration.validate_properties({"ImageId": "cirros"}, resource_name="lc")
    assert LaunchConfiguration.needs_replacement({"ImageId"})
    assert not InstanceGroup.needs_replacement({"Size", "LaunchConfigurationName"})
    with pytest.raises(StackValidationFailed, match="AvailabilityZones"):
        InstanceGroup.validate_properties({"LaunchConfigurationName": "x", "Size": 1},
                                          resource_name="g")
