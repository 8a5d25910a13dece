"""A stack whose traversal lost a task between two nodes is started over by the sweep.

The engine's node code runs in this process against the real database:
node ``a`` completes, and the task that would have run ``b`` is "lost"
(never sent); nothing is locked and nothing is queued. Once the stack has
been quiet for ``RESTART_AFTER_SECONDS`` the sweep starts a new traversal,
whose run skips ``a`` (done) and creates ``b``.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from convergence import nodes, recovery
from convergence.models import OutboxMessage
from heatweb.celery import app
from heatweb.models import Project
from stacks.models import Event, Resource, Stack
from stacks.services import lifecycle

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "a": {"type": "OS::Heat::RandomString"},
    "b": {"type": "OS::Heat::Value", "depends_on": "a",
          "properties": {"value": {"get_attr": ["a", "value"]}}}}}


@pytest.fixture
def lost(converge_nodes_sent):
    """converge_nodes tasks sent by the code under test are dropped, as a dead worker would."""
    return converge_nodes_sent


def _age(stack, seconds):
    past = timezone.now() - timedelta(seconds=seconds)
    Stack.objects.filter(pk=stack.pk).update(action_started_at=past)
    Event.objects.filter(stack=stack).update(created_at=past)


def test_a_quiet_stack_is_restarted_and_completes_without_redoing_what_was_done(
        lost, settings, monkeypatch):
    settings.HEATWEB = {**settings.HEATWEB, "RESTART_AFTER_SECONDS": 30}
    stack = lifecycle.stack_create(project=Project.objects.create(name="r"), user=None,
                                   name="s", template=TEMPLATE)
    OutboxMessage.objects.filter(stack=stack).delete()  # published
    a = Resource.objects.get(stack=stack, name="a")
    # Run a's node alone (no inline chain): the task that would run b is lost.
    monkeypatch.setattr(nodes, "INLINE_NODES", 1)
    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])
    monkeypatch.setattr(nodes, "INLINE_NODES", 50)
    assert [[n[0] for n in task[2]] for task in lost] == \
        [[Resource.objects.get(stack=stack, name="b").pk]]
    lost.clear()
    value = Resource.objects.get(pk=a.pk).attributes_data["value"]
    assert Resource.objects.get(pk=a.pk).state == "CREATE_COMPLETE"
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_IN_PROGRESS"
    old = stack.current_traversal

    _age(stack, 10)
    recovery._restart_quiet()
    assert Stack.objects.get(pk=stack.pk).current_traversal == old  # not quiet long enough

    _age(stack, 60)
    recovery._restart_quiet()
    restarted = Stack.objects.get(pk=stack.pk)
    assert restarted.current_traversal != old
    assert restarted.state == "CREATE_IN_PROGRESS"
    assert Event.objects.filter(stack=stack, resource_name="s").latest("created_at") \
        .resource_status_reason == "Stack CREATE restarted: no engine worked on it for 30 s"
    first = OutboxMessage.objects.get(traversal_id=restarted.current_traversal,
                                      task="convergence.converge_nodes")

    sent = [first.args]
    while sent:  # the new traversal's tasks, delivered this time
        stack_id, traversal_id, node_list = sent.pop(0)
        nodes.nodes_run(stack_id, traversal_id, nodes=node_list)
        sent += lost
        lost.clear()
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_COMPLETE"
    rows = {r.name: r for r in Resource.objects.filter(stack=stack)}
    assert rows["a"].attributes_data["value"] == value  # a was not created again
    assert rows["b"].attributes_data["value"] == value


def test_a_stack_with_a_lock_held_is_not_restarted(lost, settings):
    settings.HEATWEB = {**settings.HEATWEB, "RESTART_AFTER_SECONDS": 30}
    stack = lifecycle.stack_create(project=Project.objects.create(name="q"), user=None,
                                   name="s", template=TEMPLATE)
    OutboxMessage.objects.filter(stack=stack).delete()  # published
    Resource.objects.filter(stack=stack, name="a").update(engine_id="someone:1:alive")
    _age(stack, 60)
    recovery._restart_quiet()
    assert Stack.objects.get(pk=stack.pk).current_traversal == stack.current_traversal


def test_a_quiet_stack_whose_traversal_has_a_task_in_the_broker_is_not_restarted(settings):
    """Late is not lost: a backlog after a crash holds the traversal's next task."""
    settings.HEATWEB = {**settings.HEATWEB, "RESTART_AFTER_SECONDS": 30}
    stack = lifecycle.stack_create(project=Project.objects.create(name="b"), user=None,
                                   name="s", template=TEMPLATE)
    OutboxMessage.objects.filter(stack=stack).delete()
    app.send_task("convergence.converge_nodes", args=[str(stack.pk), stack.current_traversal, []])
    _age(stack, 60)
    recovery._restart_quiet()
    assert Stack.objects.get(pk=stack.pk).current_traversal == stack.current_traversal
