"""A node paused on a hook is a row, not a worker; the sweep leaves it to the user.

The engine's node code runs in this process against the real database (the
tasks it would send are collected instead): ``a`` completes, ``b`` pauses on
its ``pre-create`` hook. Nothing is locked or waiting, the recovery sweep
neither restarts nor fails the quiet stack, and the clear (through the
door) releases ``b``'s node, which completes the stack.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from convergence import nodes, recovery, tasks
from convergence.models import Breakpoint, OutboxMessage, Waiter
from heatweb.exceptions import InvalidBreakPointHook
from heatweb.models import Project
from stacks.models import Event, Resource, Stack
from stacks.services import lifecycle
from stacks.services.actions import stack_action

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "a": {"type": "OS::Heat::RandomString"},
    "b": {"type": "OS::Heat::Value", "depends_on": "a",
          "properties": {"value": {"get_attr": ["a", "value"]}}}}}
ENV = {"resource_registry": {"resources": {"b": {"hooks": "pre-create"}}}}


@pytest.fixture
def sent(converge_nodes_sent):
    """converge_nodes tasks the code under test sends, kept here to be run by the test."""
    return converge_nodes_sent


def _run(sent):
    while sent:
        stack_id, traversal_id, node_list = sent.pop(0)
        nodes.nodes_run(stack_id, traversal_id, nodes=node_list)


def _age(stack, seconds):
    past = timezone.now() - timedelta(seconds=seconds)
    Stack.objects.filter(pk=stack.pk).update(action_started_at=past)
    Event.objects.filter(stack=stack).update(created_at=past)


def test_a_paused_node_holds_nothing_and_the_clear_releases_it(sent, settings):
    settings.HEATWEB = {**settings.HEATWEB, "RESTART_AFTER_SECONDS": 30, "STALL_SECONDS": 60}
    stack = lifecycle.stack_create(project=Project.objects.create(name="h"), user=None,
                                   name="s", template=TEMPLATE, environment=ENV)
    OutboxMessage.objects.filter(stack=stack).delete()  # published
    a = Resource.objects.get(stack=stack, name="a")
    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])
    _run(sent)

    b = Resource.objects.get(stack=stack, name="b")
    assert (b.state, b.engine_id, b.action_cookie) == ("INIT_COMPLETE", None, None)
    assert Resource.objects.get(pk=a.pk).state == "CREATE_COMPLETE"
    assert not Waiter.objects.filter(stack_id=stack.pk).exists()
    row = Breakpoint.objects.get(resource_id=b.pk)
    assert (row.hook, row.cleared, row.traversal_id) == \
        ("pre-create", False, stack.current_traversal)
    assert Event.objects.filter(stack=stack, resource_name="b").values_list(
        "resource_action", "resource_status", "resource_status_reason").get() == \
        ("INIT", "COMPLETE", "CREATE paused until Hook pre-create is cleared")

    traversal = stack.current_traversal
    _age(stack, 600)
    recovery._restart_quiet()
    recovery._fail_stalled()
    stack.refresh_from_db()
    assert (stack.state, stack.current_traversal) == ("CREATE_IN_PROGRESS", traversal)

    stack_action(stack, "signal", resource_name="b", details={"unset_hook": "pre-create"})
    with pytest.raises(InvalidBreakPointHook) as raised:
        stack_action(stack, "signal", resource_name="b", details={"unset_hook": "pre-create"})
    assert raised.value.message == (f'The "pre-create" hook is not defined on Value "b" '
                                    f'Stack "s" [{stack.pk}]')
    release = OutboxMessage.objects.get(stack=stack, task="convergence.hook_release")
    assert release.args == [str(stack.pk), traversal, b.pk, "pre-create"]
    tasks.hook_release(*release.args)
    _run(sent)
    stack.refresh_from_db()
    assert stack.state == "CREATE_COMPLETE"
    b.refresh_from_db()
    assert b.attributes_data["value"] == Resource.objects.get(pk=a.pk).attributes_data["value"]
    assert not Breakpoint.objects.filter(stack_id=stack.pk).exists()  # purged with its traversal


def test_a_new_traversal_drops_the_pause_with_heats_event(sent):
    stack = lifecycle.stack_create(project=Project.objects.create(name="h2"), user=None,
                                   name="s2", template=TEMPLATE,
                                   environment={"resource_registry": {"resources": {
                                       "*": {"hooks": "pre-create"}}}})
    a = Resource.objects.get(stack=stack, name="a")
    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[a.pk, True, {}]])
    assert Breakpoint.objects.filter(resource_id=a.pk, cleared=False).exists()
    stack_action(Stack.objects.get(pk=stack.pk), "delete")
    assert not Breakpoint.objects.filter(stack_id=stack.pk).exists()
    assert Event.objects.filter(stack=stack, resource_name="a",
                                resource_status_reason="Failure occurred while waiting.").exists()
