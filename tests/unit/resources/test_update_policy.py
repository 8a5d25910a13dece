"""Update policies typed and checked as Heat does (no database)."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.resources.update_policy import BATCH_CREATE_SCHEMA, ROLLING_UPDATE_SCHEMA, \
    policy_values
from stacks.resources.schema import Property

GROUP = {"rolling_update": Property("Map", schema=ROLLING_UPDATE_SCHEMA),
         "batch_create": Property("Map", schema=BATCH_CREATE_SCHEMA)}


def test_defaults_fill_the_given_policies_only():
    assert policy_values(GROUP, {"rolling_update": {"max_batch_size": "2"}},
                         resource_name="g") == {
        "rolling_update": {"min_in_service": 0, "max_batch_size": 2, "pause_time": 0}}
    assert policy_values(GROUP, None, resource_name="g") == {}
    assert policy_values({}, {}, resource_name="g") == {}


@pytest.mark.parametrize("schema, raw, message", [
    (GROUP, {"rolling": {}}, "update_policy: Unknown Property rolling"),
    (GROUP, {"rolling_update": {"size": 1}}, "update_policy.rolling_update: Unknown Property size"),
    (GROUP, {"rolling_update": {"min_in_service": -1}},
     "update_policy.rolling_update.min_in_service: -1 is out of range (min: 0, max: None)"),
    (GROUP, {"batch_create": {"pause_time": "soon"}},
     'update_policy.batch_create.pause_time: "soon" is not a number'),
    (GROUP, {"batch_create": [1]}, 'update_policy.batch_create: "[1]" is not a map'),
    ({}, {"rolling_update": {}}, "update_policy: Unknown Property rolling_update"),
])
def test_heat_refuses(schema, raw, message):
    with pytest.raises(StackValidationFailed) as caught:
        policy_values(schema, raw, resource_name="g")
    assert caught.value.message == f"Property error: resources.g.{message}"
