"""Idempotent physical creates, Neutron objects and prior-state locks on the simulated cloud.

A worker that crashes after the cloud call and before recording the
physical id runs the create again on a fresh plugin: it must find the object
it made (by its creation key) instead of making a second one.
"""
import time

import pytest

from stacks.cloud import get_cloud_driver
from stacks.cloud.models import SimImage, SimObject, SimServer
from stacks.resources.base import CREATION_KEY, PluginContext, ResourceFailure
from stacks.resources.registry import get_plugin


def plugin(type_name, name, properties, *, resource_id=7, lock_reason=""):
    cls = get_plugin(type_name)
    context = PluginContext(cloud=get_cloud_driver(), stack_id="stack-1", stack_name="web",
                            project_id="p1", lock_reason=lock_reason)
    props = cls.validate_properties(properties, resource_name=name)
    # The key the engine stores before a create (one per resource row).
    return cls(name=name, properties=props, context=context,
               data={CREATION_KEY: f"key-{resource_id}"})


def create_twice(type_name, name, properties, *, resource_id):
    first = plugin(type_name, name, properties, resource_id=resource_id)
    first.handle_create()
    again = plugin(type_name, name, properties, resource_id=resource_id)  # the re-run
    again.handle_create()
    return first.physical_id, again.physical_id


@pytest.mark.django_db
def test_a_create_run_again_finds_each_object_it_made():
    net, net_again = create_twice("OS::Neutron::Net", "net", {}, resource_id=1)
    subnet, subnet_again = create_twice("OS::Neutron::Subnet", "subnet",
                                        {"network": net, "cidr": "10.8.0.0/24"}, resource_id=2)
    port, port_again = create_twice("OS::Neutron::Port", "port", {"network": net},
                                    resource_id=3)
    image, image_again = create_twice("OS::Glance::Image", "image",
                                      {"data": "bytes", "disk_format": "raw"}, resource_id=4)
    server, server_again = create_twice("OS::Nova::Server", "server",
                                        {"image": image, "flavor": "m1.tiny",
                                         "networks": [{"port": port}]}, resource_id=5)

    assert (net, subnet, port, image, server) == \
        (net_again, subnet_again, port_again, image_again, server_again)
    assert SimObject.objects.filter(kind="network").count() == 1
    assert SimObject.objects.filter(kind="port").count() == 1
    assert SimImage.objects.count() == 1
    assert SimServer.objects.count() == 1
    assert SimServer.objects.get().creation_key == "key-5"


@pytest.mark.django_db
def test_another_resource_row_makes_its_own_object():
    first, _ = create_twice("OS::Glance::Image", "image", {"data": "x"}, resource_id=1)
    replacement, _ = create_twice("OS::Glance::Image", "image", {"data": "x"}, resource_id=2)
    assert first != replacement and SimImage.objects.count() == 2


@pytest.mark.django_db
def test_a_server_on_a_port_has_the_port_address_as_first_address():
    net = plugin("OS::Neutron::Net", "net", {"name": "blue"}, resource_id=1)
    net.handle_create()
    subnet = plugin("OS::Neutron::Subnet", "subnet",
                    {"network": net.physical_id, "cidr": "10.8.0.0/24"}, resource_id=2)
    subnet.handle_create()
    port = plugin("OS::Neutron::Port", "port", {"network": net.physical_id}, resource_id=3)
    port.handle_create()
    server = plugin("OS::Nova::Server", "server", {"image": "i", "flavor": "f",
                                                   "networks": [{"port": port.physical_id}]})
    server.handle_create()

    address = port.get_attribute("fixed_ips")[0]["ip_address"]
    assert address == "10.8.0.2"
    assert server.get_attribute("first_address") == address
    # keyed by the network's name and, as Heat's, its id
    assert server.get_attribute("networks") == {"blue": [address], net.physical_id: [address]}
    # As Heat, a delete the cloud refuses with a conflict is tried again on later polls
    # (the server's delete may be releasing the port), until CONFLICT_SECONDS have passed.
    cookie = net.handle_delete()
    assert "in use" in cookie["conflict"]
    assert net.check_delete_complete(cookie) is False
    with pytest.raises(ResourceFailure, match="in use"):
        net.check_delete_complete({**cookie, "conflict_until": time.time() - 1})
    server.handle_delete()
    port.handle_delete()
    subnet.handle_delete()
    assert net.check_delete_complete(cookie) is True


