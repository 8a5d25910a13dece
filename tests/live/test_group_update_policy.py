"""Groups' update policies through python-heatclient against the live service: a
ResourceGroup's rolling update and batched create, an auto scaling group's rolling update,
and update policies Heat refuses (400). Batches are read from the member stack's events."""
import datetime

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import create, hc, wait_stack  # noqa: F401

pytestmark = pytest.mark.live

MEMBER = {"type": "OS::Heat::TestResource",
          "properties": {"value": {"get_param": "value"}, "wait_secs": 1}}


def group_template(policy, count=6):
    return {"heat_template_version": "2016-10-14",
            "parameters": {"value": {"type": "string", "default": "one"}},
            "resources": {"group": {"type": "OS::Heat::ResourceGroup", "update_policy": policy,
                                    "properties": {"count": count, "resource_def": MEMBER}}},
            "outputs": {"values": {"value": {"get_attr": ["group", "output"]}}}}


def member_events(hc, stack_id, group, action):
    """The members' ``action`` events, oldest first: ``[(name, status, time)]``."""
    child = hc.resources.get(stack_id, group).physical_resource_id
    events = [e for e in hc.events.list(child, sort_dir="asc")
              if e.resource_status.startswith(action + "_") and e.resource_name.isdigit()
              or e.resource_status.startswith(action + "_") and e.resource_name[1:].isdigit()]
    return [(e.resource_name, e.resource_status.split("_", 1)[1], e.event_time) for e in events]


def batches_of(events):
    """Members grouped by batch: a batch ends when no member is in progress any more.
    Also the most members in progress at once."""
    batches, running, current, most = [], set(), [], 0
    for name, status, _ in events:
        if status == "IN_PROGRESS":
            running.add(name)
            current.append(name)
            most = max(most, len(running))
        elif status in ("COMPLETE", "FAILED"):
            running.discard(name)
            if not running:
                batches.append(current)
                current = []
    return batches, most


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def updated_group(hc, policy):
    """A group of 6 with ``policy``, created, then updated to a new value everywhere."""
    _, sid = create(hc, group_template(policy))
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=group_template(policy), parameters={"value": "two"})
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE", timeout=120)
    assert outputs_of(stack)["values"] == ["two"] * 6
    return sid


def test_rolling_update_of_a_resource_group_in_batches_with_pauses(hc):
    policy = {"rolling_update": {"max_batch_size": 2, "pause_time": 2}}
    sid = updated_group(hc, policy)
    events = member_events(hc, sid, "group", "UPDATE")
    batches, most = batches_of(events)
    assert most == 2
    assert [sorted(b) for b in batches] == [["4", "5"], ["2", "3"], ["0", "1"]]
    # Between two batches the group paused: the next batch began at least a second later
    # (the event times are whole seconds; the pause is 2 s).
    ends = [max(t for n, s, t in events if n in batch and s == "COMPLETE") for batch in batches]
    starts = [min(t for n, s, t in events if n in batch and s == "IN_PROGRESS")
              for batch in batches]
    assert all(seconds_between(end, start) >= 1 for end, start in zip(ends, starts[1:]))


def test_rolling_update_keeps_min_in_service(hc):
    """With 5 of 6 to keep in service and batches of 2, a member is added for the time of
    the update (as Heat's batches: capacity 7), and removed at the end."""
    policy = {"rolling_update": {"max_batch_size": 2, "min_in_service": 5}}
    sid = updated_group(hc, policy)
    child = hc.resources.get(sid, "group").physical_resource_id
    assert sorted(r.resource_name for r in hc.resources.list(child)) == \
        ["0", "1", "2", "3", "4", "5"]
    created = [n for n, s, _ in member_events(hc, sid, "group", "CREATE")
               if s == "COMPLETE"]
    assert created[-1:] == ["6"]  # the extra member, made during the update
    deleted = [n for n, s, _ in member_events(hc, sid, "group", "DELETE") if s == "COMPLETE"]
    assert deleted == ["6"]
    updates, most = batches_of(member_events(hc, sid, "group", "UPDATE"))
    # Never more than 7 - 5 members changing at once (the extra one was made, not updated).
    assert most <= 2 and sorted(n for b in updates for n in b) == ["0", "1", "2", "3", "4", "5"]


