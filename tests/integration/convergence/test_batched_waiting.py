"""Waiting costs O(1): servers that build are polled together, one list call per round.

A real Celery worker (solo pool, in this process) consumes the test's
broker; the simulated cloud takes long to boot the servers, and the test
makes the boot finish (moves ``ready_at`` into the past) once it has seen
every server waiting for a while.
"""
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from convergence.models import PollRound, Waiter
from heatweb.models import Project
from stacks.cloud.metered import CLOUD_CALLS
from stacks.cloud.models import SimServer
from stacks.cloud.simulated import SimulatedCloud
from stacks.models import Resource, Stack
from stacks.services import lifecycle
from tests.integration.convergence.conftest import wait_for

N = 200


def servers(n):
    return {"heat_template_version": "2018-08-31", "resources": {
        f"s{i}": {"type": "OS::Nova::Server", "properties": {"image": "cirros",
                                                             "flavor": "m1.tiny"}}
        for i in range(n)}}


def finished(stack_id):
    state = Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()
    return state if state in ("CREATE_COMPLETE", "CREATE_FAILED") else None


@pytest.mark.django_db(transaction=True)
def test_200_building_servers_cost_one_list_call_and_one_task_per_round(worker):
    project = Project.objects.create(name="waits")
    with override_settings(HEATWEB={**settings.HEATWEB, "SIM_BOOT_SECONDS": 3600}):
        stack = lifecycle.stack_create(project=project, user=None, name="many",
                                       template=servers(N))
        wait_for(lambda: Waiter.objects.filter(stack_id=stack.pk).count() == N)
        tasks_before, (_, calls_before) = worker.snapshot(), CLOUD_CALLS.snapshot()
        rounds_before = tasks_before["convergence.poll_round"]
        # All 200 wait: let several poll rounds go by.
        wait_for(lambda: worker.snapshot()["convergence.poll_round"] >= rounds_before + 3,
                 timeout=60)
        tasks_waiting = worker.snapshot() - tasks_before
        calls_waiting = CLOUD_CALLS.snapshot()[1] - calls_before
        assert Waiter.objects.filter(stack_id=stack.pk).count() == N
        assert PollRound.objects.filter(project_id=project.pk).count() == 1

        SimServer.objects.filter(project_id=project.pk).update(
            ready_at=timezone.now() - timedelta(seconds=1))  # the boot finishes
        assert wait_for(lambda: finished(stack.pk)) == "CREATE_COMPLETE"
    tasks_after = worker.snapshot() - tasks_before
    calls_after = CLOUD_CALLS.snapshot()[1] - calls_before

    # While they waited: only poll rounds ran, each made one list call for all 200.
    rounds = tasks_waiting["convergence.poll_round"]
    assert rounds >= 3
    assert set(tasks_waiting) == {"convergence.poll_round"}
    assert set(calls_waiting) == {"server_list"}
    # (+1: a round already started when the counting began makes its call after)
    assert calls_waiting["server_list"] <= rounds + 1
    # Finishing: 200 ready servers completed in batches of BATCH_SIZE (no task per server),
    # their attributes from the round's list call; no call per server at all.
    batches = -(-N // settings.HEATWEB["BATCH_SIZE"])
    assert tasks_after["convergence.waits_complete"] == batches
    assert calls_after["server_get"] == 0
    attributes = Resource.objects.filter(stack=stack).values_list("attributes_data", flat=True)
    assert all(a["show"]["status"] == "ACTIVE" and a["first_address"] for a in attributes)
    assert calls_after["server_status"] == 0
    assert calls_after["server_list"] <= tasks_after["convergence.poll_round"] + 1
    assert Resource.objects.filter(stack=stack, state="CREATE_COMPLETE").count() == N
    # Nobody waits any more and the round stopped re-enqueueing itself.
    assert not Waiter.objects.filter(project_id=project.pk).exists()
    wait_for(lambda: not PollRound.objects.filter(project_id=project.pk).exists(), timeout=30)


@pytest.mark.django_db(transaction=True)
def test_handing_out_200_servers_costs_one_create_each_and_one_list_per_batch(worker):
    """The first look at servers just created is one list call per batch of nodes.

    No server is looked at alone, and a first create asks the cloud for no
    object made with its creation key (nothing can carry a key given out
    just now; a rerun after a crash does look, see test_chaos).
    """
    project = Project.objects.create(name="hand-out")
    _, calls_before = CLOUD_CALLS.snapshot()
    with override_settings(HEATWEB={**settings.HEATWEB, "SIM_BOOT_SECONDS": 3600}):
        stack = lifecycle.stack_create(project=project, user=None, name="many",
                                       template=servers(N))
        wait_for(lambda: Waiter.objects.filter(stack_id=stack.pk).count() == N)
        calls = CLOUD_CALLS.snapshot()[1] - calls_before
        batches = -(-N // settings.HEATWEB["BATCH_SIZE"])
        assert calls["server_create"] == N
        assert calls["server_status"] == 0
        # One list per batch of nodes, plus those of any poll round that ran meanwhile.
        rounds = worker.snapshot()["convergence.poll_round"]
        assert batches <= calls["server_list"] <= batches + rounds
        assert set(calls) == {"server_create", "server_list"}
        assert SimServer.objects.filter(project_id=project.pk).count() == N

        SimServer.objects.filter(project_id=project.pk).update(
            ready_at=timezone.now() - timedelta(seconds=1))  # the boot finishes
        assert wait_for(lambda: finished(stack.pk)) == "CREATE_COMPLETE"
    # No round is left to run in the next test's worker.
    wait_for(lambda: not PollRound.objects.filter(project_id=project.pk).exists(), timeout=30)


@pytest.mark.django_db(transaction=True)
def test_a_cloud_that_takes_parallel_calls_gets_a_batchs_creates_side_by_side(worker,
                                                                                monkeypatch):
    """With ``parallel_calls`` > 1 (a real cloud) a batch's handle_create calls overlap.

    Every server is made once, each resource ends CREATE_COMPLETE with its own
    server, and the threads that called the cloud leave no connection behind.
    """
    monkeypatch.setattr(SimulatedCloud, "parallel_calls", 4, raising=False)
    callers = set()
    create = SimulatedCloud.server_create

    def server_create(self, **kwargs):
        callers.add(threading.get_ident())
        return create(self, **kwargs)

    monkeypatch.setattr(SimulatedCloud, "server_create", server_create)
    project = Project.objects.create(name="side-by-side")
    stack = lifecycle.stack_create(project=project, user=None, name="many", template=servers(20))
    assert wait_for(lambda: finished(stack.pk)) == "CREATE_COMPLETE"
    rows = Resource.objects.filter(stack=stack)
    assert sorted(rows.values_list("state", flat=True)) == ["CREATE_COMPLETE"] * 20
    ids = set(rows.values_list("physical_resource_id", flat=True))
    assert ids == set(SimServer.objects.filter(project_id=project.pk).values_list("id",
                                                                                flat=True))
    assert len(ids) == 20
    assert len(callers) > 1  # not all from the worker's own thread
