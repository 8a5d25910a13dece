"""A node meeting another engine's resource lock, and a node outliving its traversal.

These run the engine's node code in this process against the real database;
the tasks it would send are recorded where they are sent (``app.send_task``: the
boundary to the broker) instead of being delivered to a worker.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from convergence import check_resource, nodes
from convergence.models import Engine, SyncPoint
from heatweb.models import Project
from stacks.models import Event, Resource, Stack
from stacks.services import lifecycle

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "a": {"type": "OS::Heat::None"},
    "b": {"type": "OS::Heat::None", "depends_on": "a"}}}


@pytest.fixture
def sent(converge_nodes_sent):
    """The converge_nodes tasks the code under test sends."""
    return converge_nodes_sent


def nodes_of(sent):
    """``[(traversal, [[entity, is_update], ...]), ...]`` of the tasks sent."""
    return [(traversal_id, [[n[0], n[1]] for n in node_list])
            for _, traversal_id, node_list in sent]


@pytest.fixture
def stack():
    project = Project.objects.create(name="locks")
    return lifecycle.stack_create(project=project, user=None, name="s", template=TEMPLATE)


def rows(stack):
    return {r.name: r for r in Resource.objects.filter(stack=stack)}


def other_engine(*, alive):
    beat = timezone.now() if alive else timezone.now() - timedelta(hours=1)
    return Engine.objects.create(id=f"elsewhere:{int(alive)}", hostname="elsewhere", pid=1,
                                 last_heartbeat=beat)


def test_a_resource_locked_by_a_live_engine_is_neither_run_nor_propagated(stack, sent):
    a = rows(stack)["a"]
    holder = other_engine(alive=True)
    Resource.objects.filter(pk=a.pk).update(engine_id=holder.pk)

    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])

    a_after = rows(stack)["a"]
    assert (a_after.state, a_after.engine_id, a_after.atomic_key) == \
        ("INIT_COMPLETE", holder.pk, a.atomic_key)
    assert sent == []
    stack_row = SyncPoint.objects.get(traversal_id=stack.current_traversal,
                                      entity_id=str(stack.pk))
    assert stack_row.input_data == {}
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_IN_PROGRESS"


def test_a_dead_engines_lock_is_broken_and_the_node_runs_again(stack, sent):
    a = rows(stack)["a"]
    holder = other_engine(alive=False)
    Resource.objects.filter(pk=a.pk).update(engine_id=holder.pk, state="CREATE_IN_PROGRESS")

    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])

    broken = rows(stack)["a"]
    assert (broken.state, broken.engine_id, broken.status_reason) == \
        ("CREATE_FAILED", None, "Worker went down during resource CREATE")
    assert nodes_of(sent) == [(stack.current_traversal, [[a.pk, True]])]  # processed again

    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])

    assert rows(stack)["a"].state == "CREATE_COMPLETE"
    assert rows(stack)["b"].state == "CREATE_COMPLETE"  # a chain runs on in the same task
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_COMPLETE"
    reasons = list(Event.objects.filter(stack=stack, resource_name="a").values_list(
        "resource_action", "resource_status", "resource_status_reason"))
    assert ("CREATE", "FAILED", "Worker went down during resource CREATE") in reasons


def test_a_node_whose_traversal_was_replaced_is_retriggered_in_the_new_one(stack, sent):
    old_traversal = stack.current_traversal
    a = rows(stack)["a"]
    # A newer traversal starts while a's node is about to run in the old one:
    # the old sync points are deleted, the new one's a node was skipped because
    # the resource was locked (here: it is ready and waiting for a retrigger).
    new = lifecycle.stack_update(Stack.objects.get(pk=stack.pk), template=TEMPLATE)
    assert new.current_traversal != old_traversal
    assert not SyncPoint.objects.filter(traversal_id=old_traversal).exists()
    sent.clear()

    nodes.nodes_run(str(stack.pk), old_traversal, nodes=[[a.pk, True, {}]])
    assert sent == []  # the old traversal is gone: nothing runs in it

    nodes._after_single(nodes.node_context(Stack.objects.get(pk=stack.pk), old_traversal),
                        rows(stack)["a"], outcome=nodes.Outcome("done", data={}),
                        entity=[a.pk, True])
    assert nodes_of(sent) == [(new.current_traversal, [[a.pk, True]])]


def test_a_lock_taken_between_the_batchs_read_and_its_lock_is_met_as_a_held_one(
        sent, monkeypatch):
    """The batch's locks are one statement, each row's compare-and-swap its own: a row
    another engine locked after the batch read it is not run, the others are."""
    project = Project.objects.create(name="batch-locks")
    pair = lifecycle.stack_create(project=project, user=None, name="pair", template={
        "heat_template_version": "2016-10-14", "resources": {
            "c": {"type": "OS::Heat::None"}, "d": {"type": "OS::Heat::None"}}})
    c, d = rows(pair)["c"], rows(pair)["d"]
    holder = other_engine(alive=True)
    batch_lock = check_resource.rows_update

    def meanwhile(model, items):
        Resource.objects.filter(pk=c.pk).update(engine_id=holder.pk,
                                                atomic_key=c.atomic_key + 1)
        return batch_lock(model, items)

    monkeypatch.setattr(check_resource, "rows_update", meanwhile)
    nodes.nodes_run(str(pair.pk), pair.current_traversal,
                    nodes=[[c.pk, True, {}], [d.pk, True, {}]])

    c_after, d_after = rows(pair)["c"], rows(pair)["d"]
    assert (c_after.state, c_after.engine_id) == ("INIT_COMPLETE", holder.pk)
    assert (d_after.state, d_after.engine_id) == ("CREATE_COMPLETE", None)
    assert sent == []
    assert not Event.objects.filter(stack=pair, resource_name="c").exists()
    assert Stack.objects.get(pk=pair.pk).state == "CREATE_IN_PROGRESS"
