"""Issue 36: Mistral's types on the real cloud (scripts/cloud/mistral-up's Mistral 23): a
workflow made in Mistral, a signal runs an execution that Mistral's engine and executor
complete (std.echo), refused under a lock; an update in place and a replacement; an
external resource whose CREATE, UPDATE and DELETE workflows Mistral runs; a cron trigger
made by Mistral through the stack's trust and deleted; a Zaqar Mistral trigger whose queue's
message starts the workflow; delete leaves nothing. (The simulated cloud's:
tests/live/test_mistral_types.py.)"""
import json
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.openstack.conftest import wait_for, wait_stack

pytestmark = pytest.mark.openstack

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  name: {type: string}
  description: {type: string, default: first}
  size: {type: number, default: 1}
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
  maker:
    type: OS::Mistral::Workflow
    properties:
      type: direct
      input: {thing: "", size: 0}
      output: {resource_id: <% $.thing %>, size: <% $.size %>}
      tasks:
        - {name: make, action: std.noop}
  thing:
    type: OS::Mistral::ExternalResource
    properties:
      actions:
        CREATE: {workflow: {get_resource: maker}}
        UPDATE: {workflow: {get_resource: maker}}
        DELETE: {workflow: {get_resource: maker}}
      input: {thing: alpha, size: {get_param: size}}
outputs:
  output: {value: {get_attr: [thing, output]}}
"""

CRON = """
heat_template_version: 2018-08-31
parameters:
  workflow: {type: string}
resources:
  nightly:
    type: OS::Mistral::CronTrigger
    properties:
      pattern: "0 3 * * *"
      workflow: {name: {get_param: workflow}, input: {msg: cron}}
outputs:
  next: {value: {get_attr: [nightly, next_execution_time]}}
"""


def _executions(mistral, workflow):
    found = mistral.get("/executions", params={"workflow_name": workflow}).json()
    return found["executions"]


def _done(mistral, workflow, count):
    runs = _executions(mistral, workflow)
    return runs if len(runs) == count and all(r["state"] == "SUCCESS" for r in runs) else None


def test_workflows_executions_and_an_external_resource_on_mistral(member, cloud):
    heat, tag = member.heat, f"mi{uuid.uuid4().hex[:6]}"
    listed = {t.resource_type for t in heat.resource_types.list()}
    assert {"OS::Mistral::Workflow", "OS::Mistral::CronTrigger",
            "OS::Mistral::ExternalResource"} <= listed
    mistral, name = cloud.workflow, f"wf-{tag}"
    stack_id = heat.stacks.create(stack_name=tag, template=TEMPLATE,
                                  parameters={"name": name})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
    made = mistral.get(f"/workflows/{name}").json()
    assert made["input"] == "msg" and made["project_id"] == cloud.current_project_id
    # The external resource's CREATE workflow ran in Mistral: its output is the resource's.
    assert ids["thing"] == "alpha" and json.loads(out["output"]) == {"resource_id": "alpha", "size": 1}

    # A signal: Mistral's engine runs std.echo with the signal's input.
    heat.resources.signal(stack_id, "wf", data={"input": {"msg": "hi"}})
    runs = wait_for(lambda: _done(mistral, name, 1), "the execution's SUCCESS", timeout=60)
    run = mistral.get(f"/executions/{runs[0]['id']}").json()
    assert (json.loads(run["input"]), json.loads(run["output"])) == ({"msg": "hi"}, {"said": "hi"})
    with pytest.raises(heat_exc.HTTPBadRequest):
        heat.resources.signal(stack_id, "wf", data={"input": {"who": "me"}})

    # Locked (docs/locking.md): the API's signal is refused, nothing runs.
    member.action(tag, stack_id, {"lock": {"level": "stacks"}, "reason": "frozen"})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict):
        heat.resources.signal(stack_id, "wf")
    assert len(_executions(mistral, name)) == 1
    member.action(tag, stack_id, {"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")

    # description: the workflow's definition is PUT in place; size runs the UPDATE
    # workflow.
    heat.stacks.update(stack_id, existing=True, parameters={"description": "second",
                                                            "size": 2})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert mistral.get(f"/workflows/{name}").json()["definition"].count("second") == 1
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
    assert json.loads(out["output"]) == {"resource_id": "alpha", "size": 2}
    # A new name replaces the workflow (and deletes the replaced one's executions).
    heat.stacks.update(stack_id, existing=True, parameters={"name": f"{name}-b"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert mistral.get(f"/workflows/{name}").status_code == 404
    assert _executions(mistral, name) == []

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    for gone in (f"{name}-b", ids["maker"]):
        assert mistral.get(f"/workflows/{gone}").status_code == 404


def test_a_cron_trigger_is_made_by_mistral_through_the_stacks_trust(member, cloud):
    """Mistral (auth on) makes a Keystone trust from the caller's token for each cron
    trigger. heatweb calls it through the stack's trust, as Heat does, so that token is
    trust-scoped: the stack's trust lets its trustee redelegate
    (``HEATWEB_TRUSTS_REDELEGATION``, Heat's ``allow_trusts_redelegation``; without it
    Keystone refuses Mistral's trust and the create fails with Mistral's 403). The
    trigger is Mistral's, with its next time; the stack's delete removes it."""
    heat, tag = member.heat, f"mc{uuid.uuid4().hex[:6]}"
    mistral, name = cloud.workflow, f"wf-{tag}"
    definition = (f"version: '2.0'\n{name}:\n  input: [msg]\n  tasks:\n"
                  f"    one: {{action: std.noop}}\n")
    made = mistral.post("/workflows", data=definition.encode(),
                        headers={"Content-Type": "text/plain"})
    assert made.status_code == 201, made.text
    try:
        stack_id = heat.stacks.create(stack_name=tag, template=CRON, disable_rollback=True,
                                      parameters={"workflow": name})["stack"]["id"]
        stack = wait_stack(heat, stack_id, "CREATE_COMPLETE")
        trigger = heat.resources.get(stack_id, "nightly").physical_resource_id
        found = [t for t in mistral.get("/cron_triggers").json()["cron_triggers"]
                 if t["name"] == trigger]
        assert len(found) == 1 and found[0]["workflow_name"] == name
        assert found[0]["pattern"] == "0 3 * * *"
        nxt = {o["output_key"]: o["output_value"] for o in stack.outputs}["next"]
        assert nxt == found[0]["next_execution_time"] and nxt[11:16] == "03:00"
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
        assert not [t for t in mistral.get("/cron_triggers").json()["cron_triggers"]
                    if t["name"] == trigger]
    finally:
        mistral.delete(f"/workflows/{name}")


TRIGGER = """
heat_template_version: 2018-08-31
parameters:
  name: {type: string}
