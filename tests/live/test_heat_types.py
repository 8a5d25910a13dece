"""Heat's own resource types through python-heatclient against the live service, with
templates written as Heat's documentation writes them: CloudConfig and MultipartMime as a
server's user_data, StructuredDeployment, deployment groups signalled by each member,
ResourceChain, Delay, UpdateWaitConditionHandle and the AutoScalingGroup's attributes."""
import email
import time

import pytest
import requests
import yaml

from tests.live.test_stack_lifecycle import create, hc, one_second_minutes, \
    wait_stack  # noqa: F401

pytestmark = pytest.mark.live

SERVER = {"type": "OS::Nova::Server",
          "properties": {"image": "cirros", "flavor": "m1.tiny",
                         "user_data_format": "SOFTWARE_CONFIG"}}


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


CLOUD_INIT = """
heat_template_version: 2016-10-14
description: A server booted with cloud-config and a script, as Heat's guide shows.
resources:
  boot_config:
    type: OS::Heat::CloudConfig
    properties:
      cloud_config:
        package_update: true
        packages: [nginx]
        write_files:
          - path: /etc/motd
            content: {get_param: "OS::stack_name"}
  boot_script:
    type: OS::Heat::SoftwareConfig
    properties:
      group: ungrouped
      config: |
        #!/bin/sh
        echo booted
  server_init:
    type: OS::Heat::MultipartMime
    properties:
      parts:
      - config: {get_resource: boot_config}
      - config: {get_resource: boot_script}
        subtype: x-shellscript
      - config: "#!/bin/sh\\necho inline"
        filename: inline.sh
  server:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: m1.tiny
      user_data_format: RAW
      user_data: {get_resource: server_init}
outputs:
  cloud_config: {value: {get_attr: [boot_config, config]}}
  message: {value: {get_attr: [server_init, config]}}
"""


def test_cloud_config_and_multipart_mime_as_user_data(hc):
    name, sid = create(hc, CLOUD_INIT)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    cloud_config = outputs["cloud_config"]
    assert cloud_config.startswith("#cloud-config\n")
    body = yaml.safe_load(cloud_config)
    assert body["packages"] == ["nginx"] and body["write_files"][0]["content"] == name
    parts = email.message_from_string(outputs["message"]).get_payload()
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/x-shellscript",
                                                     "text/inline"]
    assert parts[0].get_payload() == cloud_config
    assert parts[1].get_payload() == "#!/bin/sh\necho booted\n"
    assert parts[2].get_filename() == "inline.sh"
    # Both are software configs of the configs API.
    for resource in ("boot_config", "server_init"):
        config_id = hc.resources.get(sid, resource).physical_resource_id
        assert hc.software_configs.get(config_id).group == "Heat::Ungrouped"
    assert hc.software_configs.get(
        hc.resources.get(sid, "server_init").physical_resource_id).config == outputs["message"]
    schema = hc.resource_types.get("OS::Heat::MultipartMime")
    assert schema["properties"]["parts"]["default"] == []
    assert schema["properties"]["group"]["default"] == "Heat::Ungrouped"


STRUCTURED = """
heat_template_version: 2016-10-14
parameters:
  port: {type: number, default: 8080}
resources:
  config:
    type: OS::Heat::StructuredConfig
    properties:
      group: os-apply-config
      config:
        nginx:
          port: {get_input: port}
          server: {get_input: deploy_server_id}
          literal: {get_param: port}
  server: %(server)s
  deployment:
    type: OS::Heat::StructuredDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values:
        port: {get_param: port}
outputs:
  raw: {value: {get_attr: [config, config]}}
  server: {value: {get_resource: server}}
"""


def test_structured_deployment_substitutes_get_input(hc):
    _, sid = create(hc, STRUCTURED % {"server": SERVER})
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    # The config itself keeps {get_input: ...}: it is data to Heat, not a function.
    assert outputs["raw"] == {"nginx": {"port": {"get_input": "port"},
                                        "server": {"get_input": "deploy_server_id"},
                                        "literal": 8080}}
    metadata = hc.software_deployments.metadata(outputs["server"])
    assert len(metadata) == 1
    assert metadata[0]["group"] == "os-apply-config"
    assert metadata[0]["config"] == {"nginx": {"port": 8080, "server": outputs["server"],
                                               "literal": 8080}}
    hc.stacks.update(sid, template=STRUCTURED % {"server": SERVER}, parameters={"port": 81})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    config = hc.software_deployments.metadata(outputs["server"])[0]["config"]
    assert config["nginx"]["port"] == 81 and config["nginx"]["literal"] == 81


