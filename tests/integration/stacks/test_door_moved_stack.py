"""The door asks again when a user's action read the stack in progress and its
traversal ended before the action's write.

A delete read the stack while its create ran; the create's traversal ended before
the delete's compare-and-swap save. The delete's transaction rolls back, the door
reads the stack again and deletes it (CI once saw a 409 ``ConcurrentTransaction``
for ``openstack stack delete`` right after a create). A stack that moved into a
state the table refuses gets the table's refusal, not a conflict. The engine's own
calls (no user) keep the conflict: each has its own way to look again.
"""
import uuid

import pytest
from django.contrib.auth import get_user_model

from heatweb.exceptions import ConcurrentTransaction, Conflict
from heatweb.models import Project
from stacks.models import Stack
from stacks.services import lifecycle
from stacks.services.actions import stack_action

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14",
            "resources": {"a": {"type": "OS::Heat::RandomString"}}}


def _stack():
    return lifecycle.stack_create(project=Project.objects.create(name="p"), user=None,
                                  name="s", template=TEMPLATE)


@pytest.fixture
def user():
    return get_user_model().objects.create(username="door-user")


def _moved(stack, state):
    """Another worker ends the create: the row moves on, the caller's copy does not."""
    Stack.objects.filter(pk=stack.pk).update(state=state, current_traversal=str(uuid.uuid4()))


def test_a_delete_read_during_the_create_deletes_the_stack_the_create_completed(user):
    stack = _stack()
    stale = Stack.objects.get(pk=stack.pk)
    assert stale.state == "CREATE_IN_PROGRESS"
    _moved(stack, "CREATE_COMPLETE")

    stack_action(stale, "delete", user=user)

    row = Stack.objects.get(pk=stack.pk)
    assert row.state == "DELETE_IN_PROGRESS"
    assert row.current_traversal == stale.current_traversal


def test_a_stack_that_moved_into_a_refusing_state_gets_the_tables_refusal(user):
    stack = _stack()
    stale = Stack.objects.get(pk=stack.pk)
    _moved(stack, "LOCK_IN_PROGRESS")

    with pytest.raises(Conflict) as refused:
        stack_action(stale, "delete", user=user)

    assert not isinstance(refused.value, ConcurrentTransaction)
    assert Stack.objects.get(pk=stack.pk).state == "LOCK_IN_PROGRESS"


def test_the_engines_own_call_keeps_the_conflict():
    stack = _stack()
    stale = Stack.objects.get(pk=stack.pk)
    _moved(stack, "CREATE_COMPLETE")

    with pytest.raises(ConcurrentTransaction):
        stack_action(stale, "delete")

    assert Stack.objects.get(pk=stack.pk).state == "CREATE_COMPLETE"


def test_a_stack_read_settled_that_moved_keeps_the_conflict(user):
    """Read settled, then another action began: the conflict is the answer (the engine's
    lock taken again relies on it to look again)."""
    stack = _stack()
    Stack.objects.filter(pk=stack.pk).update(state="CREATE_COMPLETE")
    stale = Stack.objects.get(pk=stack.pk)
    _moved(stack, "UPDATE_IN_PROGRESS")

    with pytest.raises(ConcurrentTransaction):
        stack_action(stale, "suspend", user=user)
