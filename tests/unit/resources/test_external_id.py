"""``external_id``: the adopting plugin, Heat's refusals (pure, no database)."""
import pytest

from heatweb.exceptions import InvalidTemplate, NotSupported
from stacks.resources import registry
from stacks.resources.base import PluginContext, ResourceFailure
from stacks.resources.external import EXTERNAL_ID, check_external, external_plugin, \
    refused_change


class GoneCloud:
    """A cloud in which nothing exists and nothing may be written."""

    def object_get(self, kind, object_id):
        return None

    def __getattr__(self, name):
        raise AssertionError(f"an external resource must not call {name}")


def adopted(type_name="OS::Neutron::Net", external_id="net-1"):
    cls = external_plugin(registry.get_plugin(type_name), external_id)
    context = PluginContext(cloud=GoneCloud(), stack_id="s", stack_name="st", project_id="p")
    return cls, cls(name="net", properties=cls.validate_properties({"name": "ignored"},
                                                                   resource_name="net"),
                    context=context)


def test_properties_are_not_used_and_nothing_is_ever_replaced_or_deleted():
    cls, plugin = adopted()
    assert plugin.properties == {EXTERNAL_ID: "net-1"}
    assert cls.never_replaced() and not cls.needs_replacement_for({}, {}, {"name"})
    assert plugin.handle_delete() is None and plugin.check_delete_complete(None)
    assert plugin.handle_suspend() is None and plugin.physical_lock_state() is None
    assert cls.type_name == "OS::Neutron::Net" and cls.adopted_from.type_name == cls.type_name


def test_a_missing_object_fails_the_create_in_heats_words():
    _, plugin = adopted(external_id="nosuch")
    with pytest.raises(ResourceFailure, match=r"Invalid external resource: Resource nosuch "
                                              r"\(OS::Neutron::Net\) can not be found\."):
        plugin.handle_create()


@pytest.mark.parametrize("old,new,refused", [
    ({"name": "a"}, {EXTERNAL_ID: "x"}, True),
    ({EXTERNAL_ID: "x"}, {EXTERNAL_ID: "y"}, True),
    ({EXTERNAL_ID: "x"}, {"name": "a"}, True),
    ({EXTERNAL_ID: "x"}, {EXTERNAL_ID: "x"}, False),
    ({"name": "a"}, {"name": "b"}, False),
])
def test_adding_changing_or_removing_it_is_refused(old, new, refused):
    error = refused_change(old, new, resource_name="net", type_name="OS::Neutron::Net")
    assert (error is not None) is refused
    if refused:
        assert isinstance(error, NotSupported)
        assert error.message == ("Update to property external_id of net (OS::Neutron::Net) "
                                 "is not supported.")


def test_an_explicit_dependency_or_a_non_string_id_is_refused():
    assert check_external("abc", resource_name="r", type_name="T", depends_on=None) == "abc"
    with pytest.raises(InvalidTemplate, match="Invalid dependency with external T resource: "
                                              "abc"):
        check_external("abc", resource_name="r", type_name="T", depends_on=["other"])
    with pytest.raises(InvalidTemplate, match="external_id must be a string"):
        check_external({"x": 1}, resource_name="r", type_name="T", depends_on=None)