@pytest.mark.django_db
def test_unlock_leaves_a_server_locked_before_the_stack_lock_locked():
    cloud = get_cloud_driver()
    mine = plugin("OS::Nova::Server", "mine", {"image": "i", "flavor": "f"}, resource_id=1,
                  lock_reason="DB maintenance")
    theirs = plugin("OS::Nova::Server", "theirs", {"image": "i", "flavor": "f"}, resource_id=2)
    mine.handle_create()
    theirs.handle_create()
    cloud.server_lock(theirs.physical_id, reason="ops")

    for server in (mine, theirs):
        server.handle_lock()
    assert cloud.server_get(mine.physical_id)["locked_reason"] == \
        "heatweb stack web locked: DB maintenance"
    assert cloud.server_get(theirs.physical_id)["locked_reason"] == "ops"
    for server in (mine, theirs):
        server.handle_unlock()

    assert cloud.server_get(mine.physical_id)["locked"] is False
    assert cloud.server_get(theirs.physical_id)["locked"] is True


@pytest.mark.django_db
def test_a_server_in_error_fails_with_the_cloud_fault():
    server = plugin("OS::Nova::Server", "s", {"image": "i", "flavor": "f"})
    server.handle_create()
    get_cloud_driver().driver.server_set_error(server.physical_id, "No valid host was found.")
    with pytest.raises(ResourceFailure,
                       match='Went to status ERROR due to "Message: No valid host was found."'):
        server.check_create_complete(None)


@pytest.mark.django_db
def test_a_port_is_handed_to_the_replacement_of_its_server():
    net = plugin("OS::Neutron::Net", "net", {"name": "blue"}, resource_id=1)
    net.handle_create()
    plugin("OS::Neutron::Subnet", "subnet", {"network": net.physical_id,
                                             "cidr": "10.8.0.0/24"}, resource_id=2).handle_create()
    port = plugin("OS::Neutron::Port", "port", {"network": net.physical_id}, resource_id=3)
    port.handle_create()
    props = {"image": "i", "flavor": "f", "networks": [{"port": port.physical_id}]}
    old = plugin("OS::Nova::Server", "server", props, resource_id=4)
    old.handle_create()
    assert port.get_attribute("device_id") == old.physical_id
    new = plugin("OS::Nova::Server", "server", {**props, "image": "j"}, resource_id=5)
    with pytest.raises(ResourceFailure, match=f"Port {port.physical_id} is still in use"):
        new.handle_create()

    old.prepare_for_replace()
    assert port.get_attribute("device_id") == ""
    new.handle_create()
    assert port.get_attribute("device_id") == new.physical_id
    assert new.get_attribute("first_address") == "10.8.0.2"
    old.handle_delete()  # the old server's delete leaves the port to its new holder
    assert port.get_attribute("device_id") == new.physical_id


@pytest.mark.django_db
def test_a_port_takes_security_groups_by_name_and_the_default_group_exists():
    net = plugin("OS::Neutron::Net", "net", {}, resource_id=1)
    net.handle_create()
    web = plugin("OS::Neutron::SecurityGroup", "sg", {"name": "web"}, resource_id=2)
    web.handle_create()
    port = plugin("OS::Neutron::Port", "port", {"network": net.physical_id,
                                                "security_groups": ["default", "web"]},
                  resource_id=3)
    port.handle_create()
    default = SimObject.objects.get(kind="security_group", name="default")
    assert port.get_attribute("security_groups") == [default.pk, web.physical_id]
    with pytest.raises(ResourceFailure, match="Security group nosuch could not be found"):
        plugin("OS::Neutron::Port", "port2", {"network": net.physical_id,
                                              "security_groups": ["nosuch"]},
               resource_id=4).handle_create()
