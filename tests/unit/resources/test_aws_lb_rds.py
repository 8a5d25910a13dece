"""AWS::ElasticLoadBalancing::LoadBalancer and AWS::RDS::DBInstance, Heat's two nested-stack
AWS types (openstack/heat-templates' WordPress_With_LB and WordPress_With_RDS): their
schemas, Heat's refusals, the generated child template and haproxy configuration, the
attributes and the update-or-replace rules."""
import json

import pytest
import yaml

from heatweb.exceptions import StackValidationFailed
from stacks.definitions import build_definition
from stacks.resources import aws_lb, registry
from stacks.resources.aws_lb import LoadBalancer, haproxy_config, nested_template, \
    server_address
from stacks.resources.aws_rds import DBInstance
from stacks.resources.base import PluginContext

LISTENERS = [{"LoadBalancerPort": "80", "InstancePort": "8080", "Protocol": "HTTP"}]
HEALTH = {"HealthyThreshold": "3", "Interval": "10", "Target": "HTTP:80/",
          "Timeout": "5", "UnhealthyThreshold": "5"}


def lb_properties(**extra):
    return {"AvailabilityZones": ["nova"], "Listeners": LISTENERS, **extra}


def validate(cls, props):
    return cls.validate_properties(props, resource_name="LB")


def test_both_types_are_registered_and_described():
    assert registry.get_plugin("AWS::ElasticLoadBalancing::LoadBalancer") is LoadBalancer
    assert registry.get_plugin("AWS::RDS::DBInstance") is DBInstance
    doc = LoadBalancer.schema_doc()
    # as Heat's, without the properties not implemented (AppCookieStickinessPolicy...)
    assert set(doc["properties"]) == {
        "AvailabilityZones", "HealthCheck", "Instances", "Listeners", "SecurityGroups"}
    assert set(doc["attributes"]) == {
        "CanonicalHostedZoneName", "CanonicalHostedZoneNameID", "DNSName",
        "SourceSecurityGroup.GroupName", "SourceSecurityGroup.OwnerAlias"}
    assert doc["properties"]["Instances"]["update_allowed"] is True
    assert doc["properties"]["Listeners"]["required"] is True
    db = DBInstance.schema_doc()
    assert set(db["attributes"]) == {"Endpoint.Address", "Endpoint.Port"}
    assert db["properties"]["Port"]["default"] == "3306"
    assert all(p["update_allowed"] for p in db["properties"].values())


def test_load_balancer_properties_are_typed_as_heats():
    props = validate(LoadBalancer, lb_properties(HealthCheck=HEALTH, Instances=["a", "b"]))
    assert props["Listeners"] == [{"LoadBalancerPort": 80, "InstancePort": 8080,
                                   "Protocol": "HTTP"}]
    assert props["HealthCheck"]["Interval"] == 10 and props["HealthCheck"]["Target"] == "HTTP:80/"


@pytest.mark.parametrize("props,message", [
    ({"Listeners": LISTENERS}, "Property error: resources.LB.properties: "
                               "Property AvailabilityZones not assigned"),
    ({"AvailabilityZones": ["nova"]}, "Property error: resources.LB.properties: "
                                      "Property Listeners not assigned"),
    (lb_properties(Listeners=[{**LISTENERS[0], "Protocol": "UDP"}]),
     "\"UDP\" is not an allowed value ['TCP', 'HTTP']"),
    (lb_properties(Listeners=[{"LoadBalancerPort": 80, "Protocol": "TCP"}]),
     "Property InstancePort not assigned"),
    (lb_properties(HealthCheck={**HEALTH, "Interval": "x"}), '"x" is not an integer'),
    (lb_properties(HealthCheck={k: v for k, v in HEALTH.items() if k != "Target"}),
     "Property Target not assigned"),
    (lb_properties(HealthCheck={**HEALTH, "Interval": "4"}),
     "{'Error': 'Interval must be larger than Timeout'}"),
    (lb_properties(Subnets=["s"]), "Property error: resources.LB.properties: "
                                   "Property Subnets not implemented yet"),
    (lb_properties(AppCookieStickinessPolicy="x"),
     "Property AppCookieStickinessPolicy not implemented yet"),
    (lb_properties(Listeners=[{**LISTENERS[0], "SSLCertificateId": "c"}]),
     "Property SSLCertificateId not implemented yet"),
    (lb_properties(Color="red"), "Property error: resources.LB.properties: "
                                 "Unknown Property Color"),
])
def test_load_balancer_refusals_are_heats(props, message):
    with pytest.raises(StackValidationFailed) as caught:
        validate(LoadBalancer, props)
    assert message in caught.value.message