def test_batch_create(hc):
    policy = {"batch_create": {"max_batch_size": 2, "pause_time": 1}}
    _, sid = create(hc, group_template(policy, count=5))
    stack = wait_stack(hc, sid, "CREATE_COMPLETE", timeout=120)
    assert outputs_of(stack)["values"] == ["one"] * 5
    child = hc.resources.get(sid, "group").physical_resource_id
    events = [e for e in hc.events.list(child, sort_dir="asc")
              if e.resource_name.isdigit() and e.resource_status.startswith("CREATE_")]
    batches, most = batches_of([(e.resource_name, e.resource_status.split("_", 1)[1],
                                 e.event_time) for e in events])
    assert most == 2
    assert [sorted(b) for b in batches] == [["0", "1"], ["2", "3"], ["4"]]


def asg_template(value):
    return {"heat_template_version": "2016-10-14",
            "resources": {"asg": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                "min_size": 4, "max_size": 6,
                "rolling_updates": {"max_batch_size": 2, "min_in_service": 2},
                "resource": {"type": "OS::Heat::TestResource",
                             "properties": {"value": value, "wait_secs": 1}}}}},
            "outputs": {"values": {"value": {"get_attr": ["asg", "outputs_list", "output"]}}}}


def test_auto_scaling_group_rolling_update(hc):
    _, sid = create(hc, asg_template("one"))
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=asg_template("two"))
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE", timeout=120)
    assert outputs_of(stack)["values"] == ["two"] * 4
    batches, most = batches_of(member_events(hc, sid, "asg", "UPDATE"))
    assert most == 2
    assert [sorted(b) for b in batches] == [["m0", "m1"], ["m2", "m3"]]  # oldest first


@pytest.mark.parametrize("resource, message", [
    ({"type": "OS::Heat::ResourceGroup", "update_policy": {"rolling_update": {"bogus": 1}},
      "properties": {"resource_def": {"type": "OS::Heat::None"}}},
     "Property error: resources.r.update_policy.rolling_update: Unknown Property bogus"),
    ({"type": "OS::Heat::ResourceGroup",
      "update_policy": {"rolling_update": {"max_batch_size": 0}},
      "properties": {"resource_def": {"type": "OS::Heat::None"}}},
     "Property error: resources.r.update_policy.rolling_update.max_batch_size: "
     "0 is out of range (min: 1, max: None)"),
    ({"type": "OS::Heat::ResourceGroup",
      "update_policy": {"batch_create": {"pause_time": -1}},
      "properties": {"resource_def": {"type": "OS::Heat::None"}}},
     "Property error: resources.r.update_policy.batch_create.pause_time: "
     "-1 is out of range (min: 0, max: None)"),
    ({"type": "OS::Heat::ResourceGroup",
      "update_policy": {"rolling_update": {"min_in_service": "many"}},
      "properties": {"resource_def": {"type": "OS::Heat::None"}}},
     "Property error: resources.r.update_policy.rolling_update.min_in_service: "
     "\"many\" is not an integer"),
    ({"type": "OS::Heat::None", "update_policy": {"rolling_update": {}}},
     "Property error: resources.r.update_policy: Unknown Property rolling_update"),
    ({"type": "OS::Heat::AutoScalingGroup", "update_policy": {"rolling_update": {}},
      "properties": {"min_size": 1, "max_size": 2, "resource": {"type": "OS::Heat::None"}}},
     "Property error: resources.r.update_policy: Unknown Property rolling_update"),
])
def test_bad_update_policies_are_refused(hc, resource, message):
    template = {"heat_template_version": "2016-10-14", "resources": {"r": resource}}
    with pytest.raises(heat_exc.HTTPBadRequest) as caught:
        create(hc, template)
    assert message in str(caught.value)
    assert not [s for s in hc.stacks.list() if s.stack_status.startswith("CREATE")
                and s.stack_name.startswith("bad")]


