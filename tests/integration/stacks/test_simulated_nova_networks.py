"""A server booted without networks on the simulated cloud: Nova's choice of network.

Nova gives a server that names no network a port on the one network available to
its project (heat-templates' EIP and floating IP templates boot instances so, then
associate an address with the server's port); the simulated server had no port.
"""
import pytest

from stacks.cloud import get_cloud_driver
from stacks.cloud.models import SimObject


def _network(cloud, project_id, name, **fields):
    network = cloud.object_create("network", project_id=project_id, name=name, **fields)
    cloud.object_create("subnet", project_id=project_id, name=f"{name}-subnet",
                        network_id=network, cidr=f"10.{len(name)}.0.0/24")
    return network


def _ports_of(server_id):
    return list(SimObject.objects.filter(kind="port", fields__device_id=server_id,
                                         deleted_at__isnull=True))


@pytest.mark.django_db
def test_a_server_without_networks_gets_a_port_on_its_projects_only_network():
    cloud = get_cloud_driver()
    private = _network(cloud, "p1", "private")
    _network(cloud, "p1", "public", **{"router:external": True})  # not the project's choice
    _network(cloud, "p2", "elsewhere")  # another project's

    server_id = cloud.server_create(project_id="p1", name="vm", image="cirros",
                                    flavor="m1.tiny")

    [port] = _ports_of(server_id)
    assert port.fields["network_id"] == private
    [address] = cloud.server_get(server_id)["addresses"]["private"]
    assert address["port"] == port.pk
    assert address["addr"] == port.fields["fixed_ips"][0]["ip_address"]
    cloud.server_delete(server_id)  # the port Nova made goes with the server
    assert _ports_of(server_id) == []


@pytest.mark.django_db
def test_a_server_without_networks_gets_no_port_when_nova_would_not_choose():
    cloud = get_cloud_driver()
    lonely = cloud.server_create(project_id="p1", name="vm", image="cirros",
                                 flavor="m1.tiny")
    _network(cloud, "p1", "one")
    _network(cloud, "p2", "shared", shared=True)  # Nova counts the shared ones too
    ambiguous = cloud.server_create(project_id="p1", name="vm", image="cirros",
                                    flavor="m1.tiny")

    assert _ports_of(lonely) == [] and _ports_of(ambiguous) == []
    assert list(cloud.server_get(ambiguous)["addresses"]) == ["private"]
