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
    properties: {queue_name: {get_resource: queue}, subscriber: "http://127.0.0.1:9/hook",
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
    assert out["hook"]["subscriber"] == "http://127.0.0.1:9/hook"

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


def _as_stack_user(creds):
    """A session logged in with a signal's credentials (as Heat's tests and agents do)."""
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    return session.Session(auth=v3.Password(
        auth_url=creds["auth_url"], user_id=creds["user_id"], password=creds["password"],
        project_id=creds["project_id"]))


def _stack_user(admin_cloud, user_id):
    return admin_cloud.identity.find_user(user_id)


def test_a_zaqar_signal_wait_condition_on_zaqar(member, cloud, admin_cloud):
    """Heat's ZaqarWaitConditionTest on the real Zaqar: the handle's ``signal`` is Heat's
    JSON string naming a stack user (in heatweb's stack user domain, with a role on the
    stack's user project) and its queue; logged in as that user, a message posted to the
    queue completes the wait condition; suspend disables the user, resume enables it;
    delete removes the queue, the user and the project."""
    from tests.live.test_zaqar_types import ZAQAR_WAIT

    heat, name = member.heat, f"zw-{uuid.uuid4().hex[:8]}"
    stack_id = heat.stacks.create(stack_name=name, template=ZAQAR_WAIT)["stack"]["id"]
    deadline = time.monotonic() + 120
    while heat.resources.get(stack_id, "wait_handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(1)
    signal = json.loads(heat.resources.get(stack_id, "wait_handle").attributes["signal"])
    assert set(signal) == {"auth_url", "username", "user_id", "password", "project_id",
                           "domain_id", "region_name", "queue_id"}
    assert signal["username"].startswith(f"{name}-wait_handle-")
    project = admin_cloud.identity.get_project(signal["project_id"])
    domain = admin_cloud.identity.get_domain(project.domain_id)
    assert (project.name, domain.name) == (stack_id, "heatweb_stack_users")
    assert project.id != cloud.current_project_id
    user_session = _as_stack_user(signal)
    endpoint = user_session.get_endpoint(service_type="messaging", interface="public")
    posted = user_session.post(
        f"{endpoint.rstrip('/')}/v2/queues/{signal['queue_id']}/messages"
        if not endpoint.rstrip("/").endswith("/v2") else
        f"{endpoint.rstrip('/')}/queues/{signal['queue_id']}/messages",
        json={"messages": [{"body": {"data": "here!", "id": "data_id"}, "ttl": 600}]},
        headers={"Client-ID": str(uuid.uuid4()), "X-Project-ID": signal["project_id"]})
    assert posted.status_code == 201, posted.text
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
    assert json.loads(out["signal_data"]) == {"data_id": "here!"}
    # The user's password is kept encrypted (Heat's redact=True): the export shows no
    # clear password, yet the password (decrypted) is what the user logs in with.
    exported = heat.stacks.export(stack_id)
    stored = exported["resources"]["wait_handle"]["resource_data"]
    assert stored["user_id"] == signal["user_id"]
    assert stored["password"] and signal["password"] not in json.dumps(exported)
    # Heat's StackUser: the user is disabled while the stack is suspended, then enabled.
    heat.actions.suspend(stack_id)
    wait_stack(heat, stack_id, "SUSPEND_COMPLETE")
    assert _stack_user(admin_cloud, signal["user_id"]).is_enabled is False
    with pytest.raises(Exception, match="401"):
        _as_stack_user(signal).get_token()
    heat.actions.resume(stack_id)
    wait_stack(heat, stack_id, "RESUME_COMPLETE")
    assert _stack_user(admin_cloud, signal["user_id"]).is_enabled is True
    assert _as_stack_user(signal).get_token()
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert _stack_user(admin_cloud, signal["user_id"]) is None
    deadline = time.monotonic() + 30  # the project goes once the delete is committed
    while admin_cloud.identity.find_project(signal["project_id"]) is not None:
        assert time.monotonic() < deadline
        time.sleep(0.5)


ZAQAR_DEPLOYMENT = """
heat_template_version: 2013-05-23
parameters:
  network: {type: string}
resources:
  server:
    type: OS::Nova::Server
    properties:
      image: heatweb-tiny
      flavor: m1.tiny
      user_data_format: SOFTWARE_CONFIG
      software_config_transport: ZAQAR_MESSAGE
      networks: [{network: {get_param: network}}]
  config:
    type: OS::Heat::SoftwareConfig
    properties: {config: echo 'foo'}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: ZAQAR_SIGNAL
outputs:
  data: {value: {get_attr: [deployment, deploy_stdout]}}
"""


def _zaqar_as(creds):
    """(session, messages URL of a queue) as the stack user ``creds`` names."""
    session = _as_stack_user(creds)
    endpoint = session.get_endpoint(service_type="messaging", interface="public").rstrip("/")
    base = endpoint if endpoint.endswith("/v2") else f"{endpoint}/v2"
    headers = {"Client-ID": str(uuid.uuid4()), "X-Project-ID": creds["project_id"]}
    return session, f"{base}/queues/{creds['queue_id']}/messages", headers


def test_zaqar_message_server_and_zaqar_signal_deployment(member, cloud, admin_cloud):
    """Heat's ZaqarSignalTransportTest on the real cloud, as os-collect-config and
    heat-config-notify would: the server's metadata gives its stack user and queue; popped
    as that user, the queue has the metadata of the server's create and then with the
    deployment, whose inputs give the deployment's own stack user and queue; a result
    posted there as that user completes the deployment; delete removes both users."""
    heat, tag = member.heat, f"zd{uuid.uuid4().hex[:6]}"
    net = cloud.network.create_network(name=f"{tag}-net")
    cloud.network.create_subnet(network_id=net.id, cidr="10.44.0.0/24", ip_version=4)
    try:
        stack_id = heat.stacks.create(stack_name=tag, template=ZAQAR_DEPLOYMENT,
                                      parameters={"network": net.id})["stack"]["id"]
        deadline = time.monotonic() + 180
        while not (metadata := heat.resources.metadata(stack_id, "server")).get("deployments"):
            assert time.monotonic() < deadline
            time.sleep(1)
        occ = metadata["os-collect-config"]
        assert occ["collectors"] == ["zaqar", "local"]
        assert set(occ["zaqar"]) == {"user_id", "password", "auth_url", "project_id",
                                     "queue_id", "region_name"}
        session, url, headers = _zaqar_as(occ["zaqar"])
        # The deployment's row is read by the metadata API as soon as it is committed; its
        # message is posted to the queue just after: pop until both are there.
        bodies, deadline = [], time.monotonic() + 60
        while len(bodies) < 2 and time.monotonic() < deadline:
            popped = session.delete(url, params={"pop": 10}, headers=headers)
            bodies += [m["body"] for m in (popped.json() if popped.content else {})
                       .get("messages", [])]
            time.sleep(0.5)
        assert [len(b["deployments"]) for b in bodies] == [0, 1]
        assert all(b["os-collect-config"] == occ for b in bodies)
        inputs = {i["name"]: i["value"] for i in bodies[1]["deployments"][0]["inputs"]}
        creds = {"auth_url": inputs["deploy_auth_url"], "user_id": inputs["deploy_user_id"],
                 "password": inputs["deploy_password"],
                 "project_id": inputs["deploy_project_id"],
                 "queue_id": inputs["deploy_queue_id"]}
        assert inputs["deploy_signal_transport"] == "ZAQAR_SIGNAL"
        assert creds["project_id"] == occ["zaqar"]["project_id"]  # the stack's user project
        session, url, headers = _zaqar_as(creds)
        posted = session.post(url, headers=headers, json={"messages": [
            {"body": {"deploy_stdout": "here!"}, "ttl": 600}]})
        assert posted.status_code == 201, posted.text
        wait_stack(heat, stack_id, "CREATE_COMPLETE")
        out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}
        assert out["data"] == "here!"
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
        for user in (occ["zaqar"]["user_id"], creds["user_id"]):
            assert _stack_user(admin_cloud, user) is None
        deadline = time.monotonic() + 30  # the project goes once the delete is committed
        while admin_cloud.identity.find_project(creds["project_id"]) is not None:
            assert time.monotonic() < deadline
            time.sleep(0.5)
    finally:
        deadline = time.monotonic() + 60
        while list(cloud.network.ports(network_id=net.id)) and time.monotonic() < deadline:
            time.sleep(1)
        cloud.network.delete_network(net.id)