def cfn_group_template(group_type, policy):
    """A CloudFormation-style group of 3 servers of a launch configuration whose
    InstanceType is a parameter (changing it replaces the configuration)."""
    if group_type == "OS::Heat::InstanceGroup":
        sizes = {"Size": 3}
    else:
        sizes = {"MinSize": 3, "MaxSize": 3, "DesiredCapacity": 3}
    return {"heat_template_version": "2016-10-14",
            "parameters": {"flavor": {"type": "string", "default": "m1.tiny"}},
            "resources": {
                "config": {"type": "AWS::AutoScaling::LaunchConfiguration", "properties": {
                    "ImageId": "cirros", "InstanceType": {"get_param": "flavor"}}},
                "group": {"type": group_type, "update_policy": policy, "properties": {
                    "AvailabilityZones": ["nova"],
                    "LaunchConfigurationName": {"get_resource": "config"}, **sizes}}}}


def member_flavors(hc, stack_id):
    child = hc.resources.get(stack_id, "group").physical_resource_id
    return {r.resource_name: hc.resources.get(child, r.resource_name).attributes.get("show", {})
            .get("flavor") for r in hc.resources.list(child)}


@pytest.mark.parametrize("group_type, key, oldest", [
    ("AWS::AutoScaling::AutoScalingGroup", "AutoScalingRollingUpdate", ["m0", "m1"]),
    ("OS::Heat::InstanceGroup", "RollingUpdate", ["0", "1"]),
])
def test_cfn_groups_roll_a_new_launch_configuration_out(hc, group_type, key, oldest):
    """MaxBatchSize 2, MinInstancesInService 1, of 3: the two oldest, a pause, the third.

    (A simulated server's resize is done at once, so the members of a batch are not seen
    in progress together here; the ResourceGroup and AutoScalingGroup tests show that.)
    """
    policy = {key: {"MaxBatchSize": 2, "MinInstancesInService": 1, "PauseTime": "PT2S"}}
    _, sid = create(hc, cfn_group_template(group_type, policy))
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=cfn_group_template(group_type, policy),
                     parameters={"flavor": "m1.small"})
    wait_stack(hc, sid, "UPDATE_COMPLETE", timeout=120)
    events = member_events(hc, sid, "group", "UPDATE")
    done = [(name, at) for name, status, at in events if status == "COMPLETE"]
    assert sorted(name for name, _ in done[:2]) == oldest and len(done) == 3
    third_start = min(at for name, status, at in events
                      if name == done[2][0] and status == "IN_PROGRESS")
    assert seconds_between(done[1][1], third_start) >= 1  # the 2 s pause (whole seconds)


def seconds_between(earlier, later):
    parse = datetime.datetime.fromisoformat
    return (parse(later.replace("Z", "+00:00")) - parse(earlier.replace("Z", "+00:00"))) \
        .total_seconds()


def test_pauses_longer_than_the_stack_timeout_fail_the_update(hc):
    """As Heat: pauses that alone outlast the stack's timeout fail the group's update."""
    policy = {"rolling_update": {"max_batch_size": 1, "pause_time": 40}}
    _, sid = create(hc, group_template(policy, count=3), timeout_mins=1)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=group_template(policy, count=3),
                     parameters={"value": "two"}, timeout_mins=1)
    stack = wait_stack(hc, sid, "UPDATE_FAILED")
    assert "ValueError: resources.group: The current update policy will result in stack " \
        "update timeout." in stack.stack_status_reason
