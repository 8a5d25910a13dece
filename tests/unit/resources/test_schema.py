"""Property schemas: typing, constraints, defaults, unresolved values, update-or-replace.

Pure tests: plugin classes are validated without a database or a cloud.
"""
import time

import pytest

from heatweb.exceptions import ResourceTypeNotFound, StackValidationFailed
from stacks.hot.values import UNRESOLVED
from stacks.resources import registry
from stacks.resources.base import PluginContext, ResourceFailure, ResourcePlugin
from stacks.resources import heat_basic
from stacks.resources.heat_basic import NoneResource, RandomStringResource, ValueResource
from stacks.resources.schema import (AllowedPattern, AllowedValues, Attribute, Length, Property,
                                     PropertyError, Range)


class Sample(ResourcePlugin):
    """A plugin used only by these tests."""

    type_name = "Test::Sample"
    properties_schema = {
        "image": Property("String", required=True),
        "length": Property("Integer", default=8, constraints=(Range(1, 512),)),
        "ratio": Property("Number"),
        "enabled": Property("Boolean", default=False, update_allowed=True),
        "names": Property("List", schema=Property("String", constraints=(Length(max=3),)),
                          update_allowed=True),
        "ports": Property("List", schema=Property("Integer")),
        "opts": Property("Map", schema={"size": Property("Integer", default=1)}),
        "blob": Property("Json"),
        "color": Property("String", constraints=(AllowedValues(("red", "blue")),)),
        "code": Property("String", constraints=(AllowedPattern(r"[a-z]+",
                                                               description="lowercase only"),)),
        "label": Property("String", constraints=(Length(1, 4),), update_allowed=True),
    }
    attributes_schema = {"size": Attribute("The size.", type="Integer")}


def validate(raw, cls=Sample, name="r"):
    return cls.validate_properties(raw, resource_name=name)


def error_of(raw, cls=Sample, name="r"):
    with pytest.raises(StackValidationFailed) as info:
        validate(raw, cls, name)
    return str(info.value)


# Required, unknown and defaults ------------------------------------------------------

def test_missing_required_property():
    assert error_of({}, name="my_server") == (
        "Property error: resources.my_server.properties: Property image not assigned")


def test_null_required_property_is_not_assigned():
    assert error_of({"image": None}) == (
        "Property error: resources.r.properties: Property image not assigned")


def test_unknown_property():
    assert error_of({"image": "x", "foo": 1}) == (
        "Property error: resources.r.properties: Unknown Property foo")


def test_defaults_are_filled_in():
    assert validate({"image": "cirros"}) == {"image": "cirros", "length": 8, "enabled": False}


def test_map_sub_schema_defaults_and_typing():
    assert validate({"image": "x", "opts": {"size": "3", "extra": True}})["opts"] == {
        "size": 3, "extra": True}
    assert validate({"image": "x", "opts": {}})["opts"] == {"size": 1}


def test_map_sub_schema_required_keys_are_checked_unless_unresolved():
    entry = Property("Map", schema={"tool": Property("String", required=True),
                                    "actions": Property("List", default=["CREATE"])})
    listed = Property("List", schema=entry)
    with pytest.raises(PropertyError, match="Property tool not assigned"):
        listed.coerce([{"actions": ["CREATE"]}])
    assert listed.coerce([{"tool": UNRESOLVED, "actions": UNRESOLVED}]) == [
        {"tool": UNRESOLVED, "actions": UNRESOLVED}]


# Typing ----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, typed", [("5", 5), (7, 7), (4.0, 4)])
def test_integer_typing(raw, typed):
    assert validate({"image": "x", "length": raw})["length"] == typed


def test_integer_error_names_the_property():
    assert error_of({"image": "x", "length": "abc"}) == (
        'Property error: resources.r.properties.length: "abc" is not an integer')


def test_boolean_is_not_an_integer():
    assert "is not an integer" in error_of({"image": "x", "length": True})


@pytest.mark.parametrize("raw, typed", [("2", 2), ("2.5", 2.5), (3, 3), (0.5, 0.5)])
def test_number_typing(raw, typed):
    value = validate({"image": "x", "ratio": raw})["ratio"]
    assert value == typed and type(value) is type(typed)


def test_number_error():
    assert error_of({"image": "x", "ratio": "lots"}) == (
        'Property error: resources.r.properties.ratio: "lots" is not a number')


