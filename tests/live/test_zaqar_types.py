"""Issue 36: Zaqar's ``OS::Zaqar::Queue``, ``SignedQueueURL`` and ``Subscription`` through
python-heatclient against the live service on the simulated cloud: created with Heat's
attributes, updated in place, Zaqar's refusals as the resource's reason, and delete.
(tests/openstack/test_openstack_zaqar.py runs them against the real Zaqar.)
"""
import json
import time
import uuid
from urllib.parse import parse_qs

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_resource_types_cloud import outputs, physical_ids
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

QUEUE = """
heat_template_version: 2016-10-14
parameters:
  queue: {type: string}
  color: {type: string, default: red}
  ttl: {type: number, default: 3600}
resources:
  queue:
    type: OS::Zaqar::Queue
    properties:
      name: {get_param: queue}
      metadata: {color: {get_param: color}, _default_message_ttl: 300}
  unnamed:
    type: OS::Zaqar::Queue
  url:
    type: OS::Zaqar::SignedQueueURL
    properties:
      queue: {get_resource: queue}
      paths: [messages, subscriptions]
      methods: [GET, POST]
      ttl: 600
  hook:
    type: OS::Zaqar::Subscription
    properties:
      queue_name: {get_resource: queue}
      subscriber: http://127.0.0.1:9/hook
      ttl: {get_param: ttl}
outputs:
  href: {value: {get_attr: [queue, href]}}
  queue_id: {value: {get_attr: [queue, queue_id]}}
  unnamed: {value: {get_resource: unnamed}}
  signature: {value: {get_attr: [url, signature]}}
  expires: {value: {get_attr: [url, expires]}}
  paths: {value: {get_attr: [url, paths]}}
  methods: {value: {get_attr: [url, methods]}}
  project: {value: {get_attr: [url, project]}}
  query_str: {value: {get_attr: [url, query_str]}}
  hook: {value: {get_resource: hook}}
  hook_show: {value: {get_attr: [hook, show]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"zaqar-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def _queue(live_service, name):
    return cloud(live_service, f"print(json.dumps(c.object_get('queue', {name!r})))")


def test_a_queue_its_signed_url_and_a_subscription(hc, live_service):
    name = f"q-{uuid.uuid4().hex[:8]}"
    stack_name, stack_id = create(hc, QUEUE, parameters={"queue": name})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    ids = physical_ids(hc, stack_id)
    assert ids["queue"] == out["queue_id"] == name
    assert out["href"].endswith(f"/v2/queues/{name}")
    assert out["unnamed"].startswith(f"{stack_name}-unnamed-") and len(out["unnamed"]) <= 64
    assert _queue(live_service, name)["metadata"] == {"color": "red",
                                                      "_default_message_ttl": 300}
    assert out["paths"] == [f"/v2/queues/{name}/messages", f"/v2/queues/{name}/subscriptions"]
    assert out["methods"] == ["GET", "POST"] and len(out["signature"]) == 64
    query = parse_qs(out["query_str"])
    assert query == {"signature": [out["signature"]], "expires": [out["expires"]],
                     "paths": [",".join(out["paths"])], "methods": ["GET,POST"],
                     "project_id": [out["project"]], "queue_name": [name]}
    hook = out["hook_show"]
    assert (hook["source"], hook["subscriber"], hook["ttl"]) == \
        (name, "http://127.0.0.1:9/hook", 3600)
    assert out["hook"] == ids["hook"].rpartition("/")[2]  # its reference: Zaqar's id

    # Metadata and the subscription's ttl update in place.
    hc.stacks.update(stack_id, template=QUEUE, parameters={"queue": name, "color": "blue",
                                                           "ttl": 7200})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert physical_ids(hc, stack_id) == ids
    assert _queue(live_service, name)["metadata"]["color"] == "blue"
    assert outputs(hc, stack_id)["hook_show"]["ttl"] == 7200

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    left = cloud(live_service, f"print(json.dumps([c.object_get('queue', {name!r}), "
                               f"c.object_get('queue', {out['unnamed']!r}), "
                               f"c.object_get('queue_subscription', {ids['hook']!r})]))")
    assert left == [None, None, None]


def _failed(hc, template):
    _, stack_id = create(hc, template, disable_rollback=True)
    wait_stack(hc, stack_id, "CREATE_FAILED")
    failed = {r.resource_name: r.resource_status_reason for r in hc.resources.list(stack_id)
              if r.resource_status == "CREATE_FAILED"}
    return stack_id, failed


@pytest.mark.parametrize("resources, failing, reason", [
    ("""
  bad: {type: OS::Zaqar::Queue, properties: {name: "no spaces"}}
""", "bad", "The format of the submitted queue name or project id is not valid."),
    ("""
  bad: {type: OS::Zaqar::Queue, properties: {name: NAME, metadata: {_default_message_ttl: 5}}}
