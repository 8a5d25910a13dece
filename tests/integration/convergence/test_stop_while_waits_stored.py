"""A stack that stops while a task is still storing its waits gets its round now.

A lock with ``interrupt: cancel`` fails the update in the request; the task
handing out the update's 50 resources may still be running, and its waits
are committed after the cancel looked for waiters (it found none). Their own
round was 600 s away (the resources' wait), so the lock waited minutes for
them (seen in a full run here). The stop's look and the waits' look both
happen after their commits, so one of them sees the other.
"""
import time
import uuid
from types import SimpleNamespace

import pytest

from convergence import waiting
from convergence.models import PollRound, Waiter
from heatweb.models import Project
from stacks.models import Stack
from stacks.services import lifecycle

TEMPLATE = {"heat_template_version": "2016-10-14",
            "resources": {"a": {"type": "OS::Heat::None"}}}


def _waits_of(stack):
    now = time.time()
    return SimpleNamespace(waits=[Waiter(
        resource_id=res.pk, project_id=stack.project_id, stack_id=stack.pk,
        traversal_id=stack.current_traversal, since=now, next_check=now + 600,
        ticket=uuid.uuid4().hex) for res in stack.resources.all()])


@pytest.fixture
def rounds_sent(monkeypatch):
    """The round tasks the code asked for, kept here: none reaches the test broker (a
    round due in 600 s left there would hold the next test's queue that long)."""
    sent = []
    monkeypatch.setattr(waiting, "_enqueue_round", lambda project_id, token, *, countdown:
                        sent.append((project_id, countdown)))
    return sent


@pytest.fixture
def stack(db, rounds_sent):
    made = lifecycle.stack_create(project=Project.objects.create(name="stopped"), user=None,
                                  name="s", template=TEMPLATE)
    PollRound.objects.filter(pk=made.project_id).delete()
    rounds_sent.clear()
    return made


def _round_due_in(project_id):
    return PollRound.objects.get(pk=project_id).due_at - time.time()


def test_waits_stored_for_a_running_stack_get_their_own_due_round(
        stack, rounds_sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        waiting.waits_flush(_waits_of(stack))
    assert _round_due_in(stack.project_id) > 500
    assert [(p, c > 500) for p, c in rounds_sent] == [(stack.project_id, True)]


def test_waits_stored_after_their_stack_stopped_get_a_round_now(
        stack, rounds_sent, django_capture_on_commit_callbacks):
    ctx = _waits_of(stack)
    Stack.objects.filter(pk=stack.pk).update(state="UPDATE_FAILED")  # cancelled meanwhile
    with django_capture_on_commit_callbacks(execute=True):
        waiting.waits_flush(ctx)
    assert _round_due_in(stack.project_id) < 5
    assert rounds_sent[-1] == (stack.project_id, 0)


def test_a_stop_looks_for_waiters_after_its_commit(stack, rounds_sent,
                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as looks:
        waiting.stack_stopped(stack)  # no waiter yet: the look is kept for the commit
    assert len(looks) == 1 and not PollRound.objects.filter(pk=stack.project_id).exists()
    Waiter.objects.bulk_create(_waits_of(stack).waits)  # stored by a task meanwhile
    with django_capture_on_commit_callbacks(execute=True):
        looks[0]()
    assert _round_due_in(stack.project_id) < 5
    assert rounds_sent == [(stack.project_id, 0)]
