"""Action-aware software components (seed 002): the live service, real workers, the real agent.

The agent (softwareconfig/agent/heatweb_agent.py) runs as a subprocess for
the simulated server, exactly as it would on a real one: it polls the
metadata endpoint, runs the component's script for the action with the
``script`` hook, and signals back.
"""
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests
from heatclient import exc as heat_exc

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "softwareconfig" / "agent" / "heatweb_agent.py"


def component_template(configs, *, transport="CFN_SIGNAL", outputs=("state",),
                       error_outputs=()):
    """A server, a component with ``configs`` and its deployment; inputs greeting + log."""
    return {
        "heat_template_version": "2016-10-14",
        "parameters": {"greeting": {"type": "string", "default": "hello"},
                       "log": {"type": "string"}},
        "resources": {
            "server": {"type": "OS::Nova::Server",
                       "properties": {"image": "cirros", "flavor": "m1.tiny",
                                      "user_data_format": "SOFTWARE_CONFIG"}},
            "app": {"type": "OS::Heat::SoftwareComponent", "properties": {
                "configs": configs,
                "inputs": [{"name": "greeting"}, {"name": "log"}],
                "outputs": [{"name": n} for n in outputs] +
                           [{"name": n, "error_output": True} for n in error_outputs]}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
                "config": {"get_resource": "app"}, "server": {"get_resource": "server"},
                "signal_transport": transport,
                "input_values": {"greeting": {"get_param": "greeting"},
                                 "log": {"get_param": "log"}}}}},
        "outputs": {"state": {"value": {"get_attr": ["deployment", "state"]}},
                    "server_id": {"value": {"get_resource": "server"}}},
    }


def script(body):
    """A script that logs "$deploy_action $greeting" to the log file, then runs ``body``."""
    return f'#!/bin/sh\necho "$deploy_action $greeting" >> "$log"\n{body}\n'


LIFECYCLE = [
    {"actions": ["CREATE"], "tool": "script",
     "config": script('echo "created"; printf "installed:%s" "$greeting" > '
                      '"$heat_outputs_path.state"')},
    {"actions": ["UPDATE"], "tool": "script",
     "config": script('printf "updated:%s" "$greeting" > "$heat_outputs_path.state"')},
    {"actions": ["SUSPEND", "RESUME"], "tool": "script",
     "config": script('printf "%s:%s" "$deploy_action" "$greeting" > '
                      '"$heat_outputs_path.state"')},
    {"actions": ["DELETE"], "tool": "script", "config": script("true")},
]


