"""Issue 36: Mistral's ``OS::Mistral::Workflow``, ``CronTrigger``, ``ExternalResource`` and
Zaqar's ``MistralTrigger`` through python-heatclient against the live service on the
simulated cloud: a workflow made in the simulated Mistral, a signal (the API's or its
``alarm_url``) runs an execution that completes, refused under a lock as docs/locking.md
says; cron triggers made, replaced and deleted; an external resource's CREATE, UPDATE
and DELETE workflows run; updates in place or replacements as Heat's; delete leaves
nothing. (tests/openstack/test_openstack_mistral.py runs them against the real Mistral.)
"""
import json
import uuid
from pathlib import Path

import pytest
import requests
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_resource_types_cloud import outputs, physical_ids
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

# Heat 27.0.1's resource_type show of these types (its engine's resource_schema, from
# openstack-heat 27.0.1 in /tmp/heat27-schema/venv, the venv scripts/heat-yardstick-up
# builds).
HEAT27 = json.loads((Path(__file__).parent / "heat27" / "mistral_schema.json").read_text())

WORKFLOW = """
heat_template_version: 2016-10-14
parameters:
  name: {type: string}
  description: {type: string, default: first}
resources:
  wf:
    type: OS::Mistral::Workflow
    properties:
      name: {get_param: name}
      type: direct
      description: {get_param: description}
      input: {msg: hello}
      output: {said: <% $.said %>}
      tasks:
        - name: say
          action: std.echo output=<% $.msg %>
          publish: {said: <% task().result %>}
outputs:
  data: {value: {get_attr: [wf, data]}}
  alarm_url: {value: {get_attr: [wf, alarm_url]}}
  show: {value: {get_attr: [wf, show]}}
"""

