"""Hooks (breakpoints) through python-heatclient against the live service.

The environment's ``resource_registry: {resources: {name: {hooks: ...}}}``
pauses the traversal at that resource with Heat's events; a signal
``{"unset_hook": ...}`` clears it. ``openstack stack hook poll`` and
``stack hook clear`` are python-heatclient's own code (its OSC plugin's
``_hook_poll``/``_hook_clear`` and ``heat hook-poll``/``hook-clear``), run
here against the service.
"""
import argparse
import copy
import json
import subprocess
import time
import uuid

import pytest
import yaml
from heatclient import exc as heat_exc
from heatclient.osc.v1.stack import _hook_clear, _hook_poll

from tests.conftest import BIN
from tests.live.test_stack_lifecycle import wait_deleted, wait_stack

pytestmark = pytest.mark.live

CHAIN = {"heat_template_version": "2014-10-16", "resources": {
    "foo_step1": {"type": "OS::Heat::RandomString"},
    "foo_step2": {"type": "OS::Heat::RandomString", "depends_on": "foo_step1"},
    "foo_step3": {"type": "OS::Heat::RandomString", "depends_on": "foo_step2"}}}


def hooks_env(resources):
    return {"resource_registry": {"resources": resources}}


@pytest.fixture(scope="module")
def heat(live_service):
    return live_service.heat()


def create(hc, template=CHAIN, *, env=None, files=None):
    name = f"hk{uuid.uuid4().hex[:8]}"
    stack_id = hc.stacks.create(stack_name=name, template=copy.deepcopy(template),
                                environment=env or {}, files=files or {})["stack"]["id"]
    return name, f"{name}/{stack_id}"


def events_with(hc, stack_id, reason, resource_name, *, count=1, timeout=60):
    """The resource's events with ``reason``, once there are ``count`` of them."""
    deadline = time.monotonic() + timeout
    found = []
    while time.monotonic() < deadline:
        try:
            found = [e for e in hc.events.list(stack_id, resource_name=resource_name)
                     if e.resource_status_reason == reason]
        except heat_exc.HTTPNotFound:
            found = []  # no event of the resource yet
        if len(found) >= count:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{resource_name}: {len(found)} events {reason!r}, wanted {count}")


def status(hc, stack_id, name):
    return hc.resources.get(stack_id, name).resource_status


def poll(hc, stack, depth=None):
    """``openstack stack hook poll STACK [--nested-depth N]``: {(stack name, resource): status}."""
    columns, rows = _hook_poll(argparse.Namespace(stack=stack, nested_depth=depth), hc)
    rows = [dict(zip(columns, row)) for row in rows]
    return {(row.get("Stack Name", stack.split("/")[0]), row["Resource Name"]):
            (row["Resource Status"], row["Resource Status Reason"]) for row in rows}


def clear(hc, stack, *hooks, hook_type=None):
    """``openstack stack hook clear [--pre-create|...] STACK RESOURCE...``."""
    _hook_clear(argparse.Namespace(stack=stack, hook=list(hooks),
                                   pre_create=hook_type == "pre-create",
                                   pre_update=hook_type == "pre-update",
                                   pre_delete=hook_type == "pre-delete"), hc)


def paused(hc, stack_id, resource, action="CREATE", hook="pre-create", count=1):
    return events_with(hc, stack_id, f"{action} paused until Hook {hook} is cleared", resource,
                       count=count)


