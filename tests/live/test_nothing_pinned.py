"""Nothing pinned (issue 13): a stack waiting for an agent that never comes can be deleted,
and a deployment's wait has a deadline even when the stack has no timeout."""
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.conftest import LiveService
from tests.live.door import shell, unique
from tests.live.test_lock import Api

pytestmark = pytest.mark.live

WAITING = {"heat_template_version": "2016-10-14", "resources": {
    "server": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1"}},
    "config": {"type": "OS::Heat::SoftwareConfig",
               "properties": {"group": "script", "config": "#!/bin/sh\ntrue"}},
    "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
        "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
        "signal_transport": "CFN_SIGNAL"}}}}
WAITING_REASON = re.compile(r"^Waiting for the agent's signal since (\d\d:\d\d:\d\d) UTC, "
                            r"until (\d\d:\d\d:\d\d) UTC$")


def _waiting(api, path, timeout=60):
    """The deployment's status reason once it waits for the agent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reason = api.resources(path)["deployment"]["resource_status_reason"]
        if WAITING_REASON.match(reason):
            return reason
        time.sleep(0.2)
    raise AssertionError(f"the deployment never waited: {api.resources(path)['deployment']}")


def _minutes(a, b):
    to_s = [int(x) for x in a.split(":")], [int(x) for x in b.split(":")]
    seconds = [h * 3600 + m * 60 + s for h, m, s in to_s]
    return ((seconds[1] - seconds[0]) % 86400) / 60


def test_delete_of_a_stack_waiting_for_an_agent_that_never_comes(live_service):
    api = Api(live_service.issue_token(unique("pin-"), unique("pin-p-")))
    path = api.create(WAITING)
    reason = _waiting(api, path)
    since, until = WAITING_REASON.match(reason).groups()
    assert _minutes(since, until) == 60  # no timeout_mins: Heat's default stack timeout
    assert api.stack(path)["stack_status"] == "CREATE_IN_PROGRESS"
    server = api.resources(path)["server"]["physical_resource_id"]
    deployment = api.resources(path)["deployment"]["physical_resource_id"]
    resp = api.call("DELETE", path)
    assert resp.status_code == 204, resp.text
    api.wait(path, "DELETE_COMPLETE")
    gone = shell(live_service, f"""
import json
from softwareconfig.models import SoftwareDeployment
from stacks.cloud import get_cloud_driver
print(json.dumps([get_cloud_driver().server_get("{server}"),
                  SoftwareDeployment.objects.filter(pk="{deployment}").exists()]))""")
    assert gone == [None, False]


@pytest.fixture(scope="module")
def short_deadline(tmp_path_factory):
    """A service of its own whose deployments wait at most 0.1 minute (6 s) by default."""
    service = LiveService(tmp_path_factory.mktemp("deadline"), name="deadline", workers=1,
                          HEATWEB_DEPLOYMENT_TIMEOUT_MINS="0.1").start()
    yield service
    service.stop()


def test_a_deployment_without_stack_timeout_fails_at_the_default_deadline(short_deadline):
    api = Api(short_deadline.issue_token(unique("dl-"), unique("dl-p-")))
    path = api.create(WAITING)
    since, until = WAITING_REASON.match(_waiting(api, path)).groups()
    assert _minutes(since, until) == pytest.approx(0.1)
    failed = api.wait(path, "CREATE_FAILED", timeout=60)
    assert failed["stack_status_reason"] == (
        f"Resource CREATE failed: ResourceFailure: resources.deployment: Deployment to server "
        f"failed: no signal from the agent since {since} UTC; gave up at {until} UTC")
    assert api.resources(path)["deployment"]["resource_status"] == "CREATE_FAILED"


SCALING = {"heat_template_version": "2016-10-14", "resources": {
    "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 10, "desired_capacity": 2,
        "resource": {"type": "OS::Heat::None"}}},
    "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "group"},
        "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}}},
    "outputs": {"alarm_url": {"value": {"get_attr": ["scale_out", "alarm_url"]}}}}


def test_two_simultaneous_scaling_signals_grow_the_group_by_two(live_service):
    api = Api(live_service.issue_token(unique("sc-"), unique("sc-p-")))
    path = api.create(SCALING)
    stack = api.wait(path, "CREATE_COMPLETE")
    alarm_url = stack["outputs"][0]["output_value"]
    group_id = api.resources(path)["group"]["physical_resource_id"]

    def members():
        return sorted(n for n in api.resources(f"/stacks/{group_id}"))

    assert len(members()) == 2
    barrier = threading.Barrier(2)

    def alarm(_):
        barrier.wait()
        return requests.post(alarm_url, json={}).status_code

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(alarm, range(2))) == [200, 200]
    api.wait(f"/stacks/{group_id}", "UPDATE_COMPLETE")
    assert len(members()) == 4
    reasons = [e["resource_status_reason"] for e in api.call(
        "GET", f"{path}/resources/scale_out/events").json()["events"]]
    assert sorted(r for r in reasons if r.startswith("Signal: scaling")) == [
        "Signal: scaling group from 2 to 3", "Signal: scaling group from 3 to 4"]


SLOW_SCALING = {"heat_template_version": "2016-10-14", "parameters": {
    "size": {"type": "number", "default": 2}, "value": {"type": "string", "default": "a"}},
    "resources": {
        "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 10, "desired_capacity": {"get_param": "size"},
            "resource": {"type": "OS::Heat::TestResource", "properties": {
                "value": {"get_param": "value"}, "action_wait_secs": {"update": 8}}}}},
        "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
            "auto_scaling_group_id": {"get_resource": "group"},
            "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}}},
    "outputs": {"alarm_url": {"value": {"get_attr": ["scale_out", "alarm_url"]}}}}


def test_a_scaling_signal_during_an_update_of_the_group_loses_no_member(live_service):
    api = Api(live_service.issue_token(unique("su-"), unique("su-p-")))
    path = api.create(SLOW_SCALING)
    stack = api.wait(path, "CREATE_COMPLETE")
    alarm_url = stack["outputs"][0]["output_value"]
    group_id = api.resources(path)["group"]["physical_resource_id"]
    before = set(api.resources(f"/stacks/{group_id}"))
    assert len(before) == 2

    resp = api.call("PATCH", path, {"parameters": {"size": 3, "value": "b"}})
    assert resp.status_code == 202, resp.text
    deadline = time.monotonic() + 60
    while api.resources(path)["group"]["resource_status"] != "UPDATE_IN_PROGRESS":
        assert time.monotonic() < deadline, "the group's update never started"
        time.sleep(0.2)
    assert requests.post(alarm_url, json={}).status_code == 200

    api.wait(path, "UPDATE_COMPLETE", timeout=120)
    members = api.resources(f"/stacks/{group_id}")
    assert len(members) == 3  # what the update asked for; the signal added none
    assert before <= set(members)  # and the members the update kept are all there
    assert {m["resource_status"] for m in members.values()} <= {"UPDATE_COMPLETE",
                                                                 "CREATE_COMPLETE"}
    reasons = [e["resource_status_reason"] for e in api.call(
        "GET", f"{path}/resources/scale_out/events").json()["events"]]
    assert [r for r in reasons if r.startswith("signal ignored: the group")], reasons
    assert not [r for r in reasons if r.startswith("Signal: scaling")], reasons
