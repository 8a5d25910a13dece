"""Messages of a superseded traversal are dropped by the worker without running a task.

A real Celery worker (solo pool, in this process) consumes the test's
broker. A backlog of ``converge_nodes`` for a traversal the stack no longer
runs (as a crash leaves behind) is acknowledged as it arrives: no task
runs for it, the queue empties, and work queued behind it runs.
"""
from pathlib import Path

import pytest
from django.conf import settings

from convergence import stale
from heatweb.celery import app
from heatweb.models import Project
from stacks.models import Stack
from stacks.services import lifecycle
from tests.integration.convergence.conftest import wait_for

TEMPLATE = {"heat_template_version": "2016-10-14",
            "resources": {"a": {"type": "OS::Heat::None"}}}
BACKLOG = 300


def _state(stack_id):
    return Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()


def _queued():
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    if not settings.CELERY_BROKER_URL.startswith("heatwebfs"):
        with app.connection_for_read() as conn:
            return conn.default_channel.client.llen(settings.CELERY_TASK_DEFAULT_QUEUE)
    return sum(1 for folder in (options["data_folder_in"], options["processed_folder"])
               for _ in Path(folder).glob(f"*.{settings.CELERY_TASK_DEFAULT_QUEUE}.msg"))


@pytest.mark.django_db(transaction=True)
def test_a_backlog_of_a_superseded_traversal_runs_no_task(worker):
    project = Project.objects.create(name="stale")
    old = lifecycle.stack_create(project=project, user=None, name="old", template=TEMPLATE)
    wait_for(lambda: _state(old.pk) == "CREATE_COMPLETE", timeout=60)
    superseded = "00000000-0000-0000-0000-000000000000"
    before = worker.snapshot()
    for _ in range(BACKLOG):
        app.send_task("convergence.converge_nodes", args=[str(old.pk), superseded, [[1, True, {}]]])
    new = lifecycle.stack_create(project=project, user=None, name="new", template=TEMPLATE)
    wait_for(lambda: _state(new.pk) == "CREATE_COMPLETE", timeout=60)
    wait_for(lambda: _queued() == 0, timeout=60)
    ran = worker.snapshot() - before
    # The new stack's own tasks ran; none of the backlog did.
    assert 0 < ran["convergence.converge_nodes"] < 5, ran


@pytest.mark.django_db
def test_a_superseded_traversal_is_remembered_and_a_stopped_one_is_not(
        django_assert_num_queries):
    stack = lifecycle.stack_create(project=Project.objects.create(name="st"), user=None,
                                   name="s", template=TEMPLATE)
    current = stack.current_traversal
    assert stale.traversal_stale(str(stack.pk), current) is False
    assert stale.traversal_stale(str(stack.pk), "gone-traversal") is True
    with django_assert_num_queries(0):
        assert stale.traversal_stale(str(stack.pk), "gone-traversal") is True
    Stack.objects.filter(pk=stack.pk).update(state="CREATE_FAILED")
    assert stale.traversal_stale(str(stack.pk), current) is True
    assert current not in stale._superseded  # stopped, not superseded: asked again next time