def test_pre_create_pauses_until_cleared(heat):
    name, stack_id = create(heat, env=hooks_env({"foo_step2": {"hooks": "pre-create"}}))
    event = paused(heat, stack_id, "foo_step2")[0]
    assert event.resource_status == "INIT_COMPLETE"
    assert status(heat, stack_id, "foo_step1") == "CREATE_COMPLETE"
    assert status(heat, stack_id, "foo_step2") == "INIT_COMPLETE"
    assert status(heat, stack_id, "foo_step3") == "INIT_COMPLETE"
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    assert poll(heat, name) == {(name, "foo_step2"): (
        "INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared")}

    clear(heat, name, "foo_step2")
    cleared = events_with(heat, stack_id, "Hook pre-create is cleared", "foo_step2")[0]
    assert cleared.resource_status == "INIT_COMPLETE"
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert status(heat, stack_id, "foo_step3") == "CREATE_COMPLETE"
    # Cleared once: it is not set any more, and a hook that does not exist is refused.
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        heat.resources.signal(stack_id, "foo_step2", data={"unset_hook": "pre-create"})
    assert 'The "pre-create" hook is not defined on RandomString "foo_step2"' in \
        str(raised.value)
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        heat.resources.signal(stack_id, "foo_step2", data={"unset_hook": "pre-crate"})
    assert 'Invalid hook type "pre-crate" for RandomString "foo_step2"' in str(raised.value)


def test_paused_stacks_hold_no_worker(live_service, heat):
    """More paused stacks than the workers have processes, and other stacks still run."""
    env = hooks_env({"foo_step1": {"hooks": "pre-create"}})
    parked = [create(heat, env=env) for _ in range(6)]
    for _, stack_id in parked:
        paused(heat, stack_id, "foo_step1")
    _, free = create(heat)
    wait_stack(heat, free, "CREATE_COMPLETE")
    for name, stack_id in parked:
        assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
        clear(heat, name, "foo_step1")
    for _, stack_id in parked:
        wait_stack(heat, stack_id, "CREATE_COMPLETE")


def test_wildcard_pauses_each_in_turn(heat):
    name, stack_id = create(heat, env=hooks_env({"foo_*": {"hooks": "pre-create"}}))
    for step in ("foo_step1", "foo_step2", "foo_step3"):
        paused(heat, stack_id, step)
        assert set(poll(heat, name)) == {(name, step)}
        clear(heat, name, step, hook_type="pre-create")
        events_with(heat, stack_id, "Hook pre-create is cleared", step)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")


@pytest.mark.parametrize("resources", [
    {"nested": {"foo_step2": {"hooks": "pre-create"}}},
    {"nest*": {"*_step2": {"hooks": ["pre-create"]}}},  # wildcards at both levels
])
def test_nested_stack_resource_hook(heat, resources):
    env = hooks_env(resources)
    template = {"heat_template_version": "2014-10-16",
                "resources": {"nested": {"type": "nested.yaml"}}}
    name, stack_id = create(heat, template, env=env,
                            files={"nested.yaml": yaml.safe_dump(CHAIN)})
    deadline = time.monotonic() + 60
    child = None
    while not child and time.monotonic() < deadline:
        child = heat.resources.get(stack_id, "nested").physical_resource_id
        time.sleep(0.2)
    assert child, "the nested stack was never made"
    event = paused(heat, child, "foo_step2")[0]
    assert event.resource_status == "INIT_COMPLETE"
    assert status(heat, child, "foo_step1") == "CREATE_COMPLETE"
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    assert not poll(heat, name)  # the parent's own resources are not paused
    links = [link for link in heat.resources.get(stack_id, "nested").links
             if link["rel"] == "nested"]
    if links and links[0]["href"].split("/")[-2] != "stacks":
        # --nested-depth reads the nested stack's events through the resource's
        # nested link (/stacks/<name>/<id>), as heatclient does.
        nested_name = links[0]["href"].split("/")[-2]
        assert poll(heat, name, depth="1") == {(nested_name, "foo_step2"): (
            "INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared")}
    # heatclient's path form: the hook of nested/foo_step2 is cleared on the nested stack.
    clear(heat, name, "nested/foo_step2")
    events_with(heat, child, "Hook pre-create is cleared", "foo_step2")
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert status(heat, child, "foo_step3") == "CREATE_COMPLETE"