""", "bad", "_default_message_ttl can not exceed 1209600 seconds"),
    ("""
  queue: {type: OS::Zaqar::Queue, properties: {name: NAME}}
  bad:
    type: OS::Zaqar::SignedQueueURL
    properties: {queue: {get_resource: queue}, paths: [messages, stats]}
""", "bad", "Invalid paths: {'stats'}"),
], ids=["queue-name", "reserved-metadata", "share-paths"])
def test_zaqars_refusals_fail_the_resource(hc, resources, failing, reason):
    template = ("heat_template_version: 2016-10-14\nresources:"
                + resources.replace("NAME", f"q-{uuid.uuid4().hex[:8]}"))
    stack_id, failed = _failed(hc, template)
    assert list(failed) == [failing], failed
    assert reason in failed[failing], failed[failing]
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_one_queue_named_twice_and_heats_validation(hc, live_service):
    """Zaqar's PUT of a queue that exists is no error (the simulated cloud's neither: its
    metadata is replaced); a second resource naming a queue another resource holds fails
    with heatweb's ObjectHeld, as for a Swift container (one holder per object)."""
    name = f"q-{uuid.uuid4().hex[:8]}"
    template = f"""
heat_template_version: 2016-10-14
resources:
  one: {{type: OS::Zaqar::Queue, properties: {{name: {name}}}}}
  two: {{type: OS::Zaqar::Queue, depends_on: one, properties: {{name: {name}}}}}
"""
    stack_id, failed = _failed(hc, template)
    assert list(failed) == ["two"] and "ObjectHeld" in failed["two"], failed
    again = cloud(live_service, f"print(json.dumps(c.object_create('queue', project_id='p', "
                                f"name={name!r}, metadata={{'owner': 'two'}})))")
    assert again == name and _queue(live_service, name)["metadata"] == {"owner": "two"}
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert _queue(live_service, name) is None

    for resource, message in (
            ({"type": "OS::Zaqar::Subscription",
              "properties": {"queue_name": "q", "subscriber": "ftp://example.com/x"}},
             "The subscriber type of must be one of: http, https, mailto, trust+http, "
             "trust+https."),
            ({"type": "OS::Zaqar::SignedQueueURL",
              "properties": {"queue": "q", "methods": ["GET", "HEAD"]}},
             '"HEAD" is not an allowed value'),
            ({"type": "OS::Zaqar::Queue", "properties": {"name": "q" * 65}},
             "length (65) is out of range (min: None, max: 64)")):
        with pytest.raises(heat_exc.HTTPBadRequest) as raised:
            hc.stacks.validate(template={"heat_template_version": "2016-10-14",
                                         "resources": {"r": resource}})
        assert message in raised.value.error["error"]["message"]
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Zaqar::Queue", "OS::Zaqar::SignedQueueURL",
            "OS::Zaqar::Subscription"} <= listed


ZAQAR_WAIT = """
heat_template_version: 2016-10-14
resources:
  wait_handle:
    type: OS::Heat::WaitConditionHandle
    properties: {signal_transport: ZAQAR_SIGNAL}
  wait_condition:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: wait_handle}, timeout: 120}
outputs:
  signal_data: {value: {get_attr: [wait_condition, data]}}
"""


