"""The outbox: a stack action's first tasks are stored with it and published by a relay.

Runs the service code in this process on the real database; ``send_task``
(the boundary to the broker) is recorded instead of sent.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from convergence.models import OutboxMessage
from convergence.outbox import outbox_relay
from convergence.services import traversal_fail
from heatweb.celery import app
from heatweb.models import Project
from stacks.models import Stack
from stacks.services import lifecycle

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "a": {"type": "OS::Heat::None"},
    "b": {"type": "OS::Heat::None", "depends_on": "a"}}}


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(app, "send_task", lambda name, args: calls.append((name, args)))
    return calls


@pytest.fixture
def stack():
    project = Project.objects.create(name="outbox")
    return lifecycle.stack_create(project=project, user=None, name="s", template=TEMPLATE,
                                  timeout_mins=5)


def test_the_create_stores_its_first_task_and_its_timeout_in_the_outbox(stack, sent):
    rows = {r.task: r for r in OutboxMessage.objects.filter(stack=stack)}
    assert set(rows) == {"convergence.converge_nodes", "convergence.stack_timeout"}
    a = stack.resources.get(name="a")
    assert rows["convergence.converge_nodes"].args == [str(stack.pk), stack.current_traversal,
                                                       [[a.pk, True, {}]]]
    assert rows["convergence.converge_nodes"].claimed_by  # its writer publishes it on commit
    due = rows["convergence.stack_timeout"].due_at - rows["convergence.stack_timeout"].created_at
    assert round(due.total_seconds()) == 300

    assert outbox_relay() == 0  # claimed by a live writer, or not due: nothing to do
    assert sent == []


def test_the_relay_publishes_what_a_dead_writer_left_once_and_then_deletes_it(stack, sent):
    OutboxMessage.objects.filter(stack=stack, task="convergence.converge_nodes").update(
        claimed_until=timezone.now() - timedelta(seconds=1))  # the writer died holding it

    assert outbox_relay() == 1
    assert [name for name, _ in sent] == ["convergence.converge_nodes"]
    assert outbox_relay() == 0
    assert list(OutboxMessage.objects.filter(stack=stack).values_list("task", flat=True)) == \
        ["convergence.stack_timeout"]


def test_a_due_timeout_is_published_and_a_finished_traversal_discards_its_rows(stack, sent):
    OutboxMessage.objects.filter(stack=stack, task="convergence.stack_timeout").update(
        due_at=timezone.now() - timedelta(seconds=1))
    OutboxMessage.objects.filter(stack=stack, task="convergence.converge_nodes").delete()

    assert outbox_relay() == 1
    assert sent == [("convergence.stack_timeout", [str(stack.pk), stack.current_traversal])]

    OutboxMessage.objects.create(task="convergence.stack_timeout", args=[], stack=stack,
                                 traversal_id=stack.current_traversal,
                                 due_at=timezone.now() + timedelta(minutes=5))
    traversal_fail(stack.pk, stack.current_traversal, "Timed out")
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_FAILED"
    assert not OutboxMessage.objects.filter(stack=stack).exists()