SCHEDULED = """
heat_template_version: 2016-10-14
parameters:
  thing: {type: string, default: alpha}
  size: {type: number, default: 1}
  pattern: {type: string, default: "0 3 * * *"}
resources:
  maker:
    type: OS::Mistral::Workflow
    properties:
      type: direct
      input: {thing: "", size: 0}
      output: {resource_id: <% $.thing %>, size: <% $.size %>}
      tasks:
        - {name: make, action: std.noop}
  nightly:
    type: OS::Mistral::CronTrigger
    properties:
      pattern: {get_param: pattern}
      workflow: {name: {get_resource: maker}, input: {thing: cron, size: 0}}
  thing:
    type: OS::Mistral::ExternalResource
    properties:
      actions:
        CREATE: {workflow: {get_resource: maker}}
        UPDATE: {workflow: {get_resource: maker}}
        DELETE: {workflow: {get_resource: maker}}
      input: {thing: {get_param: thing}, size: {get_param: size}}
      replace_on_change_inputs: [thing]
  refresher:
    type: OS::Mistral::ExternalResource
    properties:
      actions:
        CREATE: {workflow: {get_resource: maker}}
        UPDATE: {workflow: {get_resource: maker}}
      input: {thing: refresh, size: 0}
      always_update: true
  queue:
    type: OS::Zaqar::Queue
  trigger:
    type: OS::Zaqar::MistralTrigger
    properties:
      queue_name: {get_resource: queue}
      workflow_id: {get_resource: maker}
      input: {thing: queued, size: 5}
outputs:
  next: {value: {get_attr: [nightly, next_execution_time]}}
  output: {value: {get_attr: [thing, output]}}
  trigger: {value: {get_attr: [trigger, show]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"wf-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


RUNS = ("runs = lambda w: [c.object_get('workflow_execution', i) for i in "
        "c.object_search('workflow_execution', workflow_name=w)]\n")


def _executions(live_service, workflow, before=""):
    """The executions of ``workflow`` as the simulated Mistral keeps them (after running
    ``before`` in the same process)."""
    return cloud(live_service, f"{RUNS}{before}\nprint(json.dumps(runs({workflow!r})))")


def _get(live_service, kind, object_id):
    return cloud(live_service, f"print(json.dumps(c.object_get({kind!r}, {object_id!r})))")


def _action(hc, stack_id, body):
    resp = hc.http_client.post(f"/stacks/{hc.stacks.get(stack_id).stack_name}/{stack_id}"
                               f"/actions", data=body)
    assert resp.status_code == 200


def test_a_workflow_runs_when_signalled_updates_and_is_replaced(hc, live_service):
    name = f"wf-{uuid.uuid4().hex[:8]}"
    hc.stacks.validate(template=WORKFLOW, parameters={"name": name})
    _, stack_id = create(hc, WORKFLOW, parameters={"name": name})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert physical_ids(hc, stack_id)["wf"] == name
    assert out["data"] == {"name": name, "input": {"msg": "hello"}}
    assert "/webhooks/signal/" in out["alarm_url"]
    made = _get(live_service, "workflow", name)
    assert "std.echo output=<% $.msg %>" in made["definition"] and made["input"] == "msg"

    # A signal starts an execution with the signal's input over the template's.
    hc.resources.signal(stack_id, "wf", data={"input": {"msg": "hi"}})
    # The alarm_url (no token) starts one with the template's input.
    assert requests.post(out["alarm_url"], json={}).status_code == 200
    runs = _executions(live_service, name)
    assert sorted((r["state"], r["output"]["said"]) for r in runs) == \
        [("SUCCESS", "hello"), ("SUCCESS", "hi")]
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.resources.signal(stack_id, "wf", data={"input": {"who": "me"}})
    assert "Unknown input who" in str(raised.value)

    # Locked (docs/locking.md): the API's signal is refused (409), the signed URL's is
    # answered 200 and not acted on; allowed signals run.
    _action(hc, stack_id, {"lock": {"level": "stacks"}, "reason": "frozen"})
    wait_stack(hc, stack_id, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict) as raised:
        hc.resources.signal(stack_id, "wf")
    assert "locked" in str(raised.value)
    assert requests.post(out["alarm_url"], json={}).status_code == 200
    assert len(_executions(live_service, name)) == 2
    _action(hc, stack_id, {"unlock": None})
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")

    # The description updates the workflow in place; a new name replaces it.
    hc.stacks.update(stack_id, template=WORKFLOW, parameters={"name": name,
                                                              "description": "second"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert physical_ids(hc, stack_id)["wf"] == name
    assert "description: second" in _get(live_service, "workflow", name)["definition"]
    renamed = f"{name}-b"
    hc.stacks.update(stack_id, template=WORKFLOW, parameters={"name": renamed})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert physical_ids(hc, stack_id)["wf"] == renamed
    # The replaced workflow went with its executions.
    assert cloud(live_service, f"{RUNS}print(json.dumps([c.object_get('workflow', {name!r}), "
                               f"runs({name!r})]))") == [None, []]

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert _get(live_service, "workflow", renamed) is None


def test_cron_trigger_external_resource_and_zaqar_trigger(hc, live_service):
    stack_name, stack_id = create(hc, SCHEDULED)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = physical_ids(hc, stack_id)
    out = outputs(hc, stack_id)
    assert out["next"].endswith("03:00:00")
    trigger = _get(live_service, "cron_trigger", ids["nightly"])
    assert (trigger["pattern"], trigger["workflow_name"], trigger["workflow_input"]) == \
        ("0 3 * * *", ids["maker"], {"thing": "cron", "size": 0})
    # The external resource's CREATE workflow ran: its output's resource_id is its id.
    assert ids["thing"] == "alpha"
    assert json.loads(out["output"]) == {"resource_id": "alpha", "size": 1}
    assert out["trigger"]["subscriber"] == \
        "trust+https://workflow.simulated/v2/executions"
    # A message on the queue starts the workflow (Zaqar's notifier POSTing to Mistral).
    runs = _executions(live_service, ids["maker"],
                       before=f"c.queue_post({ids['queue']!r}, [{{'event': 'ping'}}])")
    queued = [r for r in runs if r["input"] == {"thing": "queued", "size": 5}]
    assert [r["params"]["env"]["notification"] for r in queued] == [{"event": "ping"}]

    # size: the UPDATE workflow runs in place; a new pattern replaces the trigger.
    hc.stacks.update(stack_id, template=SCHEDULED,
                     parameters={"size": 2, "pattern": "30 4 * * 1"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    after = physical_ids(hc, stack_id)
    assert after["thing"] == "alpha" and after["nightly"] != ids["nightly"]
    assert json.loads(outputs(hc, stack_id)["output"]) == {"resource_id": "alpha", "size": 2}
    assert _get(live_service, "cron_trigger", ids["nightly"]) is None
    # thing (in replace_on_change_inputs): replaced; the old one's DELETE workflow ran.
    hc.stacks.update(stack_id, template=SCHEDULED,
                     parameters={"thing": "beta", "size": 2, "pattern": "30 4 * * 1"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert physical_ids(hc, stack_id)["thing"] == "beta"
    inputs = [r["input"] for r in _executions(live_service, ids["maker"])
              if r["input"].get("thing") in ("alpha", "beta")]
    # CREATE alpha, UPDATE alpha size 2, CREATE beta, DELETE alpha (with its last input)
    assert sorted(inputs, key=str) == sorted([{"thing": "alpha", "size": 1},
                                              {"thing": "alpha", "size": 2},
                                              {"thing": "beta", "size": 2},
                                              {"thing": "alpha", "size": 2}], key=str)
    # always_update: its UPDATE workflow ran on each stack update, its input unchanged.
    assert [r["input"] for r in _executions(live_service, ids["maker"])].count(
        {"thing": "refresh", "size": 0}) == 3

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    left = cloud(live_service, f"print(json.dumps([c.object_get('workflow', {ids['maker']!r}), "
                               f"c.object_get('cron_trigger', {after['nightly']!r})]))")
    assert left == [None, None]


def test_heats_checks_at_validate_and_the_types_described(hc):
    bad_cron = {"heat_template_version": "2016-10-14", "resources": {"t": {
        "type": "OS::Mistral::CronTrigger",
        "properties": {"pattern": "every day", "workflow": {"name": "x"}}}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template=bad_cron)
    assert "Invalid CRON expression" in str(raised.value)
    both = {"heat_template_version": "2016-10-14", "resources": {"w": {
        "type": "OS::Mistral::Workflow", "properties": {"type": "direct", "tasks": [
            {"name": "a", "action": "std.noop", "workflow": "other"}]}}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template=both)
    assert "Cannot define the following properties at the same time: workflow, action" in \
        str(raised.value)
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Mistral::Workflow", "OS::Mistral::CronTrigger",
            "OS::Mistral::ExternalResource", "OS::Zaqar::MistralTrigger"} <= listed
    schema = hc.resource_types.get("OS::Mistral::Workflow")
    assert schema["properties"]["name"]["update_allowed"] is False
    assert schema["properties"]["tasks"]["update_allowed"] is True
    assert set(schema["attributes"]) == {"data", "alarm_url", "executions", "show"}


def _trigger(name):
    return {"heat_template_version": "2016-10-14",
            "parameters": {"wf": {"type": "string", "default": name, "constraints": [
                {"custom_constraint": "mistral.workflow"}]}},
            "resources": {"t": {"type": "OS::Mistral::CronTrigger", "properties": {
                "pattern": "0 3 * * *", "workflow": {"name": name, "input": {"msg": "cron"}}}}}}


def test_the_mistral_workflow_constraint_looks_the_workflow_up(hc):
    """Heat's ``WorkflowConstraint``: a parameter's value is looked up in Mistral at
    validate and create, a property's (``workflow.name`` here) at create; a workflow is
    found by its name or its id."""
    name = f"wf-{uuid.uuid4().hex[:8]}"
    _, wf_stack = create(hc, WORKFLOW, parameters={"name": name})
    wait_stack(hc, wf_stack, "CREATE_COMPLETE")
    wf_id = outputs(hc, wf_stack)["show"]["id"]
    assert wf_id != name
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template=_trigger(name), parameters={"wf": "nope"})
    assert "Parameter 'wf' is invalid: Error validating value 'nope': The Workflow (nope) " \
           "could not be found." in str(raised.value)
    missing = _trigger("nope")
    missing["parameters"]["wf"]["default"] = name
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.create(stack_name=f"t-{uuid.uuid4().hex[:6]}", template=missing)
    assert "Property error: resources.t.properties.workflow.name: Error validating value " \
           "'nope': The Workflow (nope) could not be found." in str(raised.value)
    made = []
    for found in (name, wf_id):
        hc.stacks.validate(template=_trigger(found))
        made.append(create(hc, _trigger(found))[1])
    for stack_id in made:
        wait_stack(hc, stack_id, "CREATE_COMPLETE")
        hc.stacks.delete(stack_id)
    for stack_id in made:
        wait_deleted(hc, stack_id)
    hc.stacks.delete(wf_stack)
    wait_deleted(hc, wf_stack)


def _shape(schema):
    """A property schema as a client reads it, nested: type, description, required,
    update_allowed, default, immutable and the constraints' kinds (heatweb writes each
    constraint with ``description: null`` and an unbounded ``max: null``)."""
    out = {key: schema.get(key) for key in ("type", "description", "required", "update_allowed",
                                            "default", "immutable")}
    out["description"] = out["description"] or None  # Heat leaves an empty one out
    out["constraints"] = sorted(next(iter(c)) if next(iter(c)) != "custom_constraint"
                                else c["custom_constraint"]
                                for c in schema.get("constraints") or [])
    out["schema"] = {k: _shape(v) for k, v in (schema.get("schema") or {}).items()}
    return out


@pytest.mark.parametrize("type_name", sorted(HEAT27))
def test_the_schema_is_heat_27s(hc, type_name):
    shown = hc.resource_types.get(type_name)
    heat = HEAT27[type_name]
    assert {k: _shape(v) for k, v in shown["properties"].items()} == \
        {k: _shape(v) for k, v in heat["properties"].items()}
    assert {k: (v.get("type"), v.get("description")) for k, v in shown["attributes"].items()} \
        == {k: (v.get("type"), v.get("description")) for k, v in heat["attributes"].items()}
