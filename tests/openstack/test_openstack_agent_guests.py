"""Software deployments applied by heatweb's own agent inside real guests.

A server of the image ``heatweb-agent-guest`` boots (Nova's guest driver,
docs/guests.md) a QEMU guest with python3 and ``softwareconfig/agent`` of this
repository; its init starts the agent with the settings the server's JSON
``user_data`` gives (``{"heatweb_agent": {"endpoint", "token", "interval"}}``)
and the server id of its config drive. Nothing on the host runs an agent here:
every deployment below completes only because the guest polled heatweb's
metadata, ran the config and signalled back through QEMU's 127.0.0.1 forwards.
The configs also POST to a listener of the test (a host port forwarded into the
guests), so the test sees what ran in the guest and when.
"""
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openstack
import pytest
from heatclient import exc as heat_exc

from tests.openstack.conftest import wait_stack
from tests.openstack.keystone_support import allow_guest_port
from tests.openstack.test_openstack_guests import qemu_guests

pytestmark = pytest.mark.openstack

AGENT_IMAGE = "heatweb-agent-guest"
# Guests boot under TCG, two at a time, on a machine other test runs share.
TIMEOUT = 900
POLL = 2  # the agent's interval in the guests, seconds


class Listener:
    """An HTTP listener on 127.0.0.1 the guests can reach: records each POST's body."""

    def __init__(self):
        bodies = self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                bodies.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        allow_guest_port(self.port)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


def tell(listener, what):
    """A config line that POSTs ``what`` (shell words expanded in the guest) to the test."""
    return f'curl -s -X POST --data "{what}" http://127.0.0.1:{listener.port}/\n'


def agent_server(name, member, **extra):
    """An OS::Nova::Server of the agent image, its agent pointed at heatweb."""
    settings = {"heatweb_agent": {"endpoint": member.endpoint, "token": member.token,
                                  "interval": POLL}}
    return {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
        "image": AGENT_IMAGE, "flavor": "m1.tiny", "name": name,
        "networks": [{"network": {"get_resource": "net"}}],
        "user_data_format": "SOFTWARE_CONFIG", "user_data": json.dumps(settings),
        **extra}}