@pytest.mark.parametrize("raw, typed", [("true", True), ("false", False), ("True", True),
                                        (True, True), (False, False)])
def test_boolean_typing(raw, typed):
    assert validate({"image": "x", "enabled": raw})["enabled"] is typed


def test_boolean_error():
    assert "is not a valid boolean" in error_of({"image": "x", "enabled": "maybe"})


def test_string_accepts_numbers():
    assert validate({"image": 42})["image"] == "42"
    assert validate({"image": 1.5})["image"] == "1.5"


def test_string_refuses_a_map():
    assert error_of({"image": {"a": 1}}).startswith(
        "Property error: resources.r.properties.image: ")


def test_list_from_comma_string_and_item_typing():
    assert validate({"image": "x", "names": "a, b,c"})["names"] == ["a", "b", "c"]
    assert validate({"image": "x", "ports": ["80", 443]})["ports"] == [80, 443]
    assert validate({"image": "x", "names": ""})["names"] == []


def test_list_item_errors():
    assert 'is not an integer' in error_of({"image": "x", "ports": ["http"]})
    assert 'is not a list' in error_of({"image": "x", "ports": {"a": 1}})


def test_map_refuses_a_list():
    assert "is not a map" in error_of({"image": "x", "opts": [1]})


def test_json_accepts_text_or_structures():
    assert validate({"image": "x", "blob": '{"a": [1]}'})["blob"] == {"a": [1]}
    assert validate({"image": "x", "blob": [1, 2]})["blob"] == [1, 2]
    assert "is not valid JSON" in error_of({"image": "x", "blob": "{nope"})


# Constraints -------------------------------------------------------------------------------

def test_range_default_message():
    assert error_of({"image": "x", "length": 0}) == (
        "Property error: resources.r.properties.length: 0 is out of range (min: 1, max: 512)")


def test_range_custom_description():
    class Custom(ResourcePlugin):
        properties_schema = {"n": Property("Integer", constraints=(
            Range(1, 512, description="length must be in the range 1 to 512"),))}

    assert error_of({"n": 600}, cls=Custom) == (
        "Property error: resources.r.properties.n: length must be in the range 1 to 512")


def test_allowed_values():
    assert validate({"image": "x", "color": "red"})["color"] == "red"
    assert error_of({"image": "x", "color": "green"}) == (
        "Property error: resources.r.properties.color: "
        "\"green\" is not an allowed value ['red', 'blue']")


def test_allowed_pattern_uses_description():
    assert error_of({"image": "x", "code": "ABC"}) == (
        "Property error: resources.r.properties.code: lowercase only")


def test_length_on_strings_and_list_items():
    assert "out of range" in error_of({"image": "x", "label": ""})
    assert "out of range" in error_of({"image": "x", "label": "toolong"})
    assert "out of range" in error_of({"image": "x", "names": ["abcd"]})
    assert validate({"image": "x", "label": "ok"})["label"] == "ok"


# Unresolved values (get_resource / get_attr before anything exists) --------------------------

def test_unresolved_values_skip_typing_and_constraints():
    props = validate({"image": UNRESOLVED, "length": UNRESOLVED, "color": UNRESOLVED})
    assert props["image"] is UNRESOLVED
    assert props["length"] is UNRESOLVED
    assert props["color"] is UNRESOLVED


def test_unresolved_values_at_depth_are_kept():
    props = validate({"image": "x", "ports": [80, UNRESOLVED],
                      "opts": {"size": UNRESOLVED}, "blob": {"a": UNRESOLVED}})
    assert props["ports"] == [80, UNRESOLVED]
    assert props["opts"]["size"] is UNRESOLVED
    assert props["blob"]["a"] is UNRESOLVED


def test_unresolved_required_property_counts_as_assigned():
    assert validate({"image": UNRESOLVED})["image"] is UNRESOLVED


# Update or replace -----------------------------------------------------------------------------

def test_needs_replacement():
    assert Sample.needs_replacement(set()) is False
    assert Sample.needs_replacement({"enabled", "label"}) is False
    assert Sample.needs_replacement({"enabled", "length"}) is True
    assert Sample.needs_replacement({"not_in_schema"}) is True


def test_needs_replacement_for_defaults_to_changed_names():
    assert Sample.needs_replacement_for({}, {}, {"label"}) is False
    assert Sample.needs_replacement_for({}, {}, {"image"}) is True


