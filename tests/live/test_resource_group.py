"""OS::Heat::ResourceGroup through python-heatclient against the live service: a group of
servers created, read through outputs, grown, shrunk (kept members keep their servers)
and deleted; bad groups refused at validation."""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import create, hc, wait_deleted, wait_stack  # noqa: F401

pytestmark = pytest.mark.live


def group_template(count):
    return {"heat_template_version": "2016-10-14",
            "parameters": {"count": {"type": "number", "default": count}},
            "resources": {
                "web": {"type": "OS::Heat::ResourceGroup", "properties": {
                    "count": {"get_param": "count"},
                    "resource_def": {"type": "OS::Nova::Server", "properties": {
                        "name": "web-%index%", "image": "cirros", "flavor": "m1.tiny"}}}},
                "note": {"type": "OS::Heat::Value", "properties": {
                    "value": {"get_attr": ["web", "resource.0", "name"]}}}},
            "outputs": {
                "addresses": {"value": {"get_attr": ["web", "first_address"]}},
                "second": {"value": {"get_attr": ["web", "resource.1", "first_address"]}},
                "second_ref": {"value": {"get_attr": ["web", "resource.1"]}},
                "by_index": {"value": {"get_attr": ["web", "attributes", "name"]}},
                "refs": {"value": {"get_attr": ["web", "refs"]}},
                "refs_map": {"value": {"get_attr": ["web", "refs_map"]}},
                "note": {"value": {"get_attr": ["note", "value"]}}}}


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def members_of(hc, sid):
    group = hc.resources.get(sid, "web")
    return {r.resource_name: r.physical_resource_id
            for r in hc.resources.list(group.physical_resource_id)}


def test_a_group_of_servers_created_grown_shrunk_and_deleted(hc):
    _, sid = create(hc, group_template(3))
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    members = members_of(hc, sid)
    assert sorted(members) == ["0", "1", "2"]
    addresses = outputs["addresses"]
    assert len(addresses) == 3 and len(set(addresses)) == 3 and all(addresses)
    assert outputs["second"] == addresses[1]
    assert outputs["refs"] == [members["0"], members["1"], members["2"]]
    assert outputs["second_ref"] == members["1"]
    assert outputs["refs_map"] == members
    assert outputs["by_index"] == {"0": "web-0", "1": "web-1", "2": "web-2"}
    assert outputs["note"] == "web-0"  # another resource's property from the group

    hc.stacks.update(sid, template=group_template(3), parameters={"count": 5})
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    grown = members_of(hc, sid)
    assert sorted(grown) == ["0", "1", "2", "3", "4"]
    assert {k: grown[k] for k in members} == members
    assert outputs["addresses"][:3] == addresses and len(outputs["addresses"]) == 5

    hc.stacks.update(sid, template=group_template(3), parameters={"count": 2})
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert members_of(hc, sid) == {"0": members["0"], "1": members["1"]}
    assert outputs["addresses"] == addresses[:2]
    assert outputs["refs"] == [members["0"], members["1"]]

    group = hc.resources.get(sid, "web")
    hc.actions.suspend(sid)
    wait_stack(hc, sid, "SUSPEND_COMPLETE")
    assert hc.stacks.get(group.physical_resource_id).stack_status == "SUSPEND_COMPLETE"
    hc.actions.resume(sid)
    wait_stack(hc, sid, "RESUME_COMPLETE")
    assert hc.stacks.get(group.physical_resource_id).stack_status == "RESUME_COMPLETE"
    assert outputs_of(hc.stacks.get(sid))["addresses"] == addresses[:2]
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
    assert hc.stacks.get(group.physical_resource_id).stack_status == "DELETE_COMPLETE"


def test_removal_policies_remove_the_named_member_first(hc):
    template = group_template(3)
    _, sid = create(hc, template)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    members = members_of(hc, sid)
    template["resources"]["web"]["properties"]["removal_policies"] = \
        [{"resource_list": ["1"]}]
    hc.stacks.update(sid, template=template, parameters={"count": 2})
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert members_of(hc, sid) == {"0": members["0"], "2": members["2"]}
    assert hc.resources.get(sid, "web").attributes["removed_rsrc_list"] == ["1"]
    hc.stacks.update(sid, template=template, parameters={"count": 3})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert sorted(members_of(hc, sid)) == ["0", "2", "3"]  # index 1 is not used again
    assert outputs["refs"] == [members["0"], members["2"]]
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)


@pytest.mark.parametrize("properties, message", [
    ({"count": -1, "resource_def": {"type": "OS::Heat::None"}},
     "Property error: resources.web.properties.count: -1 is out of range"),
    ({"resource_def": {"properties": {}}},
     "Property error: resources.web.properties.resource_def: Property type not assigned"),
    ({"resource_def": {"type": "OS::Nova::Serverz"}},
     "The Resource Type (OS::Nova::Serverz) could not be found."),
])
def test_bad_groups_are_refused_with_400(hc, properties, message):
    template = {"heat_template_version": "2016-10-14", "resources": {
        "web": {"type": "OS::Heat::ResourceGroup", "properties": properties}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.create(stack_name=f"s{uuid.uuid4().hex[:10]}", template=template)
    assert message in str(refused.value)