@pytest.mark.parametrize("changed,replace", [
    ({"Instances"}, False), ({"SecurityGroups"}, False), ({"Instances", "SecurityGroups"}, False),
    ({"Listeners"}, True), ({"HealthCheck"}, True), ({"AvailabilityZones"}, True),
])
def test_load_balancer_update_or_replace(changed, replace):
    assert LoadBalancer.needs_replacement(changed) is replace


def test_haproxy_config_is_heats():
    props = validate(LoadBalancer, lb_properties(HealthCheck=HEALTH))
    assert haproxy_config(props, ["10.0.0.3", "0.0.0.0"]) == (
        "\nglobal\n    daemon\n    maxconn 256\n    stats socket /tmp/.haproxy-stats\n"
        "\ndefaults\n    mode http\n    timeout connect 5000ms\n    timeout client 50000ms\n"
        "    timeout server 50000ms\n"
        "\nfrontend http\n    bind *:80\n    default_backend servers\n"
        "\nbackend servers\n    balance roundrobin\n    option http-server-close\n"
        "    option forwardfor\n    option httpchk\n    timeout check 5s\n"
        "    server server1 10.0.0.3:8080 check inter 10s fall 5 rise 3\n"
        "    server server2 0.0.0.0:8080 check inter 10s fall 5 rise 3\n")
    plain = haproxy_config(validate(LoadBalancer, lb_properties()), ["10.0.0.3"])
    assert plain.endswith("    option httpchk\n\n    server server1 10.0.0.3:8080\n")


def test_an_instance_address_is_heats_server_to_ipaddress():
    server = {"addresses": {"alpha": [{"addr": "10.0.0.5"}], "beta": [{"addr": "10.1.0.7"}],
                            "zeta": []}}
    assert server_address(server) == "10.1.0.7"  # the last network by name with one
    assert server_address(None) is None and server_address({"addresses": {}}) is None


class FakeCloud:
    def __init__(self, servers):
        self.servers = servers

    def server_list(self, ids):
        return {i: self.servers[i] for i in ids if i in self.servers}


def load_balancer(props, *, parent=None, servers=None):
    lb = LoadBalancer(name="LB", properties=validate(LoadBalancer, props),
                      context=PluginContext(cloud=FakeCloud(servers or {}), stack_id="s",
                                            stack_name="st", project_id="p"))
    lb._parent_parameters = lambda: dict(parent or {})
    return lb


def test_the_child_template_has_the_haproxy_instance_and_its_wait_condition():
    servers = {"web1": {"addresses": {"private": [{"addr": "10.0.0.11"}]}}}
    lb = load_balancer(lb_properties(Instances=["web1", "gone"]), servers=servers,
                       parent={"KeyName": "mykey", "LbFlavor": "m1.tiny"})
    template = lb._template()
    assert set(template["Resources"]) == {"CfnLBUser", "CfnLBAccessKey", "LB_instance",
                                          "WaitHandle", "WaitCondition"}
    files = template["Resources"]["LB_instance"]["Metadata"][
        "AWS::CloudFormation::Init"]["config"]["files"]
    cfg = files["/etc/haproxy/haproxy.cfg"]["content"]
    assert "    server server1 10.0.0.11:8080\n    server server2 0.0.0.0:8080\n" in cfg
    assert "cfn-push-stats" not in json.dumps(template)  # no CloudWatch alarm (no Aodh)
    assert template["Resources"]["LB_instance"]["Properties"]["KeyName"] == {"Ref": "KeyName"}
    assert lb._parameters() == {"KeyName": "mykey", "LbFlavor": "m1.tiny"}
    assert template["Resources"]["WaitCondition"]["Properties"]["Timeout"] == {
        "Ref": "LBTimeout"}
    # heatweb's own validation of the child, as its create does
    definition = build_definition(template, environment={"parameters": lb._parameters()},
                                  stack_name="st-LB")
    assert definition.plugins["LB_instance"].type_name == "AWS::EC2::Instance"


def test_without_a_key_name_parameter_the_instance_has_no_key():
    lb = load_balancer(lb_properties(SecurityGroups=["web"]))
    template = lb._template()
    assert "KeyName" not in template["Parameters"]
    assert "KeyName" not in template["Resources"]["LB_instance"]["Properties"]
    assert lb._parameters() == {"SecurityGroups": ["web"]}
    files = template["Resources"]["LB_instance"]["Metadata"][
        "AWS::CloudFormation::Init"]["config"]["files"]
    assert files["/etc/haproxy/haproxy.cfg"]["content"] == ""  # no Instances: as Heat
    build_definition(template, environment={"parameters": lb._parameters()}, stack_name="x")