resources:
  queue:
    type: OS::Zaqar::Queue
    properties: {name: {get_param: name}}
  wf:
    type: OS::Mistral::Workflow
    properties:
      name: {get_param: name}
      type: direct
      input: {msg: ""}
      output: {said: <% $.said %>}
      tasks:
        - name: say
          action: std.echo output=<% $.msg %>
          publish: {said: <% task().result %>}
  trigger:
    type: OS::Zaqar::MistralTrigger
    properties:
      queue_name: {get_resource: queue}
      workflow_id: {get_resource: wf}
      input: {msg: queued}
"""


def test_a_zaqar_mistral_trigger_runs_the_workflow_for_each_message(member, cloud):
    """Heat's OS::Zaqar::MistralTrigger: a Zaqar subscription of ``trust+`` Mistral's
    executions. Zaqar makes a trust from heatweb's (trust-scoped) token, which the stack's
    trust lets it redelegate; a message posted to the queue makes Zaqar's notifier start
    the workflow in Mistral with the trigger's input, through a token of that trust."""
    heat, tag = member.heat, f"mt{uuid.uuid4().hex[:6]}"
    mistral, zaqar = cloud.workflow, cloud.message
    stack_id = heat.stacks.create(stack_name=tag, template=TRIGGER,
                                  parameters={"name": tag})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    mine = {"Client-ID": str(uuid.uuid4())}
    subscriptions = zaqar.get(f"/queues/{tag}/subscriptions", headers=mine).json()
    assert [s["subscriber"].endswith("/executions") and s["subscriber"].startswith("trust+")
            for s in subscriptions["subscriptions"]] == [True]
    assert _executions(mistral, tag) == []

    posted = zaqar.post(f"/queues/{tag}/messages", headers=mine,
                        json={"messages": [{"body": {"event": "go"}, "ttl": 300}]})
    assert posted.status_code == 201, posted.text
    runs = wait_for(lambda: _done(mistral, tag, 1), "the trigger's execution", timeout=120)
    run = mistral.get(f"/executions/{runs[0]['id']}").json()
    assert json.loads(run["input"]) == {"msg": "queued"}
    assert json.loads(run["output"]) == {"said": "queued"}
    # Zaqar's message is in the execution's environment, as Heat's post_data asks.
    assert "go" in json.dumps(json.loads(run["params"])["env"]["notification"])

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert mistral.get(f"/workflows/{tag}").status_code == 404
    assert zaqar.get(f"/queues/{tag}/subscriptions", headers=mine).json()[
        "subscriptions"] == []
