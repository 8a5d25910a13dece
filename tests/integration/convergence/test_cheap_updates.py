"""An update that changes nothing runs no resource node; one that changes something does."""
import pytest

from heatweb.models import Project
from stacks.models import Event, Resource, Stack
from stacks.services import lifecycle
from tests.integration.convergence.conftest import wait_for


def chain(n, marker):
    resources = {}
    for i in range(n):
        resources[f"r{i}"] = {"type": "OS::Heat::None", "properties": {"marker": marker}}
        if i:
            resources[f"r{i}"]["depends_on"] = f"r{i - 1}"
    return {"heat_template_version": "2018-08-31", "resources": resources}


def reached(stack_id, target):
    state = Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()
    return state if state == target or state.endswith("FAILED") else None


RESOURCE_TASKS = ("convergence.converge_nodes", "convergence.waits_complete",
                  "convergence.poll_round", "convergence.poll_node")


@pytest.mark.django_db(transaction=True)
def test_an_unchanged_update_makes_no_resource_task(worker):
    project = Project.objects.create(name="updates")
    stack = lifecycle.stack_create(project=project, user=None, name="c", template=chain(30, "a"))
    assert wait_for(lambda: reached(stack.pk, "CREATE_COMPLETE")) == "CREATE_COMPLETE"
    before = worker.snapshot()
    states_before = dict(Resource.objects.filter(stack=stack).values_list("name", "state"))

    lifecycle.stack_update(Stack.objects.get(pk=stack.pk), template=chain(30, "a"))
    assert wait_for(lambda: reached(stack.pk, "UPDATE_COMPLETE")) == "UPDATE_COMPLETE"
    ran = worker.snapshot() - before
    assert not any(ran[name] for name in RESOURCE_TASKS), ran
    assert ran["convergence.traversal_finish"] == 1
    assert dict(Resource.objects.filter(stack=stack).values_list("name", "state")) == \
        states_before
    assert list(Event.objects.filter(stack=stack, resource_type="OS::Heat::Stack")
                .order_by("id").values_list("resource_action", "resource_status"))[-2:] == \
        [("UPDATE", "IN_PROGRESS"), ("UPDATE", "COMPLETE")]
    assert not Event.objects.filter(stack=stack, resource_action="UPDATE") \
        .exclude(resource_type="OS::Heat::Stack").exists()

    # A changed property does run the resources' nodes.
    before = worker.snapshot()
    lifecycle.stack_update(Stack.objects.get(pk=stack.pk), template=chain(30, "b"))
    assert wait_for(lambda: reached(stack.pk, "UPDATE_COMPLETE")) == "UPDATE_COMPLETE"
    assert (worker.snapshot() - before)["convergence.converge_nodes"] >= 1
    assert {r.properties_data["marker"] for r in Resource.objects.filter(stack=stack)} == {"b"}
