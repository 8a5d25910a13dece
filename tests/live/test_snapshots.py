"""Stack snapshots through python-heatclient: create, list, show, restore, delete, and the
lock refusing them (the live service: gunicorn, Celery workers, the simulated cloud)."""
import time
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.conftest import ServiceDatabase
from tests.live.test_stack_lifecycle import wait_stack

pytestmark = pytest.mark.live

TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "parameters": {"v": {"type": "string", "default": "a"}},
    "resources": {
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny"}},
        "marker": {"type": "OS::Heat::TestResource",
                   "properties": {"value": {"get_param": "v"}}},
    },
    "outputs": {"value": {"value": {"get_attr": ["marker", "output"]}}},
}


@pytest.fixture(scope="module")
def hc(live_service):
    return live_service.heat()


@pytest.fixture(scope="module")
def db(live_service):
    database = ServiceDatabase(live_service)
    yield database
    database.close()


def wait_snapshot(hc, stack_id, snapshot_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap = hc.stacks.snapshot_show(stack_id, snapshot_id)["snapshot"]
        if snap["status"] != "IN_PROGRESS":
            return snap
        time.sleep(0.2)
    raise AssertionError(f"snapshot {snapshot_id} still in progress")


def resources(hc, stack_id):
    return {r.resource_name: r for r in hc.resources.list(stack_id)}


def output(hc, stack_id):
    return hc.stacks.output_show(stack_id, "value")["output"]["output_value"]


def test_snapshot_restore_brings_back_template_parameters_and_server_image(hc, db):
    name = f"snap{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    server_before = resources(hc, stack_id)["server"].physical_resource_id

    started = hc.stacks.snapshot(stack_id, "first")
    assert set(started) == {"id", "name", "action", "status", "status_reason", "data",
                            "creation_time"}
    assert (started["name"], started["action"]) == ("first", "CREATE")
    snap = wait_snapshot(hc, stack_id, started["id"])
    assert snap["status"] == "COMPLETE", snap["status_reason"]
    stack = wait_stack(hc, stack_id, "SNAPSHOT_COMPLETE")
    assert stack.stack_status_reason == "Stack SNAPSHOT completed successfully"
    data = snap["data"]
    assert (data["name"], data["id"], data["action"], data["status"]) == \
        (name, stack_id, "SNAPSHOT", "COMPLETE")
    assert data["template"] == TEMPLATE
    saved = data["resources"]["server"]
    assert saved["resource_id"] == server_before
    assert (saved["type"], saved["action"], saved["status"]) == \
        ("OS::Nova::Server", "SNAPSHOT", "COMPLETE")
    image_id = saved["resource_data"]["snapshot_image_id"]
    assert db.rows("SELECT status FROM stacks_simimage WHERE id = %s AND deleted_at IS NULL",
                   image_id) == [("active",)]
    listed = hc.stacks.snapshot_list(stack_id)["snapshots"]
    assert [s["id"] for s in listed] == [started["id"]]

    hc.stacks.update(stack_id, template=TEMPLATE, parameters={"v": "b"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert output(hc, stack_id) == "b"

    hc.stacks.restore(stack_id, started["id"])
    stack = wait_stack(hc, stack_id, "RESTORE_COMPLETE")
    assert stack.parameters["v"] == "a"
    assert output(hc, stack_id) == "a"
    server = resources(hc, stack_id)["server"]
    # Heat's restore boots the server from the snapshot's image (a replacement).
    assert server.physical_resource_id != server_before
    template = hc.stacks.template(stack_id)
    assert template["resources"]["server"]["properties"]["image"] == image_id
    events = [e.resource_status for e in hc.events.list(stack_id)]
    assert "RESTORE_IN_PROGRESS" in events and "SNAPSHOT_COMPLETE" in events

    hc.stacks.snapshot_delete(stack_id, started["id"])
    assert hc.stacks.snapshot_list(stack_id)["snapshots"] == []
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.snapshot_show(stack_id, started["id"])
    [(deleted_at,)] = db.rows("SELECT deleted_at FROM stacks_simimage WHERE id = %s", image_id)
    assert deleted_at is not None

    # Deleting the stack deletes its snapshots and their images, as Heat does.
    second = wait_snapshot(hc, stack_id, hc.stacks.snapshot(stack_id, "second")["id"])
    second_image = second["data"]["resources"]["server"]["resource_data"]["snapshot_image_id"]
    hc.stacks.delete(stack_id)
    wait_stack(hc, stack_id, "DELETE_COMPLETE")
    assert db.rows("SELECT COUNT(*) FROM stacks_snapshot sn JOIN stacks_stack s "
                   "ON s.id = sn.stack_id WHERE s.name = %s", name) == [(0,)]
    [(deleted_at,)] = db.rows("SELECT deleted_at FROM stacks_simimage WHERE id = %s",
                              second_image)
    assert deleted_at is not None


def test_locked_stack_refuses_snapshot_and_restore(hc, live_service):
    name = f"snaplock{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    snap = hc.stacks.snapshot(stack_id)
    assert snap["name"] is None
    assert wait_snapshot(hc, stack_id, snap["id"])["status"] == "COMPLETE"
    wait_stack(hc, stack_id, "SNAPSHOT_COMPLETE")

    _lock(hc, stack_id)
    wait_stack(hc, stack_id, "LOCK_COMPLETE")
    for call in (lambda: hc.stacks.snapshot(stack_id, "x"),
                 lambda: hc.stacks.restore(stack_id, snap["id"]),
                 lambda: hc.stacks.snapshot_delete(stack_id, snap["id"])):
        with pytest.raises(heat_exc.HTTPConflict) as refused:
            call()
        assert refused.value.error["error"]["type"] == "StackLocked"
        assert "unlock it first" in str(refused.value)
    assert [s["id"] for s in hc.stacks.snapshot_list(stack_id)["snapshots"]] == [snap["id"]]
    _unlock(hc, stack_id)
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")
    hc.stacks.restore(stack_id, snap["id"])
    wait_stack(hc, stack_id, "RESTORE_COMPLETE")


def test_snapshot_refusals(hc):
    name = f"snapbad{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    with pytest.raises(heat_exc.HTTPNotFound) as missing:
        hc.stacks.snapshot_show(stack_id, str(uuid.uuid4()))
    assert "Snapshot" in str(missing.value)
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.restore(stack_id, "not-a-uuid")
    for bad in ("x" * 256, ["a"], 5):
        with pytest.raises(heat_exc.HTTPBadRequest):
            hc.stacks.snapshot(stack_id, bad)
    assert hc.stacks.snapshot_list(stack_id)["snapshots"] == []
    hc.actions.suspend(stack_id)
    wait_stack(hc, stack_id, "SUSPEND_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict) as refused:
        hc.stacks.snapshot(stack_id, "while suspended")
    assert refused.value.error["error"]["type"] == "InvalidStackState"


def _lock(hc, stack_id):
    _action(hc, stack_id, {"lock": {"level": "all"}, "reason": "maintenance"})


def _unlock(hc, stack_id):
    _action(hc, stack_id, {"unlock": None})


def _action(hc, stack_id, body):
    stack = hc.stacks.get(stack_id)
    resp = hc.http_client.post(f"/stacks/{stack.stack_name}/{stack_id}/actions", data=body)
    assert resp.status_code == 200