def test_load_balancer_reference_and_attributes(monkeypatch):
    lb = load_balancer(lb_properties())
    lb.physical_id = "child"
    monkeypatch.setattr(aws_lb.nested, "_service", type("S", (), {
        "nested_outputs": staticmethod(lambda child_id: ({"PublicIp": "172.24.4.9"}, {}))}))
    assert lb.get_reference_id() == "LB"
    attrs = lb.attributes()
    assert attrs == {"CanonicalHostedZoneName": "", "CanonicalHostedZoneNameID": "",
                     "DNSName": "172.24.4.9", "SourceSecurityGroup.GroupName": "",
                     "SourceSecurityGroup.OwnerAlias": ""}
    assert LoadBalancer.resolve_attribute(attrs, "DNSName", ()) == "172.24.4.9"


def test_nested_template_is_cloud_formation_with_heats_parameters():
    template = nested_template("cfg", with_key=False)
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"
    assert {k: v.get("Default") for k, v in template["Parameters"].items()} == {
        "LbImageId": "Fedora-Cloud-Base-20141203-21.x86_64", "LbFlavor": "m1.small",
        "LBTimeout": "600", "SecurityGroups": []}
    assert template["Outputs"]["PublicIp"]["Value"] == {"Fn::GetAtt": ["LB_instance",
                                                                        "PublicIp"]}


DB_PROPS = {"DBName": "wordpress", "Engine": "MySQL", "MasterUsername": "admin",
            "DBInstanceClass": "db.m1.small", "DBSecurityGroups": [],
            "AllocatedStorage": "5", "MasterUserPassword": "secret"}


def test_db_instance_properties_are_its_template_parameters():
    props = validate(DBInstance, DB_PROPS)
    assert props == {**DB_PROPS, "Port": "3306", "KeyName": ""}
    child = yaml.safe_load(DBInstance.template_body)
    assert set(child["Parameters"]) == set(DBInstance.properties_schema)
    assert set(child["Outputs"]) == set(DBInstance.attributes_schema)
    assert DBInstance.needs_replacement({"DBInstanceClass", "MasterUserPassword"}) is False


@pytest.mark.parametrize("props,message", [
    ({k: v for k, v in DB_PROPS.items() if k != "DBName"},
     "Property error: resources.LB.properties: Property DBName not assigned"),
    ({**DB_PROPS, "Engine": "PostgreSQL"},
     "Property error: resources.LB.properties.Engine: \"PostgreSQL\" is not an allowed "
     "value ['MySQL']"),
    ({**DB_PROPS, "Size": 5}, "Property error: resources.LB.properties: Unknown Property Size"),
])
def test_db_instance_refusals_are_heats(props, message):
    with pytest.raises(StackValidationFailed) as caught:
        validate(DBInstance, props)
    assert message in caught.value.message


def test_db_instance_child_stack_has_the_instance_and_its_endpoint():
    props = validate(DBInstance, DB_PROPS)
    definition = build_definition(DBInstance.template_body,
                                  environment={"parameters": dict(props)}, stack_name="db")
    assert {name: d.type for name, d in definition.resources.items()} == {
        "ServerSecurityGroup": "AWS::EC2::SecurityGroup",
        "DatabaseInstance": "AWS::EC2::Instance",
        "WaitHandle": "AWS::CloudFormation::WaitConditionHandle",
        "WaitCondition": "AWS::CloudFormation::WaitCondition"}
    instance = definition.template.resolve(definition.resources["DatabaseInstance"].properties,
                                           definition.params, None)
    assert instance["InstanceType"] == "m1.small"
    assert instance["ImageId"] == "F19-x86_64-cfntools"
    group = definition.template.resolve(definition.resources["ServerSecurityGroup"].properties,
                                        definition.params, None)
    assert group["SecurityGroupIngress"][2]["FromPort"] == "3306"


def test_a_parent_template_with_both_types_validates():
    parent = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"KeyName": {"Type": "String", "Default": "k"}},
        "Resources": {
            "Web": {"Type": "AWS::EC2::Instance",
                    "Properties": {"ImageId": "cirros", "InstanceType": "m1.small"}},
            "LB": {"Type": "AWS::ElasticLoadBalancing::LoadBalancer", "Properties": {
                "AvailabilityZones": {"Fn::GetAZs": ""}, "Instances": [{"Ref": "Web"}],
                "Listeners": LISTENERS}},
            "DB": {"Type": "AWS::RDS::DBInstance", "Properties": DB_PROPS}},
        "Outputs": {"URL": {"Value": {"Fn::GetAtt": ["LB", "DNSName"]}},
                    "DB": {"Value": {"Fn::GetAtt": ["DB", "Endpoint.Address"]}}}}
    definition = build_definition(parent, environment={}, stack_name="p")
    assert definition.plugins["LB"] is LoadBalancer and definition.plugins["DB"] is DBInstance
