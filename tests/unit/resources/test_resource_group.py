"""OS::Heat::ResourceGroup without a database: the members' names and template,
index_var substitution, removal policies, the derived attributes and validation."""
import pytest

from heatweb.exceptions import RequestLimitExceeded, ResourceTypeNotFound, \
    StackValidationFailed
from stacks.definitions import build_definition
from stacks.resources.resource_group import group_attribute, member_names, members_template, \
    removed_after, substitute_index

SERVER_DEF = {"type": "OS::Nova::Server",
              "properties": {"name": "web-%index%", "image": "cirros", "flavor": "m1.tiny",
                             "metadata": {"role": "web", "slot": "%index%",
                                          "tags": ["a-%index%", {"k": "%index%-%index%"}, 3]},
                             "user_data": "#!/bin/sh\necho %index%"}}


def test_index_var_is_replaced_in_every_string_recursively_but_not_in_keys():
    value = {"%index%": "x%index%", "n": [1, "%index%", {"m": ["deep-%index%"]}], "b": True}
    assert substitute_index(value, "%index%", 7) == \
        {"%index%": "x7", "n": [1, "7", {"m": ["deep-7"]}], "b": True}
    assert substitute_index("no var here", "%index%", 1) == "no var here"


def test_members_template_names_members_by_index_with_their_own_properties():
    template = members_template(SERVER_DEF, member_names(3), index_var="%index%")
    resources = template["resources"]
    assert list(resources) == ["0", "1", "2"]
    assert resources["2"] == {"type": "OS::Nova::Server", "properties": {
        "name": "web-2", "image": "cirros", "flavor": "m1.tiny",
        "metadata": {"role": "web", "slot": "2", "tags": ["a-2", {"k": "2-2"}, 3]},
        "user_data": "#!/bin/sh\necho 2"}}
    assert SERVER_DEF["properties"]["name"] == "web-%index%"  # the definition is not changed


def test_a_custom_index_var_and_resource_metadata():
    definition = {"type": "OS::Heat::None", "properties": {"v": "__n__/%index%"},
                  "metadata": {"slot": "__n__"}}
    resources = members_template(definition, ["0", "1"], index_var="__n__")["resources"]
    assert resources["1"] == {"type": "OS::Heat::None", "properties": {"v": "1/%index%"},
                              "metadata": {"slot": "1"}}


def test_member_names_grow_and_shrink_at_the_top_and_skip_removed_indexes():
    assert member_names(0) == []
    assert member_names(5)[:2] == member_names(2) == ["0", "1"]
    assert member_names(3, removed=["1"]) == ["0", "2", "3"]


def test_removal_policies_name_members_by_index_or_reference_id():
    refs_map = {"0": "id-a", "1": "id-b", "2": "id-c"}
    policies = [{"resource_list": ["id-c", "0", "not-a-member"]}]
    assert removed_after(policies, mode="append", removed=["9"], refs_map=refs_map) == \
        ["0", "2", "9"]
    assert removed_after(policies, mode="update", removed=["9"], refs_map=refs_map) == ["0", "2"]
    assert removed_after([], mode="append", removed=["9"], refs_map=refs_map) == ["9"]


STORED = {"refs": ["a", "b", "c"], "refs_map": {"0": "a", "1": "b", "10": "c"},
          "removed_rsrc_list": [],
          "attributes": {"first_address": {"0": "10.0.0.1", "1": "10.0.0.2", "10": "10.0.0.3"},
                         "networks": {"0": {"n": ["10.0.0.1"]}, "1": {"n": ["10.0.0.2"]},
                                      "10": {"n": ["10.0.0.3"]}}}}


@pytest.mark.parametrize("name, path, value", [
    ("refs", (), ["a", "b", "c"]),
    ("refs", ("1",), "b"),
    ("refs_map", (), {"0": "a", "1": "b", "10": "c"}),
    ("attributes", ("first_address",), {"0": "10.0.0.1", "1": "10.0.0.2", "10": "10.0.0.3"}),
    ("resource.1", (), "b"),
    ("resource.1", ("first_address",), "10.0.0.2"),
    ("resource.10", ("networks", "n", 0), "10.0.0.3"),
    ("resource.7", (), None),
    ("first_address", (), ["10.0.0.1", "10.0.0.2", "10.0.0.3"]),  # in index order, 10 last
    ("first_address", (0,), "10.0.0.1"),
    ("unknown", (), [None, None, None]),
    ("removed_rsrc_list", (), []),
])
def test_attribute_forms(name, path, value):
    assert group_attribute(STORED, name, path) == value


def group_template(**properties):
    return {"heat_template_version": "2016-10-14",
            "resources": {"group": {"type": "OS::Heat::ResourceGroup",
                                    "properties": properties}}}


def test_a_valid_group_validates_with_its_defaults():
    definition = build_definition(group_template(count=2, resource_def=SERVER_DEF),
                                  environment={})
    assert definition.plugins["group"].type_name == "OS::Heat::ResourceGroup"


@pytest.mark.parametrize("properties, error, message", [
    ({"count": -1, "resource_def": SERVER_DEF}, StackValidationFailed,
     "Property error: resources.group.properties.count: -1 is out of range"),
    ({"resource_def": {"properties": {}}}, StackValidationFailed,
     "Property error: resources.group.properties.resource_def: Property type not assigned"),
    ({"resource_def": {"type": "OS::Heat::None", "depends_on": "x"}}, StackValidationFailed,
     "Property error: resources.group.properties.resource_def: Unknown Property depends_on"),
    ({"resource_def": {"type": "OS::Nova::Serverz"}}, ResourceTypeNotFound,
     "OS::Nova::Serverz"),
    ({"resource_def": {"type": "OS::Heat::None"}, "index_var": "%"}, StackValidationFailed,
     "resources.group.properties.index_var"),
    ({"resource_def": {"type": "OS::Heat::RandomString", "properties": {"lenght": 3}}},
     StackValidationFailed, "Property error: resources.group.0.properties: Unknown Property"),
    # Refused before anything is built: making 10**9 members' template would not end.
    ({"count": 10**9, "resource_def": SERVER_DEF}, RequestLimitExceeded,
     "resources.group.properties.count is 1000000000"),
])
def test_bad_groups_fail_validation(properties, error, message):
    with pytest.raises(error, match=message.replace(".", r"\.")):
        build_definition(group_template(**properties), environment={})


def test_a_scaling_group_of_a_billion_members_is_refused_at_validation():
    template = {"heat_template_version": "2016-10-14", "resources": {"asg": {
        "type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 10**9, "desired_capacity": 10**9,
            "resource": {"type": "OS::Heat::None"}}}}}
    with pytest.raises(RequestLimitExceeded, match="desired_capacity is 1000000000"):
        build_definition(template, environment={})