def network(name, cidr):
    return {"net": {"type": "OS::Neutron::Net", "properties": {"name": f"{name}-net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "network": {"get_resource": "net"}, "cidr": cidr}}}


def component_template(name, member, listener):
    def config(action, code=0):
        return ("#!/bin/sh\n"
                f'echo "{action} $greeting on $(hostname)"\n'
                f'echo "{action.lower()} says hi on stderr" >&2\n'
                f'printf "{action.lower()}d:%s" "$greeting" > "$heat_outputs_path.state"\n'
                + tell(listener, f"{action} $greeting $(hostname)") + f"exit {code}\n")

    return {"heat_template_version": "2016-10-14",
            "parameters": {"greeting": {"type": "string", "default": "hello"}},
            "resources": {
                **network(name, "10.48.0.0/24"),
                "server": agent_server(f"{name}-server", member),
                "app": {"type": "OS::Heat::SoftwareComponent", "properties": {
                    "configs": [
                        {"actions": ["CREATE"], "tool": "script", "config": config("CREATE")},
                        {"actions": ["UPDATE"], "tool": "script", "config": config("UPDATE")},
                        {"actions": ["SUSPEND"], "tool": "script",
                         "config": config("SUSPEND")},
                        {"actions": ["RESUME"], "tool": "script", "config": config("RESUME")},
                        {"actions": ["DELETE"], "tool": "script",
                         "config": config("DELETE")}],
                    "inputs": [{"name": "greeting"}], "outputs": [{"name": "state"}]}},
                "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
                    "config": {"get_resource": "app"}, "server": {"get_resource": "server"},
                    "signal_transport": "HEAT_SIGNAL",
                    "input_values": {"greeting": {"get_param": "greeting"}}}}},
            "outputs": {"state": {"value": {"get_attr": ["deployment", "state"]}}}}


def test_a_component_runs_each_actions_config_in_a_real_guest(member, listener):
    heat, name = member.heat, f"ag{uuid.uuid4().hex[:6]}"
    nova = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    stack_id = heat.stacks.create(stack_name=name, timeout_mins=TIMEOUT // 60,
                                  template=component_template(name, member, listener))[
        "stack"]["id"]
    started = time.monotonic()
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=TIMEOUT)
    print(f"agent guest: CREATE_COMPLETE {time.monotonic() - started:.0f} s after the create")
    server_id = heat.resources.get(stack_id, "server").physical_resource_id
    assert set(qemu_guests({server_id})) == {server_id}  # a real QEMU, no agent on the host
    host = f"{name}-server"

    def output_values():
        deployment_id = heat.resources.get(stack_id, "deployment").physical_resource_id
        return heat.software_deployments.get(deployment_id).output_values

    assert output_values() == {"state": "created:hello",
                               "deploy_stdout": f"CREATE hello on {host}\n",
                               "deploy_stderr": "create says hi on stderr\n",
                               "deploy_status_code": 0}
    assert listener.bodies == [f"CREATE hello {host}"]

    heat.stacks.update(stack_id, existing=True, parameters={"greeting": "bonjour"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE", timeout=TIMEOUT)
    assert output_values() == {"state": "updated:bonjour",
                               "deploy_stdout": f"UPDATE bonjour on {host}\n",
                               "deploy_stderr": "update says hi on stderr\n",
                               "deploy_status_code": 0}
    assert {o["output_key"]: o["output_value"]
            for o in heat.stacks.get(stack_id).outputs}["state"] == "updated:bonjour"
    console = nova.compute.get_server_console_output(server_id)["output"]
    assert "CREATE): running hook" in console, console[-3000:]
    assert "UPDATE): running hook" in console, console[-3000:]

    # Suspend: the SUSPEND config runs in the guest, then Nova suspends the server (its
    # QEMU stopped); resume: the server runs again, then its agent runs the RESUME config.
    heat.actions.suspend(stack_id)
    wait_stack(heat, stack_id, "SUSPEND_COMPLETE", timeout=TIMEOUT)
    assert nova.compute.get_server(server_id).status == "SUSPENDED"
    assert output_values()["deploy_stdout"] == f"SUSPEND bonjour on {host}\n"
    assert listener.bodies[-1] == f"SUSPEND bonjour {host}"
    heat.actions.resume(stack_id)
    wait_stack(heat, stack_id, "RESUME_COMPLETE", timeout=TIMEOUT)
    assert nova.compute.get_server(server_id).status == "ACTIVE"
    assert output_values() == {"state": "resumed:bonjour",
                               "deploy_stdout": f"RESUME bonjour on {host}\n",
                               "deploy_stderr": "resume says hi on stderr\n",
                               "deploy_status_code": 0}

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE", timeout=TIMEOUT)
    # Each action's config ran in the guest, the DELETE one before the server went.
    assert listener.bodies == [f"CREATE hello {host}", f"UPDATE bonjour {host}",
                               f"SUSPEND bonjour {host}", f"RESUME bonjour {host}",
                               f"DELETE bonjour {host}"]
    # in the order they happened (the list's; event_time has whole seconds)
    events = [(e.resource_name, e.resource_status) for e in heat.events.list(stack_id)]
    assert events.index(("deployment", "DELETE_COMPLETE")) < \
        events.index(("server", "DELETE_IN_PROGRESS"))
    assert qemu_guests({server_id}) == {}


def lock_template(name, member, listener):
    return {"heat_template_version": "2016-10-14", "resources": {
        **network(name, "10.49.0.0/24"),
        "server": agent_server(f"{name}-server", member),
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script",
            "config": "#!/bin/sh\necho configured\n" + tell(listener, "first $(hostname)")}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
            "signal_transport": "HEAT_SIGNAL"}}}}


