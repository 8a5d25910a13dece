"""Abandon, adopt and export through python-heatclient: the physical objects outlive the
abandoned stack and an adopted stack takes them over without making new ones."""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.conftest import ServiceDatabase
from tests.live.test_snapshots import TEMPLATE, _lock, _unlock, resources
from tests.live.test_stack_lifecycle import wait_stack

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def hc(live_service):
    return live_service.heat()


@pytest.fixture(scope="module")
def db(live_service):
    database = ServiceDatabase(live_service)
    yield database
    database.close()


def servers_alive(db, server_id):
    return db.rows("SELECT COUNT(*) FROM stacks_simserver WHERE id = %s AND deleted_at IS NULL",
                   server_id)[0][0]


def test_export_abandon_adopt_round_trip(hc, db):
    name = f"aband{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=TEMPLATE,
                                parameters={"v": "kept"}, tags="x,y")["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    before = {n: r.physical_resource_id for n, r in resources(hc, stack_id).items()}

    exported = hc.stacks.export(stack_id)
    assert {"name", "id", "action", "status", "template", "environment", "files", "resources",
            "project_id", "stack_user_project_id", "tags"} <= set(exported)
    assert (exported["name"], exported["id"], exported["action"], exported["status"]) == \
        (name, stack_id, "CREATE", "COMPLETE")
    assert exported["environment"]["parameters"] == {"v": "kept"}
    assert exported["tags"] == ["x", "y"]
    server = exported["resources"]["server"]
    assert set(server) == {"name", "resource_id", "type", "action", "status", "metadata",
                           "resource_data"}
    assert (server["resource_id"], server["type"], server["status"]) == \
        (before["server"], "OS::Nova::Server", "COMPLETE")
    assert hc.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"  # export changes nothing

    abandoned = hc.stacks.abandon(stack_id)
    assert abandoned["resources"] == exported["resources"]
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.get(name)
    assert servers_alive(db, before["server"]) == 1  # left in the cloud

    adopted_id = hc.stacks.create(stack_name=name, adopt_stack_data=abandoned)["stack"]["id"]
    assert adopted_id != stack_id
    stack = wait_stack(hc, adopted_id, "ADOPT_COMPLETE")
    assert stack.parameters["v"] == "kept"
    rows = resources(hc, adopted_id)
    assert {n: r.physical_resource_id for n, r in rows.items()} == before
    assert {r.resource_status for r in rows.values()} == {"ADOPT_COMPLETE"}
    assert db.servers_made(name) == {"server": 1}  # nothing new was built
    assert hc.stacks.output_show(adopted_id, "value")["output"]["output_value"] == "kept"

    # The adopted stack is an ordinary stack: an update and a delete reach the objects.
    hc.stacks.update(adopted_id, template=TEMPLATE, parameters={"v": "new"})
    wait_stack(hc, adopted_id, "UPDATE_COMPLETE")
    hc.stacks.delete(adopted_id)
    wait_stack(hc, adopted_id, "DELETE_COMPLETE")
    assert servers_alive(db, before["server"]) == 0


def test_adopt_of_a_missing_object_or_resource_is_refused_and_stores_nothing(hc):
    data = {"template": TEMPLATE, "environment": {"parameters": {}},
            "resources": {"server": {"resource_id": "no-such-server",
                                     "type": "OS::Nova::Server", "resource_data": {}},
                          "marker": {"resource_id": "m1", "type": "OS::Heat::TestResource"}}}
    name = f"adoptbad{uuid.uuid4().hex[:6]}"
    # An object the caller cannot see (missing, or another project's) is not taken over.
    with pytest.raises(heat_exc.HTTPNotFound) as refused:
        hc.stacks.create(stack_name=name, adopt_stack_data=data)
    assert "The server (no-such-server) could not be found." in str(refused.value)
    assert not [s for s in hc.stacks.list() if s.stack_name.startswith(name)]
    server = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, server, "CREATE_COMPLETE")
    partial = {**data, "resources": {"marker": data["resources"]["marker"]}}
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.create(stack_name=f"{name}x", adopt_stack_data=partial)
    assert "Resource ID was not provided for server" in str(refused.value)
    with pytest.raises(heat_exc.HTTPBadRequest):
        hc.stacks.create(stack_name=f"{name}y", adopt_stack_data="[1, 2]")
    too_long = {**data, "resources": {**data["resources"], "marker": {"resource_id": "m" * 256}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.create(stack_name=f"{name}z", adopt_stack_data=too_long)
    assert "longer than 255 characters" in str(refused.value)
    assert [s.stack_name for s in hc.stacks.list() if s.stack_name.startswith(name)] == [name]


def test_locked_stack_refuses_abandon(hc):
    name = f"abandlock{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    _lock(hc, stack_id)
    wait_stack(hc, stack_id, "LOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPConflict) as refused:
        hc.stacks.abandon(stack_id)
    assert refused.value.error["error"]["type"] == "StackLocked"
    assert hc.stacks.get(stack_id).stack_status == "LOCK_COMPLETE"
    _unlock(hc, stack_id)
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")
    assert hc.stacks.abandon(stack_id)["name"] == name


GROUP = {"heat_template_version": "2016-10-14", "resources": {
    "group": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 2, "resource_def": {"type": "OS::Nova::Server",
                                     "properties": {"image": "cirros", "flavor": "m1.tiny"}}}},
    "marker": {"type": "OS::Heat::TestResource", "properties": {"value": "v"}}}}


def test_nested_stacks_are_abandoned_and_adopted_with_their_parent(hc, db):
    name = f"abnest{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=GROUP)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    members = {r.resource_name: r.physical_resource_id
               for r in hc.resources.list(stack_id, nested_depth=1)
               if r.resource_type == "OS::Nova::Server"}
    assert len(members) == 2
    servers = db.rows("SELECT COUNT(*) FROM stacks_simserver")[0][0]

    abandoned = hc.stacks.abandon(stack_id)
    child = abandoned["resources"]["group"]  # the child's own data, as Heat's
    assert {n: r["resource_id"] for n, r in child["resources"].items()} == members
    assert child["status"] == "COMPLETE" and "template" in child

    adopted_id = hc.stacks.create(stack_name=name, adopt_stack_data=abandoned)["stack"]["id"]
    wait_stack(hc, adopted_id, "ADOPT_COMPLETE")
    rows = [r for r in hc.resources.list(adopted_id, nested_depth=1)]
    assert {r.resource_name: r.physical_resource_id for r in rows
            if r.resource_type == "OS::Nova::Server"} == members
    assert {r.resource_status for r in rows} == {"ADOPT_COMPLETE"}
    assert db.rows("SELECT COUNT(*) FROM stacks_simserver")[0][0] == servers
    hc.stacks.delete(adopted_id)
    wait_stack(hc, adopted_id, "DELETE_COMPLETE")
    assert all(servers_alive(db, server) == 0 for server in members.values())
