"""A software deployment group on the real cloud: two Nova servers (fake virt driver)
configured by one SoftwareConfig through a SoftwareDeploymentGroup. The fake driver runs
no guest, so the in-instance agent (softwareconfig/agent/heatweb_agent.py) runs here
for each server, as it would inside it: it reads the server's metadata from heatweb,
runs the script and signals back; the group completes with each server's output.
"""
import time
import uuid

import pytest

from tests.live.test_software_components import AgentProcess
from tests.openstack.conftest import wait_stack

pytestmark = pytest.mark.openstack


def template(tag, greeting):
    server = {"image": "heatweb-tiny", "flavor": "m1.tiny",
              "user_data_format": "SOFTWARE_CONFIG",
              "networks": [{"network": {"get_resource": "net"}}]}
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.44.0.0/24"}},
        "a": {"type": "OS::Nova::Server", "depends_on": ["subnet"],
              "properties": {**server, "name": f"{tag}-a"}},
        "b": {"type": "OS::Nova::Server", "depends_on": ["subnet"],
              "properties": {**server, "name": f"{tag}-b"}},
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "inputs": [{"name": "greeting"}],
            "outputs": [{"name": "said"}],
            "config": '#!/bin/sh\nprintf "%s from %s" "$greeting" "$deploy_server_id" '
                      '> "$heat_outputs_path.said"\n'}},
        "deploy": {"type": "OS::Heat::SoftwareDeploymentGroup", "properties": {
            "config": {"get_resource": "config"},
            "servers": {"a": {"get_resource": "a"}, "b": {"get_resource": "b"}},
            "input_values": {"greeting": greeting}, "signal_transport": "HEAT_SIGNAL"}},
    }, "outputs": {"said": {"value": {"get_attr": ["deploy", "said"]}}}}


def test_a_deployment_group_configures_two_real_servers(member, cloud, tmp_path):
    heat, tag = member.heat, f"sdg{uuid.uuid4().hex[:6]}"
    info = {"endpoint": member.endpoint, "token": member.token}
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag, "hello"))[
        "stack"]["id"]
    agents = []
    try:
        servers = {}
        for _ in range(240):
            servers = {r.resource_name: r.physical_resource_id
                       for r in heat.resources.list(stack_id)
                       if r.resource_name in ("a", "b") and r.physical_resource_id}
            if len(servers) == 2:
                break
            assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
            time.sleep(0.5)
        agents = [AgentProcess(None, info, server_id, tmp_path / name).start()
                  for name, server_id in servers.items()]
        wait_stack(heat, stack_id, "CREATE_COMPLETE")
        said = {o["output_key"]: o["output_value"]
                for o in heat.stacks.get(stack_id).outputs}["said"]
        assert said == {name: f"hello from {server_id}" for name, server_id in servers.items()}
        for name, server_id in servers.items():
            assert cloud.compute.get_server(server_id).status == "ACTIVE"

        heat.stacks.update(stack_id, template=template(tag, "bonjour"))
        wait_stack(heat, stack_id, "UPDATE_COMPLETE")
        said = {o["output_key"]: o["output_value"]
                for o in heat.stacks.get(stack_id).outputs}["said"]
        assert said == {name: f"bonjour from {server_id}"
                        for name, server_id in servers.items()}
    finally:
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
        for agent in agents:
            agent.stop()
