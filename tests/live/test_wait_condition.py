"""OS::Heat::WaitConditionHandle + OS::Heat::WaitCondition through python-heatclient
against the live service; the handle is signalled by running its ``curl_cli`` with curl."""
import json
from concurrent.futures import ThreadPoolExecutor
import shlex
import subprocess
import time
import uuid

import pytest
import requests
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import wait_stack

pytestmark = pytest.mark.live


def template(*, count=1, timeout=600):
    return {
        "heat_template_version": "2016-10-14",
        "resources": {
            "handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {"type": "OS::Heat::WaitCondition",
                     "properties": {"handle": {"get_resource": "handle"},
                                    "count": count, "timeout": timeout}}},
        "outputs": {"curl_cli": {"value": {"get_attr": ["handle", "curl_cli"]}},
                    "data": {"value": {"get_attr": ["wait", "data"]}}},
    }


@pytest.fixture
def tenant(live_service):
    info = live_service.issue_token(f"wc-{uuid.uuid4().hex[:6]}", f"wcp-{uuid.uuid4().hex[:6]}")
    from heatclient import client

    info["heat"] = client.Client("1", endpoint=info["endpoint"], token=info["token"])
    return info


@pytest.fixture
def heat(tenant):
    return tenant["heat"]


def output(hc, stack_id, key):
    return hc.stacks.output_show(stack_id, key)["output"]["output_value"]


def curl_cli(hc, stack_id):
    """The handle's curl command, as a server's user_data would get it (once the handle is)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        attrs = hc.resources.get(stack_id, "handle").attributes
        if attrs.get("curl_cli"):
            return attrs["curl_cli"]
        time.sleep(0.2)
    raise AssertionError("the handle never had a curl_cli")


def signal(command, body):
    done = subprocess.run(shlex.split(command) + ["--data-binary", json.dumps(body)],
                          capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.startswith("HTTP/1.1 200"), done.stdout + done.stderr


def create(hc, body):
    name = f"wc-{uuid.uuid4().hex[:8]}"
    return hc.stacks.create(stack_name=name, template=body)["stack"]["id"]


def test_two_success_signals_complete_the_wait(heat):
    stack_id = create(heat, template(count=2))
    command = curl_cli(heat, stack_id)
    assert command.startswith("curl -i -X POST -H 'X-Auth-Token: ")
    assert "/webhooks/signal/" in command
    signal(command, {"status": "SUCCESS", "id": "a", "data": "first"})
    signal(command, {"status": "SUCCESS", "id": "a", "data": "again"})  # replaces it: once
    time.sleep(1)
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    assert heat.resources.get(stack_id, "wait").resource_status == "CREATE_IN_PROGRESS"
    signal(command, {"status": "SUCCESS", "id": "b", "data": "second", "reason": "done"})
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=30)
    assert json.loads(output(heat, stack_id, "data")) == {"a": "again", "b": "second"}
    reasons = [e.resource_status_reason for e in heat.events.list(stack_id,
                                                                  resource_name="handle")]
    # Heat's words: "Signal: status:<status> reason:<reason>", the default reason numbered
    # by the signals the handle had (its id is not the number).
    assert "Signal: status:SUCCESS reason:done" in reasons, reasons
    assert "Signal: status:SUCCESS reason:Signal 1 received" in reasons, reasons
    # Heat keeps a handle's signals in its metadata, by id; a repeated id replaced its own.
    assert heat.resources.metadata(stack_id, "handle") == {
        "a": {"data": "again", "reason": "Signal 2 received", "status": "SUCCESS"},
        "b": {"data": "second", "reason": "done", "status": "SUCCESS"}}


def test_a_failure_signal_fails_the_wait_with_its_reason(heat):
    stack_id = create(heat, template(count=1))
    signal(curl_cli(heat, stack_id), {"status": "FAILURE", "reason": "disk full"})
    stack = wait_stack(heat, stack_id, "CREATE_FAILED", timeout=30)
    assert "WaitConditionFailure: resources.wait: disk full" in stack.stack_status_reason


def test_no_signal_in_time_fails_the_wait(heat):
    stack_id = create(heat, template(count=1, timeout=2))
    stack = wait_stack(heat, stack_id, "CREATE_FAILED", timeout=30)
    assert "WaitConditionTimeout: resources.wait: 0 of 1 received" in stack.stack_status_reason


def test_a_signal_with_a_bad_status_is_a_400(heat):
    stack_id = create(heat, template(count=1))
    command = curl_cli(heat, stack_id)
    done = subprocess.run(shlex.split(command) + ["--data-binary", '{"status": "MAYBE"}'],
                          capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.startswith("HTTP/1.1 400"), done.stdout
    assert "Metadata format invalid" in done.stdout


@pytest.mark.parametrize("props, message", [
    ({"count": 1}, "Property handle not assigned"),
    ({"handle": {"get_resource": "handle"}, "count": 0}, "resources.wait.properties.count"),
])
def test_bad_properties_are_a_400(heat, props, message):
    body = template()
    body["resources"]["wait"]["properties"] = props
    with pytest.raises(heat_exc.HTTPBadRequest) as caught:
        create(heat, body)
    assert message in str(caught.value)


def test_a_locked_stack_ignores_signals(tenant):
    heat = tenant["heat"]
    stack_id = create(heat, template(count=1))
    command = curl_cli(heat, stack_id)
    signal(command, {"id": "first", "data": 1})
    stack = wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=30)
    actions = f"{tenant['endpoint']}/stacks/{stack.stack_name}/{stack_id}/actions"
    answer = requests.post(actions, json={"lock": {"level": "stacks"}, "reason": "maintenance"},
                           headers={"X-Auth-Token": tenant["token"]}, timeout=30)
    assert answer.status_code == 200, answer.text
    wait_stack(heat, stack_id, "LOCK_COMPLETE", timeout=30)
    signal(command, {"id": "late", "data": 2})  # 200: alarms and agents retry on errors
    assert json.loads(output(heat, stack_id, "data")) == {"first": 1}
    reasons = [e.resource_status_reason for e in heat.events.list(stack_id,
                                                                  resource_name="handle")]
    assert any("signal ignored: stack is locked" in r for r in reasons), reasons


def test_signals_at_once_each_count(heat):
    stack_id = create(heat, template(count=5))
    command = curl_cli(heat, stack_id)
    with ThreadPoolExecutor(5) as pool:
        list(pool.map(lambda n: signal(command, {"data": n}), range(5)))  # no ids: numbered
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=30)
    data = json.loads(output(heat, stack_id, "data"))
    assert sorted(data) == ["1", "2", "3", "4", "5"] and sorted(data.values()) == [0, 1, 2, 3, 4]


def test_the_signal_api_signals_the_handle_too(heat):
    stack_id = create(heat, template(count=1))
    curl_cli(heat, stack_id)  # the handle exists
    heat.resources.signal(stack_id, "handle", data={"status": "SUCCESS", "id": "api",
                                                   "data": "by token"})
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=30)
    assert json.loads(output(heat, stack_id, "data")) == {"api": "by token"}
