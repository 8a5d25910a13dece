"""Several engines: dead workers, broken locks, retriggers, replacements, duplicates.

A service of its own (fast heartbeats) so its workers can be killed.
"""
import json
import time
import uuid

import pytest
from heatclient import client as heat_client_module

from tests.conftest import LiveService, ServiceDatabase

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = LiveService(tmp_path_factory.mktemp("engines"), name="engines",
                      HEATWEB_HEARTBEAT="0.5", HEATWEB_DEAD_AFTER="3",
                      HEATWEB_SWEEP_EVERY_BEATS="2", HEATWEB_POLL_INTERVAL="0.3").start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def hc(service):
    info = service.issue_token(f"eng-{uuid.uuid4().hex[:6]}", f"eng-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def wait(hc, sid, state, timeout=60):
    deadline = time.monotonic() + timeout
    stack = None
    while time.monotonic() < deadline:
        stack = hc.stacks.get(sid)
        if stack.stack_status == state:
            return stack
        time.sleep(0.2)
    raise AssertionError(f"{sid}: {stack.stack_status} {stack.stack_status_reason}")


def db(service, code):
    done = service.manage("shell", "-c", "import json\n" + code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_killed_workers_waiting_resource_is_polled_on_and_the_stack_completes(service, hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "slow": {"type": "OS::Heat::TestResource",
                 "properties": {"value": "v", "action_wait_secs": {"create": 20}}},
        "after": {"type": "OS::Heat::Value", "depends_on": "slow",
                  "properties": {"value": {"get_attr": ["slow", "output"]}}}},
        "outputs": {"v": {"value": {"get_attr": ["after", "value"]}}}}
    name = f"kill{uuid.uuid4().hex[:6]}"
    sid = hc.stacks.create(stack_name=name, template=template)["stack"]["id"]
    deadline = time.monotonic() + 30
    holder = None
    database = ServiceDatabase(service)  # plain SQL: fast enough to catch the 4 s window
    while time.monotonic() < deadline and not holder:
        row = database.resource(name, "slow")
        holder = row and row[0]
        time.sleep(0.02)
    database.close()
    assert holder, "the slow resource was never locked"
    service.kill_workers()  # kill -9: the lock holder and every queued poll are gone
    service.start_worker("w-new")
    stack = wait(hc, sid, "CREATE_COMPLETE", timeout=60)
    assert stack.outputs[0]["output_value"] == "v"
    # "slow" was waiting for its action to complete: a live engine polled on,
    # so it was never failed (a node killed while starting is run again instead).
    statuses = [(e.resource_name, e.resource_status) for e in hc.events.list(sid)]
    assert ("slow", "CREATE_FAILED") not in statuses
    assert ("slow", "CREATE_COMPLETE") in statuses
    rows = db(service, f"""from stacks.models import Resource
print(json.dumps(list(Resource.objects.filter(stack_id="{sid}").values_list("name", "state"))))""")
    assert sorted(map(tuple, rows)) == [("after", "CREATE_COMPLETE"), ("slow", "CREATE_COMPLETE")]
    # The broker may hand the killed worker's poll back before a sweep marks
    # its engine dead: the mark comes within a few beats either way.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        engines = db(service, """from convergence.models import Engine
print(json.dumps([e.pk for e in Engine.objects.filter(stopped_at__isnull=False)]))""")
        if holder in engines:
            break
        time.sleep(0.5)
    assert holder in engines


def test_three_rapid_updates_end_with_the_third(hc):
    def template(value):
        return {"heat_template_version": "2016-10-14", "resources": {
            "a": {"type": "OS::Heat::TestResource",
                  "properties": {"value": value, "action_wait_secs": {"update": 1}}},
            "b": {"type": "OS::Heat::TestResource", "depends_on": "a",
                  "properties": {"value": {"get_attr": ["a", "output"]}}}},
            "outputs": {"v": {"value": {"get_attr": ["b", "output"]}}}}

    sid = hc.stacks.create(stack_name=f"rapid{uuid.uuid4().hex[:6]}",
                           template=template("v0"))["stack"]["id"]
    wait(hc, sid, "CREATE_COMPLETE")
    for value in ("v1", "v2", "v3"):
        hc.stacks.update(sid, template=template(value))
        time.sleep(0.3)
    stack = wait(hc, sid, "UPDATE_COMPLETE", timeout=60)
    assert stack.outputs[0]["output_value"] == "v3"
    assert {r.resource_status for r in hc.resources.list(sid)} <= {"UPDATE_COMPLETE",
                                                                   "CREATE_COMPLETE"}


def test_update_node_of_a_resource_being_deleted_creates_a_replacement(hc):
    full = {"heat_template_version": "2016-10-14", "resources": {
        "keep": {"type": "OS::Heat::None"},
        "r": {"type": "OS::Heat::TestResource",
              "properties": {"value": "x", "action_wait_secs": {"delete": 3}}}}}
    without = {"heat_template_version": "2016-10-14", "resources": {"keep": full["resources"]
                                                                    ["keep"]}}
    sid = hc.stacks.create(stack_name=f"repl{uuid.uuid4().hex[:6]}",
                           template=full)["stack"]["id"]
    wait(hc, sid, "CREATE_COMPLETE")
    old = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}["r"]
    hc.stacks.update(sid, template=without)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        states = {r.resource_name: r.resource_status for r in hc.resources.list(sid)}
        if states.get("r") == "DELETE_IN_PROGRESS":
            break
        time.sleep(0.1)
    assert states.get("r") == "DELETE_IN_PROGRESS"
    hc.stacks.update(sid, template=full)
    wait(hc, sid, "UPDATE_COMPLETE", timeout=60)
    now = {r.resource_name: r for r in hc.resources.list(sid)}
    assert now["r"].resource_status == "CREATE_COMPLETE"
    assert now["r"].physical_resource_id != old


def test_a_duplicated_task_changes_nothing(service, hc):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "a": {"type": "OS::Heat::RandomString"},
        "b": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["a", "value"]}}}}}
    sid = hc.stacks.create(stack_name=f"dup{uuid.uuid4().hex[:6]}",
                           template=template)["stack"]["id"]
    wait(hc, sid, "CREATE_COMPLETE")
    before = db(service, f"""from stacks.models import Event, Resource, Stack
print(json.dumps([Event.objects.filter(stack_id="{sid}").count(),
                  list(Resource.objects.filter(stack_id="{sid}").order_by("id")
                       .values_list("name", "state", "physical_resource_id", "atomic_key")),
                  Stack.objects.get(pk="{sid}").state]))""")
    db(service, f"""from convergence import tasks
from convergence.models import Traversal
from stacks.models import Resource
t = Traversal.objects.filter(stack_id="{sid}").latest("created_at")
leaves = [[r.pk, True, {{}}] for r in Resource.objects.filter(stack_id="{sid}")]
tasks.converge_nodes.delay("{sid}", t.pk, leaves)
tasks.traversal_finish.delay("{sid}", t.pk)
print("{{}}")""")
    time.sleep(3)
    after = db(service, f"""from stacks.models import Event, Resource, Stack
print(json.dumps([Event.objects.filter(stack_id="{sid}").count(),
                  list(Resource.objects.filter(stack_id="{sid}").order_by("id")
                       .values_list("name", "state", "physical_resource_id", "atomic_key")),
                  Stack.objects.get(pk="{sid}").state]))""")
    assert after == before
