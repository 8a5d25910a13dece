"""A group stores where its members are, not a copy of them: its row does not grow with them,
and get_attr, outputs and the resource's attributes read them from the member rows."""
import json

import pytest

from heatweb.models import Project
from stacks.models import Resource, Stack
from stacks.selectors import resource_attributes, stack_outputs
from stacks.services import lifecycle
from tests.integration.convergence.conftest import wait_for


def template(kind, size):
    if kind == "rg":
        group = {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": size, "resource_def": {"type": "OS::Heat::Value",
                                            "properties": {"value": "v%index%"}}}}
    else:
        group = {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 0, "max_size": 100, "desired_capacity": size,
            "resource": {"type": "OS::Heat::Value", "properties": {"value": "v"}}}}
    listed = "value" if kind == "rg" else {"get_attr": ["group", "outputs_list", "value"]}
    return {"heat_template_version": "2018-08-31", "resources": {
        "group": group,
        "user": {"type": "OS::Heat::Value",
                 "properties": {"value": {"get_attr": ["group", "refs"]}}}},
        "outputs": {"values": {"value": {"get_attr": ["group", listed]} if kind == "rg"
                               else listed},
                    "first": {"value": {"get_attr": ["group", "resource.0", "value"]}}}}


def reached(stack_id, target):
    state = Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()
    return state if state == target or state.endswith("FAILED") else None


def group_row(stack):
    return Resource.objects.get(stack=stack, name="group", replaced_by__isnull=True)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["rg", "asg"])
def test_the_group_row_does_not_grow_with_its_members(worker, kind):
    project = Project.objects.create(name=f"groups-{kind}")
    stack = lifecycle.stack_create(project=project, user=None, name="g",
                                   template=template(kind, 2))
    assert wait_for(lambda: reached(stack.pk, "CREATE_COMPLETE")) == "CREATE_COMPLETE"
    small = group_row(stack).attributes_data

    lifecycle.stack_update(Stack.objects.get(pk=stack.pk), template=template(kind, 30))
    assert wait_for(lambda: reached(stack.pk, "UPDATE_COMPLETE")) == "UPDATE_COMPLETE"
    row = group_row(stack)
    assert set(row.attributes_data) == set(small)  # the same few keys, none per member
    assert len(json.dumps(row.attributes_data)) < 200

    members = Resource.objects.filter(stack__parent=stack, replaced_by__isnull=True)
    refs = {r.name: r.physical_resource_id or r.name for r in members}
    assert len(refs) == 30
    shown = resource_attributes(row)
    assert shown["refs_map"] == refs
    assert sorted(shown["refs"]) == sorted(refs.values())
    user = Resource.objects.get(stack=stack, name="user")
    assert sorted(user.attributes_data["value"]) == sorted(refs.values())
    outputs = {o["output_key"]: o["output_value"] for o in stack_outputs(stack)}
    assert len(outputs["values"]) == 30
    assert outputs["first"] == ("v0" if kind == "rg" else None)
