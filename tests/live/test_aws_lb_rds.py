"""AWS::ElasticLoadBalancing::LoadBalancer and AWS::RDS::DBInstance through python-heatclient
against the live service, in the shape of openstack/heat-templates' WordPress_With_LB
(a load balancer over two instances) and WordPress_With_RDS (a database instance whose
address a web server's UserData uses). The simulated instances never run cfn-signal, so
the test plays it: it signals the wait condition handle of each child stack still
waiting, as scripts/public-corpus --create does."""
import time
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import wait_deleted
from tests.live.test_wait_condition import heat, tenant  # noqa: F401 (fixtures)

pytestmark = pytest.mark.live

LISTENERS = [{"LoadBalancerPort": "80", "InstancePort": "8080", "Protocol": "HTTP"}]
HEALTH = {"HealthyThreshold": "3", "Interval": "10", "Target": "HTTP:8080/",
          "Timeout": "5", "UnhealthyThreshold": "5"}


def lb_template(instances, *, groups=None):
    balancer = {"AvailabilityZones": {"Fn::GetAZs": ""},
                "Instances": [{"Ref": name} for name in instances],
                "Listeners": LISTENERS, "HealthCheck": HEALTH}
    if groups:
        balancer["SecurityGroups"] = [{"Ref": group} for group in groups]
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"KeyName": {"Type": "String", "Default": "demo"},
                       "LbFlavor": {"Type": "String", "Default": "m1.tiny"}},
        "Resources": {
            **{name: {"Type": "AWS::EC2::Instance",
                      "Properties": {"ImageId": "cirros", "InstanceType": "m1.small",
                                     "KeyName": {"Ref": "KeyName"}}}
               for name in ("WikiServerOne", "WikiServerTwo")},
            "WebGroup": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
                "GroupDescription": "http in", "SecurityGroupIngress": [
                    {"IpProtocol": "tcp", "FromPort": "80", "ToPort": "80",
                     "CidrIp": "0.0.0.0/0"}]}},
            "LoadBalancer": {"Type": "AWS::ElasticLoadBalancing::LoadBalancer",
                             "Properties": balancer}},
        "Outputs": {
            "WebsiteURL": {"Value": {"Fn::Join": ["", [
                "http://", {"Fn::GetAtt": ["LoadBalancer", "DNSName"]}, "/wordpress"]]}},
            "Zone": {"Value": {"Fn::GetAtt": ["LoadBalancer", "CanonicalHostedZoneName"]}},
            "Ref": {"Value": {"Ref": "LoadBalancer"}}},
    }


DB_PROPERTIES = {"DBName": "wordpress", "Engine": "MySQL", "MasterUsername": "admin",
                 "DBInstanceClass": "db.m1.small", "DBSecurityGroups": [],
                 "AllocatedStorage": "5", "MasterUserPassword": "admin"}


def rds_template(engine="MySQL"):
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "DatabaseServer": {"Type": "AWS::RDS::DBInstance",
                               "Properties": {**DB_PROPERTIES, "Engine": engine}},
            "WebServer": {"Type": "AWS::EC2::Instance", "Properties": {
                "ImageId": "cirros", "InstanceType": "m1.small",
                "UserData": {"Fn::Base64": {"Fn::Join": ["", [
                    "#!/bin/bash -v\nsed -i s/localhost/",
                    {"Fn::GetAtt": ["DatabaseServer", "Endpoint.Address"]},
                    "/ /var/www/wp-config.php\n"]]}}}}},
        "Outputs": {
            "Address": {"Value": {"Fn::GetAtt": ["DatabaseServer", "Endpoint.Address"]}},
            "Port": {"Value": {"Fn::GetAtt": ["DatabaseServer", "Endpoint.Port"]}}},
    }


def output(hc, stack_id, key):
    return hc.stacks.output_show(stack_id, key)["output"]["output_value"]


def settle(hc, stack_id, wanted, *, timeout=120):
    """The stack once in ``wanted``, signalling (as cfn-signal would) each child stack's
    wait condition handle while that child's wait condition waits."""
    deadline = time.monotonic() + timeout
    signalled = set()
    while time.monotonic() < deadline:
        stack = hc.stacks.get(stack_id)
        if stack.stack_status == wanted:
            return stack
        assert not stack.stack_status.endswith("FAILED"), stack.stack_status_reason
        for child in {r.physical_resource_id for r in hc.resources.list(stack_id)
                      if r.resource_type.startswith(("AWS::Elastic", "AWS::RDS"))
                      and r.physical_resource_id}:
            states = {r.resource_name: r.resource_status for r in hc.resources.list(child)}
            if states.get("WaitCondition") == "CREATE_IN_PROGRESS" and child not in signalled:
                signalled.add(child)
                hc.resources.signal(child, "WaitHandle", data={
                    "Status": "SUCCESS", "Reason": "configured", "Data": "up",
                    "UniqueId": uuid.uuid4().hex[:8]})
        time.sleep(0.3)
    raise AssertionError(f"stack {stack_id} is {hc.stacks.get(stack_id).stack_status}")


def haproxy_cfg(hc, child_id):
    """The haproxy config as cfn-init on the instance reads it (the instance's resource
    metadata), which is the child template's, resolved."""
    def cfg(metadata):
        files = metadata["AWS::CloudFormation::Init"]["config"]["files"]
        return files["/etc/haproxy/haproxy.cfg"]["content"]

    in_template = cfg(hc.stacks.template(child_id)["Resources"]["LB_instance"]["Metadata"])
    metadata = hc.resources.metadata(child_id, "LB_instance")
    assert cfg(metadata) == in_template
    # the credentials file's Fn::Join is resolved: the access key's id and secret
    assert metadata["AWS::CloudFormation::Init"]["config"]["files"][
        "/etc/cfn/cfn-credentials"]["content"].startswith("AWSAccessKeyId=")
    return in_template