def test_none_resource_accepts_anything_and_never_replaces():
    assert validate({"anything": [1], "else": None}, cls=NoneResource) == {
        "anything": [1], "else": None}
    assert NoneResource.needs_replacement({"anything"}) is False


def test_random_string_length_and_salt_replace():
    assert validate({}, cls=RandomStringResource)["length"] == 32
    assert "out of range" in error_of({"length": 513}, cls=RandomStringResource)
    assert RandomStringResource.needs_replacement({"salt"}) is True
    assert RandomStringResource.needs_replacement({"length"}) is True


def test_test_resource_update_replace_looks_at_new_values():
    old = validate({}, cls=heat_basic.TestResource)
    new = validate({"value": "b"}, cls=heat_basic.TestResource)
    assert heat_basic.TestResource.needs_replacement_for(old, new, {"value"}) is False
    test_resource = heat_basic.TestResource
    replacing = validate({"value": "b", "update_replace": True}, cls=test_resource)
    assert test_resource.needs_replacement_for(old, replacing, {"value", "update_replace"})


def test_value_type_is_constrained():
    assert validate({"value": [1]}, cls=ValueResource) == {"value": [1]}
    assert "is not an allowed value" in error_of({"value": 1, "type": "float"},
                                                 cls=ValueResource)
    assert "Property value not assigned" in error_of({}, cls=ValueResource)


# Plugin behaviour without a cloud ----------------------------------------------------------------

def plugin(cls, raw, name="r"):
    context = PluginContext(cloud=None, stack_id="s1", stack_name="st", project_id="p1")
    return cls(name=name, properties=validate(raw, cls=cls, name=name), context=context)


def test_random_string_is_generated_once_and_is_the_reference():
    res = plugin(RandomStringResource, {"length": 10, "sequence": "digits"})
    assert res.handle_create() is None
    value = res.data["value"]
    assert len(value) == 10 and value.isdigit()
    assert res.get_reference_id() == value
    assert res.attributes() == {"value": value}


def test_value_attribute_is_typed():
    assert plugin(ValueResource, {"value": "a,b", "type": "comma_delimited_list"}
                  ).attributes() == {"value": ["a", "b"]}
    assert plugin(ValueResource, {"value": "3", "type": "number"}).attributes() == {"value": 3}


def test_test_resource_waits_with_a_cookie_and_fails_on_request():
    res = plugin(heat_basic.TestResource, {"value": "v", "wait_secs": 30,
                                "action_wait_secs": {"update": 0}})
    cookie = res.handle_create()
    assert cookie["until"] > time.time() + 20
    assert res.check_create_complete(cookie) is False
    assert res.check_create_complete({"until": time.time() - 1}) is True
    new = validate({"value": "w"}, cls=heat_basic.TestResource)
    assert res.handle_update(new, {"value"}) is None
    assert res.attributes() == {"output": "w"}
    failing = plugin(heat_basic.TestResource, {"fail": True}, name="bad")
    with pytest.raises(ResourceFailure, match="Test Resource failed bad"):
        failing.handle_create()


def test_reference_id_defaults_to_the_name():
    res = plugin(NoneResource, {})
    assert res.get_reference_id() == "r"
    res.physical_id = "abc"
    assert res.get_reference_id() == "abc"


# Documentation and registry ----------------------------------------------------------------------

def test_schema_doc():
    doc = Sample.schema_doc()
    assert doc["resource_type"] == "Test::Sample"
    assert doc["properties"]["length"] == {
        "type": "integer", "description": "", "required": False, "update_allowed": False,
        "immutable": False, "default": 8,
        "constraints": [{"range": {"min": 1, "max": 512}, "description": None}]}
    assert doc["properties"]["image"]["required"] is True
    assert "default" not in doc["properties"]["image"]
    assert doc["attributes"] == {"size": {"description": "The size.", "type": "Integer"}}
    assert doc["support_status"] == {"status": "SUPPORTED", "version": None, "message": None,
                                     "previous_status": None}


def test_registry():
    assert registry.get_plugin("OS::Heat::TestResource") is heat_basic.TestResource
    assert registry.has_type("OS::Heat::None")
    assert not registry.has_type("OS::Nope")
    assert {"OS::Heat::None", "OS::Nova::Server", "OS::Heat::SoftwareComponent"} <= \
        set(registry.list_types())
    with pytest.raises(ResourceTypeNotFound) as info:
        registry.get_plugin("OS::Nope")
    assert str(info.value) == "The Resource Type (OS::Nope) could not be found."
