"""Issue 36: Aodh on the real one-machine cloud (scripts/cloud/aodh-up). An
``OS::Aodh::EventAlarm`` whose action is a scaling policy's ``alarm_url`` is a real Aodh
alarm; the test plays Ceilometer (an event published on Aodh's listener topic, as
Ceilometer's event pipeline does), aodh-listener sets the alarm to ``alarm`` and
aodh-notifier POSTs the ``alarm_url``: the group grows. Under a lock allowing signals it
grows too; under a plain lock the call is answered and ignored (docs/locking.md)."""
import json
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.keystone_support import CLOUD_BASE

pytestmark = pytest.mark.openstack

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "cloud"

TEMPLATE = {"heat_template_version": "2018-08-31",
            "parameters": {"event_type": {"type": "string"}},
            "resources": {
                "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                    "min_size": 1, "max_size": 5, "desired_capacity": 1,
                    "resource": {"type": "OS::Heat::RandomString"}}},
                "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
                    "auto_scaling_group_id": {"get_resource": "group"}, "cooldown": 0,
                    "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}},
                "alarm": {"type": "OS::Aodh::EventAlarm", "properties": {
                    "description": "Scale out on a heatweb test event",
                    "event_type": {"get_param": "event_type"},
                    "query": [{"field": "traits.reason", "op": "eq", "value": "load",
                               "type": "string"}],
                    "alarm_actions": [{"get_attr": ["scale_out", "alarm_url"]}]}},
                # Made in Aodh, never evaluated here (no Prometheus, no Gnocchi, no
                # aodh-evaluator).
                "prometheus": {"type": "OS::Aodh::PrometheusAlarm", "properties": {
                    "query": "avg(cpu_usage)", "threshold": 80, "comparison_operator": "gt",
                    "severity": "moderate"}},
                "composite": {"type": "OS::Aodh::CompositeAlarm", "properties": {
                    "composite_rule": {"operator": "or", "rules": [
                        {"type": "gnocchi_resources_threshold", "metric": metric,
                         "resource_id": {"get_param": "OS::stack_id"},
                         "resource_type": "instance", "threshold": 80,
                         "aggregation_method": "mean", "comparison_operator": "gt"}
                        for metric in ("cpu", "memory.usage")]}}}},
            "outputs": {"size": {"value": {"get_attr": ["group", "current_size"]}},
                        "alarm_url": {"value": {"get_attr": ["scale_out", "alarm_url"]}},
                        "alarm": {"value": {"get_attr": ["alarm", "show"]}}}}


def outputs(heat, stack_id):
    return {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}


def fire(event_type, project_id, reason="load"):
    """Play Ceilometer: one event on Aodh's listener topic (scripts/cloud/aodh.py event)."""
    done = subprocess.run(
        [str(CLOUD_BASE / "venv" / "bin" / "python"), "aodh.py", "event",
         "--config-file", str(CLOUD_BASE / "etc" / "aodh" / "aodh.conf"),
         "--event-type", event_type, "--project-id", project_id, "--trait", f"reason={reason}"],
        cwd=SCRIPTS, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])["message_id"]


def grown_to(heat, stack_id, size):
    """The group at ``size``, its resize done (its nested stack no longer IN_PROGRESS)."""
    group = heat.resources.get(stack_id, "group").physical_resource_id
    wait_for(lambda: outputs(heat, stack_id)["size"] == size and
             not heat.stacks.get(group).stack_status.endswith("IN_PROGRESS"),
             f"the group at {size}", timeout=60)


