"""The door asks again when the stack moved between its read and its write.

A delete read the stack while its create ran; the create's traversal ended before
the delete's compare-and-swap save. The delete's transaction rolls back, the door
reads the stack again and deletes it (CI once saw a 409 ``ConcurrentTransaction``
for ``openstack stack delete`` right after a create). A stack that moved into a
state the table refuses gets the table's refusal, not a conflict.
"""
import uuid

import pytest

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


def _moved(stack, state):
    """Another worker ends the create: the row moves on, the caller's copy does not."""
    Stack.objects.filter(pk=stack.pk).update(state=state, current_traversal=str(uuid.uuid4()))


def test_a_delete_read_during_the_create_deletes_the_stack_the_create_completed():
    stack = _stack()
    stale = Stack.objects.get(pk=stack.pk)
    assert stale.state == "CREATE_IN_PROGRESS"
    _moved(stack, "CREATE_COMPLETE")

    stack_action(stale, "delete")

    row = Stack.objects.get(pk=stack.pk)
    assert row.state == "DELETE_IN_PROGRESS"
    assert row.current_traversal == stale.current_traversal


def test_a_stack_that_moved_into_a_refusing_state_gets_the_tables_refusal():
    stack = _stack()
    stale = Stack.objects.get(pk=stack.pk)
    _moved(stack, "LOCK_IN_PROGRESS")

    with pytest.raises(Conflict) as refused:
        stack_action(stale, "delete")

    assert not isinstance(refused.value, ConcurrentTransaction)
    assert Stack.objects.get(pk=stack.pk).state == "LOCK_IN_PROGRESS"
