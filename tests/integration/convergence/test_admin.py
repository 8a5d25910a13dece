"""Django admin: engines alive/dead, releasing a dead engine's locks, read-only states."""
from datetime import timedelta

import pytest
from django.utils import timezone

from convergence.models import Engine, SyncPoint
from heatweb.models import Project
from stacks.models import Event, RawTemplate, Resource, Stack

pytestmark = pytest.mark.django_db


@pytest.fixture
def locked(db):
    project = Project.objects.create(name="adm")
    raw = RawTemplate.objects.create(template={"heat_template_version": "2016-10-14"})
    stack = Stack.objects.create(project=project, name="s", raw_template=raw,
                                 state="CREATE_IN_PROGRESS", current_traversal="t1")
    dead = Engine.objects.create(id="host:1:dead", hostname="host", pid=1,
                                 last_heartbeat=timezone.now() - timedelta(hours=1))
    alive = Engine.objects.create(id="host:2:alive", hostname="host", pid=2,
                                  last_heartbeat=timezone.now())
    res = Resource.objects.create(stack=stack, name="r", type="OS::Heat::None",
                                  state="CREATE_IN_PROGRESS", engine_id=dead.pk)
    busy = Resource.objects.create(stack=stack, name="b", type="OS::Heat::None",
                                   state="CREATE_IN_PROGRESS", engine_id=alive.pk)
    SyncPoint.objects.create(entity_id=str(res.pk), traversal_id="t1", is_update=True,
                             stack=stack, predecessors=[], successors=[])
    return dead, alive, res, busy


def test_engine_list_shows_alive_and_locks(admin_client, locked):
    page = admin_client.get("/admin/convergence/engine/").content.decode()
    assert "host:1:dead" in page and "host:2:alive" in page
    assert 'alt="False"' in page and 'alt="True"' in page


def test_release_locks_of_a_dead_engine_only(admin_client, locked):
    dead, alive, res, busy = locked
    resp = admin_client.post("/admin/convergence/engine/", {
        "action": "release_locks", "_selected_action": [dead.pk, alive.pk]}, follow=True)
    assert resp.status_code == 200
    page = resp.content.decode()
    assert f"Engine {alive.pk} is alive: its locks were kept." in page
    assert "Released 1 resource lock(s)." in page
    res.refresh_from_db()
    busy.refresh_from_db()
    assert (res.engine_id, res.state) == (None, "CREATE_FAILED")
    assert res.status_reason == "Worker went down during resource CREATE"
    assert Event.objects.filter(resource_name="r", resource_status="FAILED").exists()
    assert (busy.engine_id, busy.state) == (alive.pk, "CREATE_IN_PROGRESS")


def test_states_cannot_be_edited_in_admin(admin_client, locked):
    _, _, res, _ = locked
    page = admin_client.get(f"/admin/stacks/resource/{res.pk}/change/").content.decode()
    assert 'name="state"' not in page
    admin_client.post(f"/admin/stacks/resource/{res.pk}/change/", {"state": "CREATE_COMPLETE"})
    res.refresh_from_db()
    assert res.state == "CREATE_IN_PROGRESS"
    sync_points = admin_client.get("/admin/convergence/syncpoint/?traversal_id=t1")
    assert sync_points.status_code == 200 and "t1" in sync_points.content.decode()


def test_liveness_heartbeat_and_ping_when_in_doubt(db, settings):
    from convergence.engines import engine_alive

    beat = settings.HEATWEB["ENGINE_HEARTBEAT_SECONDS"]
    now = timezone.now()
    fresh = Engine.objects.create(id="n:1:fresh", hostname="ghost@nowhere", pid=1,
                                  last_heartbeat=now)
    doubtful = Engine.objects.create(id="n:2:doubt", hostname="ghost@nowhere", pid=2,
                                     last_heartbeat=now - timedelta(seconds=2.5 * beat))
    no_node = Engine.objects.create(id="n:3:plain", hostname="plainhost", pid=3,
                                    last_heartbeat=now - timedelta(seconds=2.5 * beat))
    stopped = Engine.objects.create(id="n:4:stop", hostname="h", pid=4, last_heartbeat=now,
                                    stopped_at=now)
    assert engine_alive(fresh.pk)
    assert not engine_alive(doubtful.pk)  # in doubt, and no worker answers the ping
    assert engine_alive(no_node.pk)  # nothing to ping: the heartbeat threshold decides
    assert not engine_alive(stopped.pk)
    assert not engine_alive("never:registered")


def test_the_outbox_lists_unpublished_tasks_read_only(admin_client, locked):
    from convergence.models import OutboxMessage

    stack = locked[2].stack
    OutboxMessage.objects.create(task="convergence.converge_nodes", args=[], stack=stack,
                                 traversal_id="t1", due_at=timezone.now())
    page = admin_client.get("/admin/convergence/outboxmessage/").content.decode()
    assert "convergence.converge_nodes" in page and "t1" in page
    assert admin_client.get("/admin/convergence/outboxmessage/add/").status_code == 403


def test_traversal_page_names_nodes_and_their_missing_predecessors(admin_client, locked):
    from convergence.models import Traversal

    dead, _, res, busy = locked
    stack = res.stack
    Traversal.objects.create(id="t1", stack=stack, action="CREATE", node_count=3)
    SyncPoint.objects.filter(traversal_id="t1").delete()
    SyncPoint.objects.create(entity_id=str(res.pk), traversal_id="t1", is_update=True,
                             stack=stack, predecessors=[], successors=[[busy.pk, True, 1]])
    SyncPoint.objects.create(entity_id=str(busy.pk), traversal_id="t1", is_update=True,
                             stack=stack, predecessors=[f"{res.pk}:1"], successors=[])
    page = admin_client.get("/admin/convergence/traversal/t1/change/").content.decode()
    assert 'data-node="b" data-action="create"' in page
    assert '<td class="missing">r (create)</td>' in page
    assert 'name="action"' not in page  # nothing to edit
    waiting = admin_client.get("/admin/convergence/traversal/t1/change/?nodes=waiting")
    assert 'data-node="b"' in waiting.content.decode()
    assert 'data-node="r"' not in waiting.content.decode()
    listed = admin_client.get("/admin/convergence/syncpoint/?sync=waiting&traversal=current")
    assert "b (create)" in listed.content.decode()
    assert "r (create)" not in listed.content.decode()
    engine = admin_client.get(f"/admin/convergence/engine/{dead.pk}/change/").content.decode()
    assert '<th scope="row">r</th>' in engine


def test_a_sync_points_input_data_shows_the_stacks_hidden_values_masked(admin_client, db):
    """A sync point's input data is its predecessors' resolved data: a hidden parameter's
    value that flowed into it is masked, as on every other admin page."""
    project = Project.objects.create(name="adm-hidden")
    raw = RawTemplate.objects.create(
        template={"heat_template_version": "2016-10-14",
                  "parameters": {"pw": {"type": "string", "hidden": True}},
                  "resources": {"r": {"type": "OS::Heat::None"}}},
        environment={"parameters": {"pw": "marker-5f1e9c"}})
    stack = Stack.objects.create(project=project, name="h", raw_template=raw,
                                 state="CREATE_IN_PROGRESS", current_traversal="t9")
    point = SyncPoint.objects.create(
        entity_id="1", traversal_id="t9", is_update=True, stack=stack, predecessors=[1],
        successors=[], input_data={"1": {"attrs": {"value": "user:marker-5f1e9c"}}})
    page = admin_client.get(f"/admin/convergence/syncpoint/{point.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "marker-5f1e9c" not in text
    assert "user:******" in text