def test_load_balancer_over_two_instances_created_updated_deleted(heat):  # noqa: F811
    hc = heat
    name = f"elb-{uuid.uuid4().hex[:8]}"
    stack_id = hc.stacks.create(stack_name=name, template=lb_template(
        ["WikiServerOne", "WikiServerTwo"]))["stack"]["id"]
    settle(hc, stack_id, "CREATE_COMPLETE")

    lb = hc.resources.get(stack_id, "LoadBalancer")
    assert lb.resource_type == "AWS::ElasticLoadBalancing::LoadBalancer"
    child = lb.physical_resource_id
    assert {r.resource_name: r.resource_type for r in hc.resources.list(child)} == {
        "CfnLBUser": "AWS::IAM::User", "CfnLBAccessKey": "AWS::IAM::AccessKey",
        "LB_instance": "AWS::EC2::Instance",
        "WaitHandle": "AWS::CloudFormation::WaitConditionHandle",
        "WaitCondition": "AWS::CloudFormation::WaitCondition"}
    lb_ip = hc.resources.get(child, "LB_instance").attributes["PublicIp"]
    assert lb_ip and output(hc, stack_id, "WebsiteURL") == f"http://{lb_ip}/wordpress"
    assert output(hc, stack_id, "Ref") == "LoadBalancer"
    assert output(hc, stack_id, "Zone") == ""
    assert hc.resources.get(stack_id, "LoadBalancer").attributes["DNSName"] == lb_ip
    # the parent's KeyName and LbFlavor are the child's parameters, as in Heat
    params = hc.stacks.get(child).parameters
    assert params["KeyName"] == "demo" and params["LbFlavor"] == "m1.tiny"

    ips = [hc.resources.get(stack_id, n).attributes["PrivateIp"]
           for n in ("WikiServerOne", "WikiServerTwo")]
    cfg = haproxy_cfg(hc, child)
    assert "frontend http\n    bind *:80\n" in cfg and "    timeout check 5s\n" in cfg
    assert (f"    server server1 {ips[0]}:8080 check inter 10s fall 5 rise 3\n"
            f"    server server2 {ips[1]}:8080 check inter 10s fall 5 rise 3\n") in cfg
    instance_id = hc.resources.get(child, "LB_instance").physical_resource_id

    # Instances change in place: the new configuration is the instance's metadata.
    hc.stacks.update(stack_id, template=lb_template(["WikiServerTwo"]))
    settle(hc, stack_id, "UPDATE_COMPLETE")
    assert hc.resources.get(stack_id, "LoadBalancer").physical_resource_id == child
    assert hc.resources.get(child, "LB_instance").physical_resource_id == instance_id
    cfg = haproxy_cfg(hc, child)
    assert f"    server server1 {ips[1]}:8080 check" in cfg and ips[0] not in cfg

    # SecurityGroups change in place too: the child's instance gets them (a new instance,
    # as an AWS::EC2::Instance's SecurityGroups change replaces it, in Heat too).
    hc.stacks.update(stack_id, template=lb_template(["WikiServerTwo"], groups=["WebGroup"]))
    settle(hc, stack_id, "UPDATE_COMPLETE")
    assert hc.resources.get(stack_id, "LoadBalancer").physical_resource_id == child
    assert hc.stacks.get(child).parameters["SecurityGroups"] == f"{name}-WebGroup"
    assert hc.resources.get(child, "LB_instance").physical_resource_id != instance_id
    assert f"    server server1 {ips[1]}:8080 check" in haproxy_cfg(hc, child)

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    wait_deleted(hc, child)  # the child stack went with it


def test_db_instance_created_with_its_endpoint_and_deleted(heat):  # noqa: F811
    hc = heat
    stack_id = hc.stacks.create(stack_name=f"rds-{uuid.uuid4().hex[:8]}",
                                template=rds_template())["stack"]["id"]
    settle(hc, stack_id, "CREATE_COMPLETE")
    db = hc.resources.get(stack_id, "DatabaseServer")
    assert db.resource_type == "AWS::RDS::DBInstance"
    child = db.physical_resource_id
    instance = hc.resources.get(child, "DatabaseInstance")
    address = instance.attributes["PublicIp"]
    assert address and output(hc, stack_id, "Address") == address
    assert output(hc, stack_id, "Port") == "3306"
    assert hc.stacks.get(child).parameters["DBName"] == "wordpress"
    group = hc.resources.get(child, "ServerSecurityGroup")
    assert group.resource_status == "CREATE_COMPLETE"
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_bad_input_is_refused_with_heats_words(heat):  # noqa: F811
    hc = heat
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.validate(template=rds_template(engine="PostgreSQL"))
    assert "Property error: resources.DatabaseServer.properties.Engine: \"PostgreSQL\" is " \
           "not an allowed value ['MySQL']" in str(refused.value)
    template = lb_template(["WikiServerOne"])
    template["Resources"]["LoadBalancer"]["Properties"]["HealthCheck"] = {
        **HEALTH, "Interval": "2"}
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.validate(template=template)
    assert "Interval must be larger than Timeout" in str(refused.value)
    shown = hc.resource_types.get("AWS::ElasticLoadBalancing::LoadBalancer")
    assert "DNSName" in shown["attributes"] and "Listeners" in shown["properties"]
    assert "AWS::RDS::DBInstance" in [t.resource_type for t in hc.resource_types.list()]