def group_template(group_type, servers):
    return {
        "heat_template_version": "2016-10-14",
        "resources": {
            **{name: SERVER for name in servers},
            "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
                "config": "#!/bin/sh\necho hi", "outputs": [{"name": "result"}]}},
            "deployments": {"type": group_type, "properties": {
                "config": {"get_resource": "config"}, "signal_transport": "HEAT_SIGNAL",
                "servers": {name: {"get_resource": name} for name in servers}}}},
        "outputs": {"stdouts": {"value": {"get_attr": ["deployments", "deploy_stdouts"]}},
                    "codes": {"value": {"get_attr": ["deployments", "deploy_status_codes"]}},
                    "results": {"value": {"get_attr": ["deployments", "result"]}}}}


@pytest.mark.parametrize("group_type", ["OS::Heat::SoftwareDeploymentGroup",
                                        "OS::Heat::SoftwareDeployments"])
def test_a_deployment_group_deploys_to_each_server(hc, group_type):
    _, sid = create(hc, group_template(group_type, ["alpha", "beta"]))
    wait_stack(hc, sid, "CREATE_IN_PROGRESS")
    group = None
    for _ in range(100):
        group = hc.resources.get(sid, "deployments")
        if group.physical_resource_id:
            break
        time.sleep(0.1)
    child = group.physical_resource_id
    members = {}
    for _ in range(200):
        members = {r.resource_name: r for r in hc.resources.list(child)}
        if len(members) == 2 and all(r.physical_resource_id for r in members.values()):
            break
        time.sleep(0.1)
    assert sorted(members) == ["alpha", "beta"]
    servers = {n: hc.resources.get(sid, n).physical_resource_id for n in ("alpha", "beta")}
    for name, member in members.items():
        deployment = hc.software_deployments.get(member.physical_resource_id)
        assert deployment.server_id == servers[name]
        # The server's metadata carries its deployments' configs, as Heat keeps them.
        deployed = hc.resources.metadata(sid, name)["deployments"]
        assert [d["id"] for d in deployed] == [deployment.config_id]
        assert {i["name"]: i["value"] for i in deployed[0]["inputs"]}["deploy_server_id"] \
            == servers[name]
        hc.resources.signal(child, name, data={"deploy_stdout": f"out-{name}",
                                               "deploy_status_code": 0,
                                               "result": f"r-{name}"})
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["stdouts"] == {"alpha": "out-alpha", "beta": "out-beta"}
    assert outputs["codes"] == {"alpha": 0, "beta": 0}
    assert outputs["results"] == {"alpha": "r-alpha", "beta": "r-beta"}

    # One server fewer: its deployment goes, the other's stays.
    hc.stacks.update(sid, template=group_template(group_type, ["alpha"]))
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert [r.resource_name for r in hc.resources.list(child)] == ["alpha"]
    assert outputs["stdouts"] == {"alpha": "out-alpha"}


def test_a_server_configured_by_deployments_has_them_in_its_metadata_from_the_start(hc):
    _, sid = create(hc, {"heat_template_version": "2016-10-14",
                         "resources": {"alone": SERVER}})
    wait_stack(hc, sid, "CREATE_COMPLETE")
    assert hc.resources.metadata(sid, "alone") == {"deployments": []}


def test_deployments_not_signalled_when_the_stack_times_out_are_failed(one_second_minutes):
    """Heat's cancel of a waiting deployment: the agent and the API see it FAILED (whether
    the stack's timeout or the deployment's own wait, as long, ends it first)."""
    hc = one_second_minutes.heat()
    _, sid = create(hc, group_template("OS::Heat::SoftwareDeployments", ["alpha"]),
                    timeout_mins=3)
    reason = wait_stack(hc, sid, "CREATE_FAILED", timeout=60).stack_status_reason
    assert reason == "Timed out" or "no signal from the agent" in reason
    server = hc.resources.get(sid, "alpha").physical_resource_id
    listed = []
    for _ in range(100):
        listed = hc.software_deployments.list(server_id=server)
        if listed and all(d.status == "FAILED" for d in listed):
            break
        time.sleep(0.1)
    assert [(d.status, d.status_reason) for d in listed] == \
        [("FAILED", "Deployment cancelled.")]


