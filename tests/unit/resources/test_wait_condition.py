"""Wait condition schemas: what a template may say, checked without a database."""
from types import SimpleNamespace

import pytest

from heatweb.exceptions import StackValidationFailed
from heatweb.models import Role
from stacks.hot.values import UNRESOLVED
from stacks.pages.selectors import attribute_rows
from stacks.resources import registry
from stacks.resources.wait_condition import WaitCondition, WaitConditionHandle


def test_both_types_are_registered():
    assert registry.get_plugin("OS::Heat::WaitCondition") is WaitCondition
    assert registry.get_plugin("OS::Heat::WaitConditionHandle") is WaitConditionHandle


def test_defaults_one_signal_in_an_hour():
    props = WaitCondition.validate_properties({"handle": "h"}, resource_name="wait")
    assert props == {"handle": "h", "count": 1, "timeout": 3600}


def test_an_unresolved_handle_is_accepted_at_validation():
    props = WaitCondition.validate_properties({"handle": UNRESOLVED, "count": 2},
                                              resource_name="wait")
    assert props["count"] == 2


@pytest.mark.parametrize("raw, message", [
    ({"count": 1}, "Property error: resources.wait.properties: Property handle not assigned"),
    ({"handle": "h", "count": 0}, "Property error: resources.wait.properties.count"),
    ({"handle": "h", "timeout": 0}, "Property error: resources.wait.properties.timeout"),
    ({"handle": "h", "count": "many"}, "Property error: resources.wait.properties.count"),
    ({"handle": "h", "extra": 1}, "Unknown Property extra"),
])
def test_bad_wait_condition_properties(raw, message):
    with pytest.raises(StackValidationFailed) as caught:
        WaitCondition.validate_properties(raw, resource_name="wait")
    assert message in caught.value.message


def test_handle_transports():
    assert WaitConditionHandle.validate_properties({}, resource_name="h") == \
        {"signal_transport": "TOKEN_SIGNAL"}
    assert WaitConditionHandle.validate_properties(
        {"signal_transport": "HEAT_SIGNAL"}, resource_name="h")["signal_transport"] == "HEAT_SIGNAL"
    with pytest.raises(StackValidationFailed):
        WaitConditionHandle.validate_properties({"signal_transport": "PIGEON"},
                                                resource_name="h")


def test_signal_urls_are_shown_to_owners_only():
    assert set(WaitConditionHandle.signed_url_attributes) == \
        {"endpoint", "token", "curl_cli", "signal"}
    # What the resource page does with them: the owner sees them, a reader does not.
    stack = SimpleNamespace(user_id=1)
    res = SimpleNamespace(type="OS::Heat::WaitConditionHandle", attributes_data={
        "endpoint": "http://h/webhooks/signal/x/y", "token": "y", "curl_cli": "curl ...",
        "signal": {"endpoint": "http://h/webhooks/signal/x/y"}})
    owner = attribute_rows(stack, res, user=SimpleNamespace(pk=1), role=Role.MEMBER)
    reader = attribute_rows(stack, res, user=SimpleNamespace(pk=2), role=Role.READER)
    assert not any(masked for _, _, masked in owner)
    assert all(masked for _, _, masked in reader)