def test_a_zaqar_signal_handle_is_signalled_through_its_queue(hc, live_service):
    """Heat's ZaqarWaitConditionTest's template: the handle's queue, named by its
    ``signal`` attribute, receives a message whose body is the signal; the wait
    condition reads it and completes with its data; delete removes the queue."""
    _, stack_id = create(hc, ZAQAR_WAIT)
    deadline = time.monotonic() + 60
    while hc.resources.get(stack_id, "wait_handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    signal = json.loads(hc.resources.get(stack_id, "wait_handle").attributes["signal"])
    queue = signal["queue_id"]
    assert signal["paths"] == [f"/v2/queues/{queue}/messages"]
    assert signal["methods"] == ["DELETE", "GET", "POST"] and signal["project_id"]
    assert _queue(live_service, queue) is not None
    cloud(live_service, f"c.queue_post({queue!r}, [{{'data': 'here!', 'id': 'data_id'}}]); "
                        f"print('null')")
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    assert json.loads(outputs(hc, stack_id)["signal_data"]) == {"data_id": "here!"}
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert _queue(live_service, queue) is None


ZAQAR_DEPLOYMENT = """
heat_template_version: 2013-05-23
resources:
  server:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: m1.tiny
      user_data_format: SOFTWARE_CONFIG
      software_config_transport: ZAQAR_MESSAGE
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


def test_zaqar_message_server_and_zaqar_signal_deployment(hc, live_service):
    """Heat's ZaqarSignalTransportTest's template on the simulated cloud (no Keystone, so
    no stack user: queues of the stack's project): the server's metadata names its queue
    in ``os-collect-config``; the queue gets the metadata at the server's create and again
    with the deployment; the deployment's inputs name its own queue, and a message there
    is its signal; delete removes both queues."""
    _, stack_id = create(hc, ZAQAR_DEPLOYMENT)
    deadline = time.monotonic() + 60
    while not (metadata := hc.resources.metadata(stack_id, "server")).get("deployments"):
        assert time.monotonic() < deadline
        time.sleep(0.3)
    occ = metadata["os-collect-config"]
    assert occ["collectors"] == ["zaqar", "local"] and occ["zaqar"]["project_id"]
    server_queue = occ["zaqar"]["queue_id"]
    messages = []  # the second is posted once the deployment's row is committed
    while len(messages) < 2 and time.monotonic() < deadline:
        messages += cloud(live_service, f"print(json.dumps(c.queue_pop({server_queue!r})))")
    assert [m["deployments"] for m in messages][0] == [] and len(messages) == 2
    assert all(m["os-collect-config"] == occ for m in messages)
    deployment = messages[1]["deployments"][0]
    assert deployment == metadata["deployments"][0]
    inputs = {i["name"]: i["value"] for i in deployment["inputs"]}
    assert inputs["deploy_signal_transport"] == "ZAQAR_SIGNAL"
    assert "deploy_signal_id" not in inputs and "deploy_password" not in inputs
    signal_queue = inputs["deploy_queue_id"]
    cloud(live_service, f"c.queue_post({signal_queue!r}, [{{'deploy_stdout': 'here!'}}]); "
                        f"print('null')")
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    assert outputs(hc, stack_id)["data"] == "here!"
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert _queue(live_service, server_queue) is None
    assert _queue(live_service, signal_queue) is None


ZAQAR_SERVER = """
heat_template_version: 2013-05-23
resources:
  server:
    type: OS::Nova::Server
    metadata: {role: web}
    properties:
      image: cirros
      flavor: m1.tiny
      user_data_format: SOFTWARE_CONFIG
      software_config_transport: ZAQAR_MESSAGE
"""


def test_a_deployment_made_through_the_api_is_pushed_to_the_servers_queue(hc, live_service):
    """Heat's software config service pushes a ZAQAR_MESSAGE server's metadata whoever
    makes the deployment: ``openstack software deployment create`` and ``delete`` post
    the server's metadata, its deployments as they now are, to the server's queue."""
    _, stack_id = create(hc, ZAQAR_SERVER)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    server_id = physical_ids(hc, stack_id)["server"]
    queue = hc.resources.metadata(stack_id, "server")["os-collect-config"]["zaqar"]["queue_id"]
    config = hc.software_configs.create(group="script", name="from-api", config="echo hi")
    deployment = hc.software_deployments.create(
        config_id=config.id, server_id=server_id, action="CREATE", status="IN_PROGRESS",
        status_reason="from the API")
    hc.software_deployments.delete(deployment.id)
    messages = cloud(live_service, f"print(json.dumps(c.queue_pop({queue!r})))")
    assert [[d["name"] for d in m["deployments"]] for m in messages] == [[], ["from-api"], []]
    assert all(m["role"] == "web" for m in messages)  # the template's metadata, from create
    assert messages[1]["deployments"][0]["id"] == config.id
    assert messages[1]["deployments"][0]["config"] == "echo hi"
    assert messages[1]["os-collect-config"]["zaqar"]["queue_id"] == queue
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_the_environments_zaqar_event_sink_gets_the_stacks_events(hc, live_service):
    """Heat's ZaqarEventSinkTest: an environment's ``event_sinks`` entry of type
    ``zaqar-queue`` receives the stack's four create events in Heat's shape."""
    queue = str(uuid.uuid4())
    stack_name, stack_id = create(
        hc, {"heat_template_version": "2013-05-23", "resources": {"test_resource": {
            "type": "OS::Heat::TestResource", "properties": {"value": "ok"}}}},
        environment={"event_sinks": [{"type": "zaqar-queue", "target": queue, "ttl": 120}]})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    deadline, messages = time.monotonic() + 20, []
    while len(messages) < 4 and time.monotonic() < deadline:
        messages += cloud(live_service, f"print(json.dumps(c.queue_pop({queue!r})))")
        time.sleep(0.2)
    assert [m["type"] for m in messages] == ["os.heat.event"] * 4, messages
    payloads = [m["payload"] for m in messages]
    assert {p["resource_name"] for p in payloads} == {stack_name, "test_resource"}
    assert {p["stack_id"] for p in payloads} == {stack_id}
    assert [(p["resource_name"], p["resource_status"]) for p in payloads] == [
        (stack_name, "IN_PROGRESS"), ("test_resource", "IN_PROGRESS"),
        ("test_resource", "COMPLETE"), (stack_name, "COMPLETE")]
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