def test_structured_deployment_group_with_no_signal(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "a": SERVER, "b": SERVER,
        "config": {"type": "OS::Heat::StructuredConfig", "properties": {
            "config": {"who": {"get_input": "deploy_server_id"}, "v": {"get_input": "v"}}}},
        "deployments": {"type": "OS::Heat::StructuredDeploymentGroup", "properties": {
            "config": {"get_resource": "config"}, "signal_transport": "NO_SIGNAL",
            "input_values": {"v": "x"},
            "servers": {"a": {"get_resource": "a"}, "b": {"get_resource": "b"}}}}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    for name in ("a", "b"):
        server = hc.resources.get(sid, name).physical_resource_id
        (config,) = hc.software_deployments.metadata(server)
        assert config["config"] == {"who": server, "v": "x"}


CHAIN = """
heat_template_version: 2016-10-14
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Heat::RandomString, OS::Heat::RandomString, OS::Heat::RandomString]
      concurrent: %s
      resource_properties:
        length: 12
outputs:
  refs: {value: {get_attr: [chain, refs]}}
  values: {value: {get_attr: [chain, value]}}
  by_member: {value: {get_attr: [chain, attributes, value]}}
  second: {value: {get_attr: [chain, resource.1.value]}}
"""


@pytest.mark.parametrize("concurrent", [False, True])
def test_resource_chain(hc, concurrent):
    _, sid = create(hc, CHAIN % str(concurrent).lower())
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    child = hc.resources.get(sid, "chain").physical_resource_id
    members = {r.resource_name: r for r in hc.resources.list(child)}
    assert sorted(members) == ["0", "1", "2"]
    assert outputs["refs"] == [members[n].physical_resource_id for n in ("0", "1", "2")]
    assert len(outputs["values"]) == 3 and all(len(v) == 12 for v in outputs["values"])
    assert outputs["by_member"] == dict(zip(("0", "1", "2"), outputs["values"]))
    assert outputs["second"] == outputs["values"][1]
    required_by = {n: hc.resources.get(child, n).required_by for n in members}
    if concurrent:
        assert required_by == {"0": [], "1": [], "2": []}
    else:
        assert required_by == {"0": ["1"], "1": ["2"], "2": []}


def test_delay_between_resources(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "first": {"type": "OS::Heat::None"},
        "pause": {"type": "OS::Heat::Delay", "depends_on": "first",
                  "properties": {"min_wait": 1, "max_jitter": 1, "jitter_multiplier": 0.5,
                                 "actions": ["CREATE", "DELETE"]}},
        "after": {"type": "OS::Heat::None", "depends_on": "pause"}}}
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    assert hc.resources.get(sid, "pause").required_by == ["after"]
    schema = hc.resource_types.get("OS::Heat::Delay")
    assert schema["properties"]["actions"]["default"] == ["CREATE"]
    assert schema["properties"]["min_wait"]["update_allowed"] is True


UPDATE_HANDLE = """
heat_template_version: 2016-10-14
parameters:
  version: {type: string, default: "1"}
resources:
  handle:
    type: OS::Heat::UpdateWaitConditionHandle
  config:
    type: OS::Heat::Value
    properties:
      value: {get_param: version}
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      timeout: 600
outputs:
  endpoint: {value: {get_attr: [handle, endpoint]}}
  ref: {value: {get_resource: handle}}
"""


def signal_until(hc, sid, state, endpoint, body):
    for _ in range(100):
        requests.post(endpoint, json=body, timeout=10).raise_for_status()
        stack = hc.stacks.get(sid)
        if stack.stack_status == state:
            return stack
        if stack.stack_status.endswith("FAILED"):
            raise AssertionError(stack.stack_status_reason)
        try:
            return wait_stack(hc, sid, state, timeout=3)
        except AssertionError:
            continue
    raise AssertionError(f"never reached {state}")


