"""Pure rules of components and deployments, and the script hook's protocol."""
import json
import subprocess
from pathlib import Path

import pytest

from heatweb.exceptions import StackValidationFailed
from softwareconfig.components import check_component, component_config, derived_inputs, \
    reacting_actions, signal_outcome

HOOK = Path(__file__).resolve().parents[3] / "softwareconfig" / "agent" / "hooks" / "script"


def test_an_action_may_appear_in_one_entry_only():
    check_component([{"actions": ["CREATE"]}, {"actions": ["DELETE", "MIGRATE"]}], name="c")
    with pytest.raises(StackValidationFailed) as raised:
        check_component([{"actions": ["CREATE", "UPDATE"]}, {"actions": ["UPDATE"]}], name="db")
    assert raised.value.message == ('Defining more than one configuration for the same action '
                                    'in SoftwareComponent "db" is not allowed.')
    with pytest.raises(StackValidationFailed):  # default actions are CREATE and UPDATE
        check_component([{"config": "x"}, {"actions": ["CREATE"]}], name="db")


def test_a_component_reacts_to_the_union_of_its_entries_and_ignores_the_deployments_own():
    config = component_config([{"actions": ["CREATE"], "tool": "script", "config": "a"},
                               {"actions": ["SUSPEND", "RESUME"], "tool": "script"}])
    assert config["configs"][1] == {"actions": ["SUSPEND", "RESUME"], "config": "",
                                    "tool": "script"}
    assert reacting_actions("component", config, ["DELETE"]) == {"CREATE", "SUSPEND", "RESUME"}
    assert reacting_actions("script", "echo", ["DELETE"]) == {"DELETE"}
    assert reacting_actions("script", "echo", None) == {"CREATE", "UPDATE"}
    defaulted = component_config([{"tool": "script", "config": "a"}])
    assert defaulted["configs"][0]["actions"] == ["CREATE", "UPDATE"]


def test_derived_inputs_follow_heats_order_and_values():
    inputs = derived_inputs(
        [{"name": "port", "type": "Number", "default": 80}, {"name": "host"}],
        {"host": "db1", "extra": {"a": 1}, "flag": True},
        [("deploy_action", "CREATE", "the action")])
    assert [(i["name"], i["type"], i["value"]) for i in inputs] == [
        ("port", "Number", 80), ("host", "String", "db1"), ("extra", "Json", {"a": 1}),
        ("flag", "Boolean", True), ("deploy_action", "String", "CREATE")]


@pytest.mark.parametrize("details, status, reason, kept", [
    ({"deploy_status_code": 0, "out": "x", "stray": 1}, "COMPLETE", "Outputs received",
     {"deploy_status_code": 0, "out": "x"}),
    ({}, "COMPLETE", "Outputs received", {}),
    ({"deploy_status_code": 2}, "FAILED",
     "deploy_status_code : Deployment exited with non-zero status code: 2",
     {"deploy_status_code": 2}),
    ({"deploy_status_code": "1", "deploy_stderr": "a\nno space left\n"}, "FAILED",
     "deploy_status_code : Deployment exited with non-zero status code: 1 (no space left)",
     {"deploy_status_code": "1", "deploy_stderr": "a\nno space left\n"}),
    ({"err": "broken", "deploy_stdout": "o"}, "FAILED", "err : broken",
     {"err": "broken", "deploy_stdout": "o"}),
])
def test_signal_outcome_applies_heats_failure_rules(details, status, reason, kept):
    outputs = [{"name": "out"}, {"name": "err", "error_output": True}]
    got_status, got_reason, values = signal_outcome(outputs, details)
    assert (got_status, got_reason) == (status, reason)
    assert values == kept  # declared outputs and deploy_* only: "stray" is dropped


def test_the_script_hook_speaks_the_heat_config_protocol(tmp_path):
    config = {"id": "c1", "name": "n", "group": "script", "options": {},
              "config": '#!/bin/sh\necho "hi $who"\necho warn >&2\n'
                        'printf "%s" "$data" > "$heat_outputs_path.result"\nexit 4\n',
              "inputs": [{"name": "who", "value": "there"}, {"name": "data", "value": {"k": 1}}],
              "outputs": [{"name": "result"}, {"name": "absent"}]}
    done = subprocess.run([str(HOOK)], input=json.dumps(config), capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HEAT_SCRIPT_WORKING": str(tmp_path / "w"),
                               "HEAT_SCRIPT_OUTPUTS": str(tmp_path / "o")}, check=True)
    assert json.loads(done.stdout) == {"result": '{"k": 1}', "deploy_stdout": "hi there\n",
                                       "deploy_stderr": "warn\n", "deploy_status_code": 4}