class AgentProcess:
    """The agent as a subprocess, polling for one server."""

    def __init__(self, service, info, server_id, state_dir, *, hooks_dir=None):
        self.command = [sys.executable, str(AGENT), "--endpoint", info["endpoint"],
                        f"--token={info['token']}", "--server-id", server_id,
                        "--state-dir", str(state_dir)]
        if hooks_dir:
            self.command += ["--hooks-dir", str(hooks_dir)]
        self.log = Path(state_dir) / "agent.log"
        self.proc = None

    def once(self):
        done = subprocess.run([*self.command, "--once"], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr

    def start(self):
        Path(self.log).parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.log, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([*self.command, "--interval", "0.2"], stdout=self.handle,
                                     stderr=subprocess.STDOUT)
        return self

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.handle.close()
            self.proc = None


@pytest.fixture
def tenant(live_service):
    info = live_service.issue_token(f"sc-{uuid.uuid4().hex[:6]}", f"scp-{uuid.uuid4().hex[:6]}")
    from heatclient import client

    info["heat"] = client.Client("1", endpoint=info["endpoint"], token=info["token"])
    return info


def wait_status(heat, stack_id, wanted, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = heat.stacks.get(stack_id)
        if stack.stack_status == wanted:
            return stack
        if stack.stack_status.endswith(("COMPLETE", "FAILED")) and \
                stack.stack_status.split("_")[0] == wanted.split("_")[0]:
            raise AssertionError(f"{stack.stack_status}: {stack.stack_status_reason}")
        time.sleep(0.2)
    raise AssertionError(f"stack did not reach {wanted}: {stack.stack_status} "
                         f"{stack.stack_status_reason}")


def wait_deleted(heat, stack_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stack = heat.stacks.get(stack_id)
        except heat_exc.HTTPNotFound:
            return
        if stack.stack_status == "DELETE_COMPLETE":
            return
        if stack.stack_status == "DELETE_FAILED":
            raise AssertionError(stack.stack_status_reason)
        time.sleep(0.2)
    raise AssertionError("stack was not deleted")


def server_id_of(heat, stack_id, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for res in heat.resources.list(stack_id):
            if res.resource_name == "server" and res.physical_resource_id:
                return res.physical_resource_id
        time.sleep(0.1)
    raise AssertionError("the server was not created")


def launch(tenant, template, tmp_path, **params):
    log = tmp_path / "actions.log"
    name = f"sc{uuid.uuid4().hex[:8]}"
    created = tenant["heat"].stacks.create(stack_name=name, template=template,
                                           parameters={"log": str(log), **params})
    stack_id = created["stack"]["id"]
    return stack_id, log, server_id_of(tenant["heat"], stack_id)


def output(heat, stack_id, key):
    return heat.stacks.output_show(stack_id, key)["output"]["output_value"]


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


# The whole lifecycle ---------------------------------------------------------------------

@pytest.mark.parametrize("transport", ["CFN_SIGNAL", "HEAT_SIGNAL"])
def test_each_action_runs_its_script_once_in_order(live_service, tenant, tmp_path, transport):
    heat = tenant["heat"]
    stack_id, log, server = launch(tenant, component_template(LIFECYCLE, transport=transport),
                                   tmp_path)
    agent = AgentProcess(live_service, tenant, server, tmp_path / "agent").start()
    try:
        wait_status(heat, stack_id, "CREATE_COMPLETE")
        assert output(heat, stack_id, "state") == "installed:hello"
        deployment = heat.resources.get(stack_id, "deployment")
        assert deployment.attributes["deploy_status_code"] == 0
        assert deployment.attributes["deploy_stdout"] == "created\n"

        heat.stacks.update(stack_id, existing=True, parameters={"greeting": "bye"})
        wait_status(heat, stack_id, "UPDATE_COMPLETE")
        assert output(heat, stack_id, "state") == "updated:bye"

        heat.actions.suspend(stack_id)
        wait_status(heat, stack_id, "SUSPEND_COMPLETE")
        assert output(heat, stack_id, "state") == "SUSPEND:bye"
        heat.actions.resume(stack_id)
        wait_status(heat, stack_id, "RESUME_COMPLETE")
        assert output(heat, stack_id, "state") == "RESUME:bye"

        heat.stacks.delete(stack_id)
        wait_deleted(heat, stack_id)
    finally:
        agent.stop()
    assert lines(log) == ["CREATE hello", "UPDATE bye", "SUSPEND bye", "RESUME bye",
                          "DELETE bye"]
    # The server was only suspended after its deployment ran its SUSPEND script.
    assert "signalled (" + transport in agent.log.read_text()


def test_the_deployment_waits_for_the_agent_and_publishes_derived_inputs(live_service, tenant,
                                                                          tmp_path):
    heat = tenant["heat"]
    stack_id, log, server = launch(tenant, component_template(LIFECYCLE), tmp_path)
    time.sleep(1.5)  # nothing signals: the deployment keeps waiting
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    deployment = heat.resources.get(stack_id, "deployment")
    assert deployment.resource_status == "CREATE_IN_PROGRESS"

    metadata = heat.software_deployments.metadata(server)
    assert len(metadata) == 1
    config = metadata[0]
    assert config["group"] == "component"
    assert [e["actions"] for e in config["config"]["configs"]] == \
        [["CREATE"], ["UPDATE"], ["SUSPEND", "RESUME"], ["DELETE"]]
    inputs = {i["name"]: i["value"] for i in config["inputs"]}
    stack = heat.stacks.get(stack_id)
    assert inputs["deploy_action"] == "CREATE"
    assert inputs["deploy_server_id"] == server
    assert inputs["deploy_stack_id"] == f"{stack.stack_name}/{stack_id}"
    assert inputs["deploy_resource_name"] == "deployment"
    assert inputs["deploy_signal_transport"] == "CFN_SIGNAL"
    assert inputs["deploy_signal_verb"] == "POST"
    assert inputs["deploy_signal_id"].startswith(live_service.url + "/webhooks/signal/")
    assert inputs["greeting"] == "hello" and inputs["log"] == str(log)

    dep = heat.software_deployments.get(deployment.physical_resource_id)
    assert (dep.server_id, dep.action, dep.status, dep.status_reason) == \
        (server, "CREATE", "IN_PROGRESS", "Deploy data available")
    assert dep.config_id == config["id"]

    AgentProcess(live_service, tenant, server, tmp_path / "agent").once()
    wait_status(heat, stack_id, "CREATE_COMPLETE")
    dep = heat.software_deployments.get(deployment.physical_resource_id)
    assert (dep.status, dep.status_reason) == ("COMPLETE", "Outputs received")
    assert dep.output_values["state"] == "installed:hello"


def test_a_component_covering_only_create_completes_other_actions_at_once(
        live_service, tenant, tmp_path):
    heat = tenant["heat"]
    only_create = [LIFECYCLE[0], {"actions": ["MIGRATE"], "tool": "script",
                                  "config": script("true")}]
    stack_id, log, server = launch(tenant, component_template(only_create), tmp_path)
    agent = AgentProcess(live_service, tenant, server, tmp_path / "agent")
    agent.once()
    wait_status(heat, stack_id, "CREATE_COMPLETE")
    create_config = heat.software_deployments.metadata(server)[0]["id"]

    heat.stacks.update(stack_id, existing=True, parameters={"greeting": "bye"})
    wait_status(heat, stack_id, "UPDATE_COMPLETE")
    heat.actions.suspend(stack_id)
    wait_status(heat, stack_id, "SUSPEND_COMPLETE")
    heat.actions.resume(stack_id)
    wait_status(heat, stack_id, "RESUME_COMPLETE")
    # Nothing new was published: the custom MIGRATE action is never triggered either.
    assert [c["id"] for c in heat.software_deployments.metadata(server)] == [create_config]
    assert "running hook" not in agent.once()
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)
    assert lines(log) == ["CREATE hello"]
    assert heat.software_deployments.metadata(server) == []


def test_a_failing_script_fails_the_deployment_and_the_stack(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    failing = [{"actions": ["CREATE"], "tool": "script",
                "config": script('echo "disk full" >&2; exit 3')}]
    stack_id, log, server = launch(tenant, component_template(failing), tmp_path)
    AgentProcess(live_service, tenant, server, tmp_path / "agent").once()
    stack = wait_status(heat, stack_id, "CREATE_FAILED")
    assert "Deployment to server failed: deploy_status_code : Deployment exited with " \
           "non-zero status code: 3" in stack.stack_status_reason
    deployment = heat.resources.get(stack_id, "deployment")
    assert deployment.resource_status == "CREATE_FAILED"
    dep = heat.software_deployments.get(deployment.physical_resource_id)
    assert dep.status == "FAILED"
    assert dep.output_values["deploy_stderr"] == "disk full\n"
    assert dep.output_values["deploy_status_code"] == 3


def test_an_error_output_fails_the_deployment(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    configs = [{"actions": ["CREATE"], "tool": "script",
                "config": script('printf "license expired" > "$heat_outputs_path.problem"')}]
    stack_id, _, server = launch(tenant, component_template(configs, error_outputs=("problem",)),
                                 tmp_path)
    AgentProcess(live_service, tenant, server, tmp_path / "agent").once()
    stack = wait_status(heat, stack_id, "CREATE_FAILED")
    assert "problem : license expired" in stack.stack_status_reason


def test_no_signal_completes_at_once_and_the_agent_still_applies_it(live_service, tenant,
                                                                     tmp_path):
    heat = tenant["heat"]
    stack_id, log, server = launch(tenant, component_template(LIFECYCLE, transport="NO_SIGNAL"),
                                   tmp_path)
    wait_status(heat, stack_id, "CREATE_COMPLETE")
    deployment = heat.resources.get(stack_id, "deployment")
    dep = heat.software_deployments.get(deployment.physical_resource_id)
    assert (dep.status, dep.status_reason) == ("COMPLETE", "Not waiting for outputs signal")
    inputs = {i["name"]: i["value"] for i in heat.software_deployments.metadata(server)[0]
              ["inputs"]}
    assert inputs["deploy_signal_transport"] == "NO_SIGNAL"
    assert "deploy_signal_id" not in inputs
    assert "NO_SIGNAL, not signalling" in AgentProcess(live_service, tenant, server,
                                                       tmp_path / "agent").once()
    assert lines(log) == ["CREATE hello"]


def test_an_agent_restart_reruns_nothing(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    stack_id, log, server = launch(tenant, component_template(LIFECYCLE), tmp_path)
    agent = AgentProcess(live_service, tenant, server, tmp_path / "agent")
    agent.once()
    wait_status(heat, stack_id, "CREATE_COMPLETE")
    second = agent.once()  # a new process with the same state directory
    assert "running hook" not in second
    agent.start()  # and again as a loop
    time.sleep(1)
    agent.stop()
    assert "running hook" not in agent.log.read_text()
    assert lines(log) == ["CREATE hello"]


def test_a_tool_without_a_hook_fails_clearly(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    # heat-agents has an ansible hook; heatweb's agent ships script, cfn-init and puppet
    configs = [{"actions": ["CREATE"], "tool": "ansible", "config": "- hosts: all"}]
    stack_id, _, server = launch(tenant, component_template(configs), tmp_path)
    printed = AgentProcess(live_service, tenant, server, tmp_path / "agent").once()
    assert "no hook installed for tool 'ansible'" in printed
    stack = wait_status(heat, stack_id, "CREATE_FAILED")
    assert "non-zero status code: 127" in stack.stack_status_reason
    assert "no hook installed for tool 'ansible'" in stack.stack_status_reason


def test_a_hook_that_prints_garbage_is_a_failed_deployment(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "broken").write_text("#!/bin/sh\necho 'this is not json'\necho oops >&2\n")
    os.chmod(hooks / "broken", 0o755)
    configs = [{"actions": ["CREATE"], "tool": "broken", "config": "x"}]
    stack_id, _, server = launch(tenant, component_template(configs), tmp_path)
    AgentProcess(live_service, tenant, server, tmp_path / "agent", hooks_dir=hooks).once()
    wait_status(heat, stack_id, "CREATE_FAILED")
    dep = heat.software_deployments.get(
        heat.resources.get(stack_id, "deployment").physical_resource_id)
    assert dep.status == "FAILED"
    assert "oops" in dep.output_values["deploy_stderr"]
    assert "without a JSON result" in dep.output_values["deploy_stderr"]
    assert dep.output_values["deploy_stdout"] == "this is not json\n"


def test_a_hook_from_another_directory_gets_its_options(live_service, tenant, tmp_path):
    """A heat-config style hook: JSON in, JSON out; options namespaced per tool."""
    heat = tenant["heat"]
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "echo").write_text(
        "#!/usr/bin/env python3\nimport json, sys\nc = json.load(sys.stdin)\n"
        "print(json.dumps({'state': c['options']['level'] + ':' + c['config'],"
        " 'deploy_status_code': 0}))\n")
    os.chmod(hooks / "echo", 0o755)
    template = component_template([{"actions": ["CREATE", "UPDATE"], "tool": "echo",
                                    "config": "payload"}])
    template["resources"]["app"]["properties"]["options"] = {"echo": {"level": "high"},
                                                              "chef": {"level": "ignored"}}
    stack_id, _, server = launch(tenant, template, tmp_path)
    AgentProcess(live_service, tenant, server, tmp_path / "agent", hooks_dir=hooks).once()
    wait_status(heat, stack_id, "CREATE_COMPLETE")
    assert output(heat, stack_id, "state") == "high:payload"


# Validation --------------------------------------------------------------------------------

def test_an_action_in_two_entries_is_refused(tenant, tmp_path):
    configs = [{"actions": ["CREATE", "UPDATE"], "tool": "script", "config": "a"},
               {"actions": ["UPDATE"], "tool": "script", "config": "b"}]
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        tenant["heat"].stacks.create(stack_name=f"bad{uuid.uuid4().hex[:6]}",
                                     template=component_template(configs),
                                     parameters={"log": "x"})
    assert 'Defining more than one configuration for the same action in SoftwareComponent ' \
           '"app" is not allowed.' in str(raised.value)
    assert list(tenant["heat"].stacks.list()) == []


def test_default_actions_count_when_checking_duplicates(tenant):
    configs = [{"tool": "script", "config": "a"},  # CREATE, UPDATE by default
               {"actions": ["CREATE"], "tool": "script", "config": "b"}]
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        tenant["heat"].stacks.validate(template=component_template(configs))
    assert "Defining more than one configuration for the same action" in str(raised.value)


def test_empty_configs_are_refused(tenant):
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        tenant["heat"].stacks.validate(template=component_template([]))
    assert "resources.app.properties.configs" in str(raised.value)


def test_an_entry_without_a_tool_is_refused(tenant):
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        tenant["heat"].stacks.validate(template=component_template([{"config": "x"}]))
    assert "tool" in str(raised.value)


# The software config API through python-heatclient -----------------------------------------

def test_a_component_stored_through_heatclient(live_service, tenant, tmp_path):
    heat = tenant["heat"]
    component = heat.software_configs.create(
        name="app", group="component",
        config={"configs": [{"actions": ["CREATE"], "tool": "script",
                             "config": script('printf "api" > "$heat_outputs_path.state"')}]},
        inputs=[{"name": "greeting", "default": "hi"}, {"name": "log"}],
        outputs=[{"name": "state"}], options={})
    shown = heat.software_configs.get(component.id)
    assert shown.group == "component"
    assert shown.config["configs"][0]["actions"] == ["CREATE"]
    assert component.id in [c.id for c in heat.software_configs.list()]

    # A deployment of it by hand, as Heat's own API users do, and the agent applying it.
    log = tmp_path / "api.log"
    derived = heat.software_configs.create(
        name="app-create", group="component", config=shown.config, outputs=shown.outputs,
        inputs=[{"name": "greeting", "value": "hi"}, {"name": "log", "value": str(log)},
                {"name": "deploy_action", "value": "CREATE"},
                {"name": "deploy_signal_transport", "value": "NO_SIGNAL"}])
    server = f"manual-{uuid.uuid4().hex[:8]}"
    dep = heat.software_deployments.create(config_id=derived.id, server_id=server,
                                           action="CREATE", status="IN_PROGRESS",
                                           status_reason="Deploy data available")
    assert [m["id"] for m in heat.software_deployments.metadata(server)] == [derived.id]
    assert [d.id for d in heat.software_deployments.list(server_id=server)] == [dep.id]
    AgentProcess(live_service, tenant, server, tmp_path / "agent").once()
    assert lines(log) == ["CREATE hi"]

    updated = heat.software_deployments.update(dep.id, status="COMPLETE",
                                               output_values={"state": "api"})
    assert (updated.status, updated.output_values) == ("COMPLETE", {"state": "api"})
    with pytest.raises(heat_exc.HTTPConflict) as raised:
        heat.software_configs.delete(derived.id)
    assert "referenced" in str(raised.value)
    heat.software_deployments.delete(dep.id)
    heat.software_configs.delete(derived.id)
    heat.software_configs.delete(component.id)
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.software_configs.get(component.id)


def test_software_config_api_errors_use_heats_format(live_service, tenant):
    session = requests.Session()
    session.headers.update({"X-Auth-Token": tenant["token"],
                            "Content-Type": "application/json"})
    base = tenant["endpoint"]
    bad = session.post(base + "/software_configs", data=json.dumps(
        {"name": "x", "inputs": [{"type": "String"}]}))
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "BadRequest"
    assert "each entry needs a name" in bad.json()["error"]["message"]
    missing = session.get(base + "/software_configs/" + str(uuid.uuid4()))
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "EntityNotFound"
    garbage = session.get(base + "/software_deployments/not-a-uuid")
    assert garbage.status_code == 404
    no_server = session.post(base + "/software_deployments", data=json.dumps({}))
    assert no_server.status_code == 400
    bad_status = session.post(base + "/software_deployments", data=json.dumps(
        {"server_id": "s", "status": "DONE"}))
    assert bad_status.status_code == 400
    assert session.get(base + "/software_deployments?server_id=s").json() == \
        {"software_deployments": []}
    negative = session.get(base + "/software_configs?limit=-1")
    assert negative.status_code == 400 and negative.json()["error"]["type"] == "BadRequest"
    ids = [session.post(base + "/software_configs", data=json.dumps(
        {"name": f"page{n}", "config": "x"})).json()["software_config"]["id"] for n in range(3)]
    first = session.get(base + "/software_configs?limit=2").json()["software_configs"]
    rest = session.get(base + f"/software_configs?marker={first[-1]['id']}").json()
    assert [c["id"] for c in first + rest["software_configs"]][-3:] == ids