def test_an_aodh_event_alarm_scales_the_group_through_its_alarm_url(member, cloud):
    heat, tag = member.heat, f"ao{uuid.uuid4().hex[:6]}"
    listed = {t.resource_type for t in heat.resource_types.list()}
    assert {"OS::Aodh::EventAlarm", "OS::Aodh::CompositeAlarm"} <= listed  # alarming is here
    assert "OS::Aodh::CombinationAlarm" not in listed  # Heat 27's hidden placeholder
    event_type = f"heatweb.test.{tag}"
    stack_id = heat.stacks.create(stack_name=tag, template=TEMPLATE,
                                  parameters={"event_type": event_type})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    out = outputs(heat, stack_id)
    alarm_id = heat.resources.get(stack_id, "alarm").physical_resource_id
    # The alarm is Aodh's own, in the member's project, calling the policy's signed URL.
    alarm = cloud.alarm.get(f"/alarms/{alarm_id}").json()
    assert alarm["type"] == "event" and alarm["project_id"] == cloud.current_project_id
    assert alarm["alarm_actions"] == [out["alarm_url"]] and "/webhooks/signal/" in \
        out["alarm_url"]
    assert alarm["event_rule"] == {"event_type": event_type, "query": [
        {"field": "traits.reason", "op": "eq", "value": "load", "type": "string"}]}
    assert out["alarm"]["alarm_id"] == alarm_id and out["size"] == 1
    others = {name: heat.resources.get(stack_id, name).physical_resource_id
              for name in ("prometheus", "composite")}
    prometheus = cloud.alarm.get(f"/alarms/{others['prometheus']}").json()
    assert (prometheus["type"], prometheus["severity"], prometheus["name"]) == \
        ("prometheus", "moderate", f"{tag}-prometheus")
    assert prometheus["prometheus_rule"] == {"query": "avg(cpu_usage)", "threshold": 80.0,
                                             "comparison_operator": "gt"}
    composite = cloud.alarm.get(f"/alarms/{others['composite']}").json()
    assert composite["type"] == "composite" and list(composite["composite_rule"]) == ["or"]
    assert [(r["type"], r["metric"], r["resource_id"]) for r in
            composite["composite_rule"]["or"]] == [
        ("gnocchi_resources_threshold", metric, stack_id) for metric in ("cpu", "memory.usage")]
    project = cloud.current_project_id

    # An event the query does not match leaves the alarm alone; one it matches fires it.
    idle = fire(event_type, project, reason="idle")
    load = fire(event_type, project)
    grown_to(heat, stack_id, 2)
    assert cloud.alarm.get(f"/alarms/{alarm_id}").json()["state"] == "alarm"
    history = " ".join(h["detail"] for h in cloud.alarm.get(f"/alarms/{alarm_id}/history")
                       .json() if h["type"] == "state transition")
    assert f"Event <id={load}," in history and idle not in history

    # Suspend disables the alarm in Aodh, resume enables it, as Heat.
    heat.actions.suspend(stack_id)
    wait_stack(heat, stack_id, "SUSPEND_COMPLETE")
    for made in (alarm_id, *others.values()):
        assert cloud.alarm.get(f"/alarms/{made}").json()["enabled"] is False
    heat.actions.resume(stack_id)
    wait_stack(heat, stack_id, "RESUME_COMPLETE")
    for made in (alarm_id, *others.values()):
        assert cloud.alarm.get(f"/alarms/{made}").json()["enabled"] is True

    # An update changes the alarm in place in Aodh; the next events are of the new type.
    event_type = f"heatweb.test.{tag}.v2"
    heat.stacks.update(stack_id, existing=True, parameters={"event_type": event_type})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "alarm").physical_resource_id == alarm_id
    updated = cloud.alarm.get(f"/alarms/{alarm_id}").json()
    assert updated["event_rule"]["event_type"] == event_type and updated["enabled"] is True

    # Locked allowing signals: Aodh's call scales the group and the lock holds.
    member.action(tag, stack_id, {"lock": {"level": "stacks", "allow": ["signal"]},
                                  "reason": "alarms still scale"})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    fire(event_type, project)
    grown_to(heat, stack_id, 3)
    assert heat.stacks.get(stack_id).stack_status == "LOCK_COMPLETE"
    member.action(tag, stack_id, {"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")

    # Locked without modes: Aodh's call is answered and ignored, with an event.
    member.action(tag, stack_id, {"lock": {"level": "stacks"}, "reason": "frozen"})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    fire(event_type, project)
    wait_for(lambda: any("signal ignored: stack is locked" in (e.resource_status_reason or "")
                         for e in heat.events.list(stack_id, resource_name="scale_out")),
             "the ignored signal's event", timeout=60)
    assert outputs(heat, stack_id)["size"] == 3
    member.action(tag, stack_id, {"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    for made in (alarm_id, *others.values()):
        assert cloud.alarm.get(f"/alarms/{made}").status_code == 404

