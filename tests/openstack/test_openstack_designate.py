"""Issue 36: on the real one-machine cloud, whose catalog has no Designate (``dns``),
Designate's types answer Heat's ResourceTypeUnavailable and are not listed (the simulated
cloud has them: tests/live/test_designate_types.py)."""
import pytest
from heatclient import exc as heat_exc

pytestmark = pytest.mark.openstack

ZONE = {"heat_template_version": "2018-08-31", "resources": {
    "zone": {"type": "OS::Designate::Zone",
             "properties": {"name": "example.com.", "email": "a@example.com"}},
    "www": {"type": "OS::Designate::RecordSet",
            "properties": {"zone": {"get_resource": "zone"}, "name": "www", "type": "A",
                           "records": ["192.0.2.1"]}}}}


def test_designate_types_are_unavailable_on_a_cloud_without_designate(member, admin_cloud):
    if any(s.type == "dns" for s in admin_cloud.identity.services()):
        pytest.skip("this cloud's catalog has Designate")
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        member.heat.stacks.validate(template=ZONE)
    assert raised.value.error["error"]["type"] == "ResourceTypeUnavailable"
    message = raised.value.error["error"]["message"]
    assert message.startswith("HEAT-E99001 Service designate is not available for resource "
                              "type OS::Designate::"), message
    assert message.endswith("reason: designate dns endpoint is not in service catalog.")
    listed = {t.resource_type for t in member.heat.resource_types.list()}
    assert not any(t.startswith("OS::Designate::") for t in listed)
