"""Issue 36: Zaqar's types on the real cloud (scripts/cloud/zaqar-up's Zaqar): a queue
with metadata, a signed URL whose credentials post messages without a token, which
Zaqar's API then gives the queue's member to read, a subscription, and delete removing
the queue; and a wait condition whose handle's signal transport is ZAQAR_SIGNAL. (The
simulated cloud's: tests/live/test_zaqar_types.py.)"""
import json
import time
import uuid

import pytest
import requests

from stacks.cloud.openstack.messaging import PATCH
from tests.openstack.conftest import wait_stack
from tests.openstack.test_openstack_drift import drift

pytestmark = pytest.mark.openstack

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  queue: {type: string}
resources:
  queue:
    type: OS::Zaqar::Queue
    properties: {name: {get_param: queue}, metadata: {purpose: heatweb-test}}
  url:
    type: OS::Zaqar::SignedQueueURL
    properties: {queue: {get_resource: queue}, methods: [GET, POST], ttl: 3600}
  hook:
    type: OS::Zaqar::Subscription
    properties: {queue_name: {get_resource: queue}, subscriber: "http://192.0.2.1:9/hook",
                 ttl: 3600}
outputs:
  href: {value: {get_attr: [queue, href]}}
  signature: {value: {get_attr: [url, signature]}}
  expires: {value: {get_attr: [url, expires]}}
  paths: {value: {get_attr: [url, paths]}}
  methods: {value: {get_attr: [url, methods]}}
  project: {value: {get_attr: [url, project]}}
  hook: {value: {get_attr: [hook, show]}}
"""


def test_a_queue_and_a_signed_url_on_zaqar(member, cloud):
    heat, name = member.heat, f"q-{uuid.uuid4().hex[:8]}"
    stack_id = heat.stacks.create(stack_name=name, template=TEMPLATE,
                                  parameters={"queue": name})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
    zaqar = cloud.message
    endpoint = zaqar.get_endpoint().rstrip("/")
    assert out["href"] == f"{endpoint}/queues/{name}"
    mine = {"Client-ID": str(uuid.uuid4())}
    assert name in [q["name"] for q in zaqar.get("/queues", headers=mine).json()["queues"]]
    assert zaqar.get(f"/queues/{name}", headers=mine).json()["purpose"] == "heatweb-test"
    assert out["project"] == cloud.current_project_id
    assert (out["paths"], out["methods"]) == ([f"/v2/queues/{name}/messages"], ["GET", "POST"])
    assert out["hook"]["subscriber"] == "http://192.0.2.1:9/hook"

    # Drift: Zaqar's reserved metadata (its defaults) is no drift; a changed key is.
    report = drift(member, stack_id)
    assert {n: r["drift_status"] for n, r in report.items()} == \
        {"queue": "IN_SYNC", "url": "NOT_CHECKED", "hook": "IN_SYNC"}, report
    zaqar.patch(f"/queues/{name}", headers={**mine, **PATCH},
                json=[{"op": "replace", "path": "/metadata/purpose", "value": "other"}])
    assert drift(member, stack_id)["queue"]["differences"] == [
        {"property": "metadata", "expected": {"purpose": "heatweb-test"},
         "actual": {"purpose": "other"}}]

    # The signed URL's credentials post a message with no token ...
    signed = {"URL-Signature": out["signature"], "URL-Expires": out["expires"],
              "URL-Methods": ",".join(out["methods"]), "URL-Paths": ",".join(out["paths"]),
              "X-Project-ID": out["project"], "Client-ID": str(uuid.uuid4())}
    posted = requests.post(f"{endpoint}/queues/{name}/messages", headers=signed, timeout=30,
                           json={"messages": [{"body": {"from": "signed-url"}, "ttl": 300}]})
    assert posted.status_code == 201, posted.text
    # ... which the queue's member reads with Zaqar's API; a forged signature is refused.
    read = zaqar.get(f"/queues/{name}/messages?echo=true", headers=mine).json()["messages"]
    assert [m["body"] for m in read] == [{"from": "signed-url"}]
    forged = requests.post(f"{endpoint}/queues/{name}/messages", timeout=30,
                           headers={**signed, "URL-Signature": "0" * 64},
                           json={"messages": [{"body": "x"}]})
    assert forged.status_code == 404, forged.text  # Zaqar's answer to a bad signature
    assert len(zaqar.get(f"/queues/{name}/messages?echo=true", headers=mine)
               .json()["messages"]) == 1

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert name not in [q["name"] for q in zaqar.get("/queues", headers=mine).json()["queues"]]


def test_a_zaqar_signal_wait_condition_on_zaqar(member, cloud):
    """Heat's ZaqarWaitConditionTest's template on the real Zaqar: the message is posted
    with the handle's ``signal`` credentials (a signed URL: no token)."""
    from tests.live.test_zaqar_types import ZAQAR_WAIT

    heat, name = member.heat, f"zw-{uuid.uuid4().hex[:8]}"
    stack_id = heat.stacks.create(stack_name=name, template=ZAQAR_WAIT)["stack"]["id"]
    deadline = time.monotonic() + 120
    while heat.resources.get(stack_id, "wait_handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(1)
    signal = heat.resources.get(stack_id, "wait_handle").attributes["signal"]
    endpoint = cloud.message.get_endpoint().rstrip("/")
    posted = requests.post(
        f"{endpoint}/queues/{signal['queue_id']}/messages", timeout=30,
        json={"messages": [{"body": {"data": "here!", "id": "data_id"}, "ttl": 600}]},
        headers={"URL-Signature": signal["signature"], "URL-Expires": signal["expires"],
                 "URL-Methods": ",".join(signal["methods"]),
                 "URL-Paths": ",".join(signal["paths"]),
                 "X-Project-ID": signal["project_id"], "Client-ID": str(uuid.uuid4())})
    assert posted.status_code == 201, posted.text
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
    assert json.loads(out["signal_data"]) == {"data_id": "here!"}
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    mine = {"Client-ID": str(uuid.uuid4())}
    assert signal["queue_id"] not in [
        q["name"] for q in cloud.message.get("/queues", headers=mine).json()["queues"]]