def test_update_wait_condition_handle_is_new_after_each_update(hc):
    _, sid = create(hc, UPDATE_HANDLE)
    wait_stack(hc, sid, "CREATE_IN_PROGRESS")
    endpoint = None
    for _ in range(200):
        endpoint = hc.resources.get(sid, "handle").attributes.get("endpoint")
        if endpoint:
            break
        time.sleep(0.1)
    # cfn-signal's format (as a CloudFormation handle takes it).
    stack = signal_until(hc, sid, "CREATE_COMPLETE", endpoint,
                         {"Status": "SUCCESS", "Reason": "booted", "UniqueId": "1"})
    first = outputs_of(stack)["endpoint"]
    # its reference is that signed URL, as Heat's (a CloudFormation handle there)
    assert first == endpoint == outputs_of(stack)["ref"]
    old_handle = hc.resources.get(sid, "handle").physical_resource_id

    hc.stacks.update(sid, template=UPDATE_HANDLE, parameters={"version": "2"})
    wait_stack(hc, sid, "UPDATE_IN_PROGRESS")
    new_endpoint = None
    for _ in range(200):
        handle = hc.resources.get(sid, "handle")
        if handle.physical_resource_id and handle.physical_resource_id != old_handle:
            new_endpoint = handle.attributes.get("endpoint")
            if new_endpoint:
                break
        time.sleep(0.1)
    assert new_endpoint and new_endpoint != first
    stack = signal_until(hc, sid, "UPDATE_COMPLETE", new_endpoint, {"status": "SUCCESS"})
    assert outputs_of(stack)["endpoint"] == new_endpoint

    # An update that changes nothing replaces the handle too, as in Heat.
    replaced = hc.resources.get(sid, "handle").physical_resource_id
    hc.stacks.update(sid, template=UPDATE_HANDLE, parameters={"version": "2"})
    wait_stack(hc, sid, "UPDATE_IN_PROGRESS")
    for _ in range(200):
        handle = hc.resources.get(sid, "handle")
        if handle.physical_resource_id not in (None, "", replaced) and \
                handle.attributes.get("endpoint"):
            break
        time.sleep(0.1)
    signal_until(hc, sid, "UPDATE_COMPLETE", handle.attributes["endpoint"],
                 {"status": "SUCCESS"})


ASG = """
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 4
      desired_capacity: 3
      resource:
        type: OS::Nova::Server
        properties: {image: cirros, flavor: m1.tiny}
outputs:
  size: {value: {get_attr: [group, current_size]}}
  refs: {value: {get_attr: [group, refs]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
  names: {value: {get_attr: [group, outputs, name]}}
  addresses: {value: {get_attr: [group, outputs_list, first_address]}}
"""


def test_autoscaling_group_attributes(hc):
    _, sid = create(hc, ASG)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    child = hc.resources.get(sid, "group").physical_resource_id
    members = {r.resource_name: r.physical_resource_id for r in hc.resources.list(child)}
    assert outputs["size"] == 3
    assert outputs["refs_map"] == members
    assert sorted(outputs["refs"]) == sorted(members.values())
    assert set(outputs["names"]) == set(members)
    assert all(outputs["names"].values())
    assert len(outputs["addresses"]) == 3 and all(outputs["addresses"])
    ordered = [outputs["refs_map"][n] for n in sorted(members, key=lambda n: int(n[1:]))]
    assert outputs["refs"] == ordered


INSTANCE_GROUP = """
heat_template_version: 2013-05-23
description: Servers of an InstanceGroup, from a launch configuration.
parameters:
  size: {type: number, default: 2}
  flavor: {type: string, default: m1.tiny}
resources:
  launch_config:
    type: AWS::AutoScaling::LaunchConfiguration
    properties:
      ImageId: cirros
      InstanceType: {get_param: flavor}
      UserData: "#!/bin/sh\\necho hello"
  servers:
    type: OS::Heat::InstanceGroup
    properties:
      AvailabilityZones: []
      LaunchConfigurationName: {get_resource: launch_config}
      Size: {get_param: size}
      Tags: [{Key: role, Value: web}]
outputs:
  addresses: {value: {get_attr: [servers, InstanceList]}}
"""


def test_instance_group_from_a_launch_configuration(hc):
    _, sid = create(hc, INSTANCE_GROUP)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    child = hc.resources.get(sid, "servers").physical_resource_id
    members = hc.resources.list(child)
    assert sorted(r.resource_name for r in members) == ["0", "1"]
    assert {r.resource_type for r in members} == {"OS::Nova::Server"}
    addresses = outputs["addresses"].split(",")
    assert len(addresses) == 2 and all(addresses)
    server = hc.resources.get(child, "0")
    assert server.attributes["show"]["metadata"] == {"role": "web"}

    hc.stacks.update(sid, template=INSTANCE_GROUP, parameters={"size": 3})
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert len(outputs["addresses"].split(",")) == 3
    kept = {r.resource_name: r.physical_resource_id for r in hc.resources.list(child)}
    assert kept["0"] == server.physical_resource_id
