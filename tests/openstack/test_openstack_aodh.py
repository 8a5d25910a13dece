"""Issue 36: on the real one-machine cloud, whose catalog has no Aodh (``alarming``), Aodh's
types answer Heat's ResourceTypeUnavailable (the simulated cloud has them:
tests/live/test_other_tools_templates.py), and are not listed."""
import pytest
from heatclient import exc as heat_exc

pytestmark = pytest.mark.openstack

ALARM = {"heat_template_version": "2018-08-31", "resources": {"cpu_alarm_high": {
    "type": "OS::Aodh::GnocchiAggregationByResourcesAlarm",
    "properties": {"metric": "cpu", "aggregation_method": "rate:mean", "granularity": 300,
                   "evaluation_periods": 1, "threshold": 1.0, "resource_type": "instance",
                   "comparison_operator": "gt", "query": "{}"}}}}


def test_aodh_types_are_unavailable_on_a_cloud_without_aodh(member, admin_cloud):
    if any(s.type == "alarming" for s in admin_cloud.identity.services()):
        pytest.skip("this cloud's catalog has Aodh")
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        member.heat.stacks.validate(template=ALARM)
    assert raised.value.error["error"]["type"] == "ResourceTypeUnavailable"
    assert raised.value.error["error"]["message"] == (
        "HEAT-E99001 Service aodh is not available for resource type "
        "OS::Aodh::GnocchiAggregationByResourcesAlarm, reason: aodh alarming endpoint is not "
        "in service catalog.")
    listed = {t.resource_type for t in member.heat.resource_types.list()}
    assert not any(t.startswith("OS::Aodh::") for t in listed)
