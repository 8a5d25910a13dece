"""The catalog's region in the simulated Keystone: ``keystone-manage bootstrap`` makes it
(RegionOne), so an endpoint in it is made without a region of the stack's own
(heat-templates' keystone_service_endpoint.yaml failed: "Region RegionOne could not be
found")."""
import pytest

from stacks.cloud import get_cloud_driver


@pytest.mark.django_db
def test_an_endpoint_in_the_catalogs_region_needs_no_region_made_first():
    cloud = get_cloud_driver()
    service = cloud.object_create("service", project_id="p1", name="orchestration",
                                  type="orchestration")
    endpoint = cloud.object_create("endpoint", project_id="p1", name="", service_id=service,
                                   region_id="RegionOne", interface="public",
                                   url="http://203.0.113.5/v1")

    assert cloud.object_get("endpoint", endpoint)["region_id"] == "RegionOne"
    assert cloud.object_get("region", "RegionOne")["id"] == "RegionOne"
    with pytest.raises(Exception, match="RegionTwo could not be found"):
        cloud.object_create("endpoint", project_id="p1", name="", service_id=service,
                            region_id="RegionTwo", interface="public", url="http://x/")