def test_a_guest_of_a_stack_locked_at_level_all_gets_no_new_deployment(member, listener):
    heat, name = member.heat, f"al{uuid.uuid4().hex[:6]}"
    nova = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    stack_id = heat.stacks.create(stack_name=name, timeout_mins=TIMEOUT // 60,
                                  template=lock_template(name, member, listener))["stack"]["id"]
    try:
        wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=TIMEOUT)
        server_id = heat.resources.get(stack_id, "server").physical_resource_id
        assert listener.bodies == [f"first {name}-server"]  # its agent runs

        member.action(name, stack_id, {"lock": {"level": "all"}, "reason": "maintenance"})
        wait_stack(heat, stack_id, "LOCK_COMPLETE", timeout=240)
        before = heat.software_deployments.metadata(server_id)
        config = heat.software_configs.create(
            name="intruder", group="script",
            config="#!/bin/sh\n" + tell(listener, "intruder $(hostname)"))
        with pytest.raises(heat_exc.HTTPConflict) as refused:
            heat.software_deployments.create(
                config_id=config.id, server_id=server_id, action="CREATE",
                status="IN_PROGRESS")
        assert refused.value.error["error"]["type"] == "StackLocked", refused.value.error
        assert f"Stack {name} is locked at level all" in str(refused.value)
        assert heat.software_deployments.metadata(server_id) == before
        # The guest's agent keeps polling (every POLL s) and finds nothing new.
        console_before = nova.compute.get_server_console_output(server_id)["output"]
        time.sleep(4 * POLL)
        console = nova.compute.get_server_console_output(server_id)["output"]
        assert console.count("running hook") == console_before.count("running hook") == 1
        assert listener.bodies == [f"first {name}-server"]
        assert nova.compute.get_server(server_id).status == "ACTIVE"

        member.action(name, stack_id, {"unlock": None})
        wait_stack(heat, stack_id, "UNLOCK_COMPLETE", timeout=240)
        heat.software_configs.delete(config.id)
    finally:
        if heat.stacks.get(stack_id).stack_status == "LOCK_COMPLETE":  # a failure above
            member.action(name, stack_id, {"unlock": None})
            wait_stack(heat, stack_id, "UNLOCK_COMPLETE", timeout=240)
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE", timeout=TIMEOUT)


def group_template(name, member, greeting):
    servers = {f"s{n}": agent_server(f"{name}-s{n}", member) for n in range(3)}
    return {"heat_template_version": "2016-10-14", "resources": {
        **network(name, "10.50.0.0/24"), **servers,
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "inputs": [{"name": "greeting"}],
            "outputs": [{"name": "said"}],
            "config": '#!/bin/sh\nprintf "%s from %s" "$greeting" "$(hostname)" '
                      '> "$heat_outputs_path.said"\n'}},
        "deploy": {"type": "OS::Heat::SoftwareDeploymentGroup", "properties": {
            "config": {"get_resource": "config"},
            "servers": {n: {"get_resource": n} for n in servers},
            "input_values": {"greeting": greeting}, "signal_transport": "HEAT_SIGNAL"}}},
        "outputs": {"said": {"value": {"get_attr": ["deploy", "said"]}}}}


def test_a_deployment_group_configures_three_real_guests(member):
    heat, name = member.heat, f"ag{uuid.uuid4().hex[:6]}"
    nova = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    stack_id = heat.stacks.create(stack_name=name, timeout_mins=TIMEOUT // 60,
                                  template=group_template(name, member, "hello"))[
        "stack"]["id"]
    try:
        started = time.monotonic()
        wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=TIMEOUT)
        print(f"3 agent guests: CREATE_COMPLETE {time.monotonic() - started:.0f} s "
              "after the create")
        servers = {f"s{n}": heat.resources.get(stack_id, f"s{n}").physical_resource_id
                   for n in range(3)}
        assert set(qemu_guests(set(servers.values()))) == set(servers.values())

        def said():
            return {o["output_key"]: o["output_value"]
                    for o in heat.stacks.get(stack_id).outputs}["said"]

        assert said() == {n: f"hello from {name}-{n}" for n in servers}
        for n, server_id in servers.items():
            console = nova.compute.get_server_console_output(server_id)["output"]
            print(f"{n}: " + " | ".join(line for line in console.splitlines()
                                        if "starting heatweb-agent" in line
                                        or "heatweb-agent INFO server" in line))

        heat.stacks.update(stack_id, template=group_template(name, member, "bonjour"))
        wait_stack(heat, stack_id, "UPDATE_COMPLETE", timeout=TIMEOUT)
        assert said() == {n: f"bonjour from {name}-{n}" for n in servers}
    finally:
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE", timeout=TIMEOUT)