def test_pre_update_without_change_and_with_replacement(heat):
    env = hooks_env({"foo_step2": {"hooks": "pre-update"}})
    name, stack_id = create(heat, env=env)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")  # an update hook does not pause a create
    before = heat.resources.get(stack_id, "foo_step2").physical_resource_id

    heat.stacks.update(stack_id, template=copy.deepcopy(CHAIN), environment=env)
    event = paused(heat, stack_id, "foo_step2", action="UPDATE", hook="pre-update")[0]
    assert event.resource_status == "CREATE_COMPLETE"
    assert heat.stacks.get(stack_id).stack_status == "UPDATE_IN_PROGRESS"
    assert poll(heat, name) == {(name, "foo_step2"): (
        "CREATE_COMPLETE", "UPDATE paused until Hook pre-update is cleared")}
    clear(heat, name, "foo_step2")
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "foo_step2").physical_resource_id == before

    changed = copy.deepcopy(CHAIN)
    changed["resources"]["foo_step2"]["properties"] = {"length": 10}
    heat.stacks.update(stack_id, template=changed, environment=env)
    paused(heat, stack_id, "foo_step2", action="UPDATE", hook="pre-update", count=2)
    assert set(poll(heat, name)) == {(name, "foo_step2")}
    assert heat.resources.get(stack_id, "foo_step2").physical_resource_id == before
    heat.resources.signal(stack_id, "foo_step2", data={"unset_hook": "pre-update"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    after = heat.resources.get(stack_id, "foo_step2")
    assert after.resource_status == "CREATE_COMPLETE"
    assert after.physical_resource_id != before


def test_pre_delete_pauses_delete(heat):
    name, stack_id = create(heat, env=hooks_env({"foo_step2": {"hooks": "pre-delete"}}))
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.delete(stack_id)
    event = paused(heat, stack_id, "foo_step2", action="DELETE", hook="pre-delete")[0]
    assert event.resource_status == "CREATE_COMPLETE"
    assert status(heat, stack_id, "foo_step1") == "CREATE_COMPLETE"  # waits for its dependent
    assert heat.stacks.get(stack_id).stack_status == "DELETE_IN_PROGRESS"
    assert poll(heat, name) == {(name, "foo_step2"): (
        "CREATE_COMPLETE", "DELETE paused until Hook pre-delete is cleared")}
    clear(heat, name, "foo_step2")
    wait_deleted(heat, stack_id)


def test_delete_of_a_stack_paused_on_create_proceeds(heat):
    _, stack_id = create(heat, env=hooks_env({"foo_step2": {"hooks": "pre-create"}}))
    paused(heat, stack_id, "foo_step2")
    heat.stacks.delete(stack_id)
    wait_deleted(heat, stack_id)


def test_cancel_update_paused_on_a_hook_rolls_back(heat):
    env = hooks_env({"foo_step3": {"hooks": "pre-update"}})
    _, stack_id = create(heat, env=env)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    heat.stacks.update(stack_id, template=copy.deepcopy(CHAIN), environment=env)
    paused(heat, stack_id, "foo_step3", action="UPDATE", hook="pre-update")
    heat.actions.cancel_update(stack_id)
    wait_stack(heat, stack_id, "ROLLBACK_COMPLETE")
    events_with(heat, stack_id, "Failure occurred while waiting.", "foo_step3")
    with pytest.raises(heat_exc.HTTPBadRequest):
        heat.resources.signal(stack_id, "foo_step3", data={"unset_hook": "pre-update"})


def test_post_create_pauses_after_the_resource_is_made(heat):
    name, stack_id = create(heat, env=hooks_env({"foo_step1": {"hooks": ["post-create"]}}))
    event = paused(heat, stack_id, "foo_step1", hook="post-create")[0]
    assert event.resource_status == "CREATE_COMPLETE"
    assert status(heat, stack_id, "foo_step2") == "INIT_COMPLETE"
    heat.resources.signal(stack_id, "foo_step1", data={"unset_hook": "post-create"})
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    assert status(heat, stack_id, "foo_step3") == "CREATE_COMPLETE"


def test_an_unknown_hook_in_the_environment_is_refused(heat):
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        create(heat, env=hooks_env({"foo_step2": {"hooks": "pre-sleep"}}))
    assert 'Invalid hook type "pre-sleep" for resource breakpoint' in str(raised.value)


def test_hook_clear_to_a_locked_stack_is_refused_by_the_door(heat):
    _, stack_id = create(heat)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    heat.http_client.post(f"/stacks/{stack_id}/actions", data={"lock": {"level": "stacks"}})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict) as refused:
        heat.resources.signal(stack_id, "foo_step2", data={"unset_hook": "pre-create"})
    assert "is locked at level stacks" in str(refused.value)
    ignored = [e for e in heat.events.list(stack_id, resource_name="foo_step2")
               if e.resource_status_reason.startswith("signal ignored: stack is locked")]
    assert len(ignored) == 1


def openstack(live_service, info, *args):
    """``openstack ARGS`` (python-heatclient's OSC plugin) with the tenant's token."""
    done = subprocess.run(
        [str(BIN / "openstack"), "--os-auth-type", "admin_token", "--os-endpoint",
         info["endpoint"], "--os-token", info["token"], *args],
        capture_output=True, text=True, timeout=120, env=live_service.env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_openstack_stack_hook_poll_and_clear(live_service):
    info = live_service.issue_token(f"hk-{uuid.uuid4().hex[:6]}", f"hkp-{uuid.uuid4().hex[:6]}")
    from heatclient import client

    hc = client.Client("1", endpoint=info["endpoint"], token=info["token"])
    name, stack_id = create(hc, env=hooks_env({"foo_step2": {"hooks": "pre-create"}}))
    paused(hc, stack_id, "foo_step2")
    rows = json.loads(openstack(live_service, info, "stack", "hook", "poll", name, "-f", "json"))
    assert [(r["Resource Name"], r["Resource Status"], r["Resource Status Reason"])
            for r in rows] == [("foo_step2", "INIT_COMPLETE",
                                "CREATE paused until Hook pre-create is cleared")]
    openstack(live_service, info, "stack", "hook", "clear", "--pre-create", name, "foo_step2")
    wait_stack(hc, stack_id, "CREATE_COMPLETE")


def test_pre_update_of_a_group_updated_in_place(heat):
    env = hooks_env({"rg": {"hooks": "pre-update"}})
    template = {"heat_template_version": "2014-10-16", "resources": {"rg": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 1, "resource_def": {"type": "OS::Heat::RandomString"}}}}}
    name, stack_id = create(heat, template, env=env)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    before = heat.resources.get(stack_id, "rg").physical_resource_id
    template["resources"]["rg"]["properties"]["count"] = 2
    heat.stacks.update(stack_id, template=template, environment=env)
    event = paused(heat, stack_id, "rg", action="UPDATE", hook="pre-update")[0]
    assert event.resource_status == "CREATE_COMPLETE"
    clear(heat, name, "rg")
    events_with(heat, stack_id, "Hook pre-update is cleared", "rg")
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert heat.resources.get(stack_id, "rg").physical_resource_id == before
    assert len(heat.resources.list(heat.resources.get(stack_id, "rg").physical_resource_id)) == 2


def test_post_update_and_post_delete(heat):
    env = hooks_env({"foo_step1": {"hooks": ["post-update", "post-delete"]}})
    template = copy.deepcopy(CHAIN)
    template["resources"]["foo_step1"] = {"type": "OS::Heat::Value",
                                          "properties": {"value": "old"}}
    name, stack_id = create(heat, template, env=env)
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    template["resources"]["foo_step1"]["properties"]["value"] = "new"  # updated in place
    heat.stacks.update(stack_id, template=template, environment=env)
    event = paused(heat, stack_id, "foo_step1", action="UPDATE", hook="post-update")[0]
    assert event.resource_status == "UPDATE_COMPLETE"
    heat.resources.signal(stack_id, "foo_step1", data={"unset_hook": "post-update"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    heat.stacks.delete(stack_id)
    event = paused(heat, stack_id, "foo_step1", action="DELETE", hook="post-delete")[0]
    assert event.resource_status == "DELETE_COMPLETE"
    heat.resources.signal(stack_id, "foo_step1", data={"unset_hook": "post-delete"})
    wait_deleted(heat, stack_id)
