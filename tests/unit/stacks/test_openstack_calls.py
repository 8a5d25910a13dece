"""How the OpenStack driver treats a cloud's failures: transient ones are tried
again (bounded), refusals become CloudError with the cloud's own words."""
import pytest
from keystoneauth1 import exceptions as ksa_exceptions
from openstack import exceptions as os_exceptions

from stacks.cloud.driver import NETWORK_IDS, CloudError, CloudNotFound
from stacks.cloud.openstack import calls
from stacks.cloud.openstack.calls import KEY_PROPERTY
from stacks.cloud.openstack.cloud import OpenStackCloud


class Flaky:
    """A cloud call that fails with ``errors`` in turn, then answers."""

    def __init__(self, *errors):
        self.errors, self.calls = list(errors), 0
        self.__name__ = "flaky"

    def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(calls, "RETRY_DELAYS", (0.01, 0.01, 0.01))


def http(status, message="boom"):
    return os_exceptions.HttpException(message=message, http_status=status)


def test_a_503_and_a_lost_connection_are_tried_again():
    call = Flaky(http(503), ksa_exceptions.ConnectFailure("reset"), http(502))
    assert calls.call(call) == "answer"
    assert call.calls == 4


def test_a_cloud_down_for_longer_fails_after_the_last_try():
    call = Flaky(*[http(503, "Service Unavailable")] * 4)
    with pytest.raises(CloudError, match="Service Unavailable"):
        calls.call(call)
    assert call.calls == 1 + len(calls.RETRY_DELAYS)


def test_a_refusal_is_not_tried_again_and_keeps_the_clouds_words():
    call = Flaky(http(409, "Instance abc is locked"))
    with pytest.raises(CloudError, match=r"Instance abc is locked \(HTTP 409\)"):
        calls.call(call)
    assert call.calls == 1
    gone = Flaky(os_exceptions.ResourceNotFound(message="No Server found", http_status=404))
    with pytest.raises(CloudNotFound):
        calls.call(gone)
    assert gone.calls == 1


class Compute:
    """openstacksdk's compute proxy, recording what is asked of it."""

    def __init__(self, missing=()):
        self.calls, self.missing = [], set(missing)

    def _action(self, name, server):
        self.calls.append((name, server))
        if server in self.missing:
            raise os_exceptions.ResourceNotFound(message=f"Instance {server} could not be found.",
                                                 http_status=404)

    def suspend_server(self, server):
        self._action("suspend", server)

    def resume_server(self, server):
        self._action("resume", server)

    def get_server(self, server):
        self._action("get", server)


def test_suspend_and_resume_go_to_the_id_without_reading_the_server_first():
    from types import SimpleNamespace

    compute = Compute(missing={"gone"})
    cloud = OpenStackCloud(connection=SimpleNamespace(compute=compute))
    cloud.server_suspend("abc")
    cloud.server_resume("abc")
    assert compute.calls == [("suspend", "abc"), ("resume", "abc")]
    with pytest.raises(CloudNotFound, match="Instance gone could not be found"):
        cloud.server_suspend("gone")


def test_a_batch_of_creates_side_by_side_looks_an_image_and_a_network_up_once():
    import threading
    import time as clock
    from types import SimpleNamespace

    looked = []

    def finder(kind):
        def find(name, ignore_missing=False):
            looked.append((kind, name))
            clock.sleep(0.05)  # a round trip: the other threads arrive meanwhile
            return SimpleNamespace(id=f"{kind}-id")
        find.__name__ = f"find_{kind}"
        return find

    net_id = "5d1e6c1c-0a4b-4f33-9a5e-2f0f4b7e8a11"
    conn = SimpleNamespace(image=SimpleNamespace(find_image=finder("image")),
                           compute=SimpleNamespace(find_flavor=finder("flavor")),
                           network=SimpleNamespace(find_network=finder("network")))
    cloud = OpenStackCloud(connection=conn)

    def boot():
        cloud.find_boot_source("image", "cirros")
        cloud._network_id({"network": net_id})

    threads = [threading.Thread(target=boot) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(looked) == [("image", "cirros"), ("network", net_id)]
    cloud._network_id({"network": "private"})  # a name: looked up every time
    cloud._network_id({"network": "private"})
    assert looked.count(("network", "private")) == 2


def test_a_metadata_update_replaces_the_set_with_the_creation_key_without_a_read():
    from types import SimpleNamespace

    sent = []
    compute = SimpleNamespace(
        put=lambda url, json: sent.append(("PUT", url, json)) or SimpleNamespace(
            status_code=200, headers={}),
        get_server=lambda server: sent.append(("GET", server)))
    cloud = OpenStackCloud(connection=SimpleNamespace(compute=compute))
    cloud.server_update("abc", creation_key="k1", metadata={"marker": "2", "n": 3})
    assert sent == [("PUT", "servers/abc/metadata", {"metadata": {
        "marker": "2", "n": "3", KEY_PROPERTY: "k1"}})]


def test_a_port_given_by_id_goes_to_nova_without_a_read_and_a_name_is_found():
    from types import SimpleNamespace

    looked = []
    network = SimpleNamespace(find_port=lambda name, ignore_missing=False: looked.append(
        name) or SimpleNamespace(id="port-of-" + name))
    cloud = OpenStackCloud(connection=SimpleNamespace(network=network))
    port_id = "8c1e6c1c-0a4b-4f33-9a5e-2f0f4b7e8a12"
    assert cloud._server_networks([{"port": port_id}, {"port": "web-port"}]) == [
        {"port": port_id}, {"port": "port-of-web-port"}]
    assert looked == ["web-port"]  # the direct script sends the id, as heatweb now does


def test_ports_of_one_network_read_it_once_per_task_for_their_network_attribute():
    from stacks.resources.base import PluginContext
    from stacks.resources.neutron import Port

    read = []

    class Cloud:
        def object_get(self, kind, object_id):
            read.append((kind, object_id))
            if kind == "network":
                return {"id": object_id, "name": "private"}
            return {"id": object_id, "network_id": "net-1", "fixed_ips": []}

    context = PluginContext(cloud=Cloud(), stack_id="s", stack_name="st", project_id="p")
    ports = [Port(name=f"p{i}", properties={}, context=context, physical_id=f"port-{i}")
             for i in range(3)]
    attributes = [port.attributes() for port in ports]
    assert [a["network"] for a in attributes] == [{"id": "net-1", "name": "private"}] * 3
    assert read.count(("network", "net-1")) == 1
    assert [r for r in read if r[0] == "port"] == [("port", f"port-{i}") for i in range(3)]


def test_a_wait_rounds_server_list_reads_ports_only_for_servers_done_building():
    from types import SimpleNamespace

    def server(server_id, status):
        return SimpleNamespace(
            id=server_id, name=server_id, status=status, image={"id": "img"}, flavor={},
            fault=None, metadata={}, is_locked=False, locked_reason=None, key_name=None,
            task_state=None, created_at=None, tags=[], has_config_drive=False,
            attached_volumes=[], availability_zone="nova", addresses={"private": [
                {"addr": f"10.0.0.{len(server_id)}", "OS-EXT-IPS-MAC:mac_addr": "m"}]})

    listed = []
    servers = [server("a", "BUILD"), server("bb", "BUILD")]
    port = SimpleNamespace(device_id="bb", mac_address="m", id="port-bb", network_id="net-1",
                           fixed_ips=[{"ip_address": "10.0.0.2"}])
    network = SimpleNamespace(ports=lambda **query: listed.append(query) or [port])
    compute = SimpleNamespace(servers=lambda details: list(servers))
    cloud = OpenStackCloud(connection=SimpleNamespace(compute=compute, network=network))
    building = cloud.server_list(["a", "bb"])
    assert listed == []  # every server still building: no Neutron request this round
    assert building["a"]["status"] == "BUILD"
    servers[1] = server("bb", "ACTIVE")
    done = cloud.server_list(["a", "bb"])
    assert listed == [{"device_id": "bb"}]  # the one done: its ports, for its attributes
    assert done["bb"]["addresses"]["private"][0]["port"] == "port-bb"
    # The addresses' network ids come from the same ports: the plugin's networks attribute
    # keys them by id too without a look-up of the network by name.
    assert done["bb"][NETWORK_IDS] == {"private": "net-1"}
    assert building["a"][NETWORK_IDS] == {}
    # Several done: one list of their ports by id, not of every port the project has.
    servers[0] = server("a", "ACTIVE")
    cloud.server_list(["a", "bb"])
    assert listed[-1] == {"device_id": ["a", "bb"]}


def test_a_tasks_server_deletes_read_the_internal_ports_once_and_detach_only_theirs():
    from types import SimpleNamespace

    from stacks.cloud.openstack.compute import INTERNAL_PORT
    from stacks.resources.base import PluginContext
    from stacks.resources.compute import Server

    listed, detached, deleted = [], [], []
    internal = SimpleNamespace(id="port-b", device_id="server-b", description=INTERNAL_PORT)
    unbound = SimpleNamespace(id="port-x", device_id="", description=INTERNAL_PORT)
    network = SimpleNamespace(ports=lambda **query: listed.append(query) or [internal, unbound])
    compute = SimpleNamespace(delete_server=lambda server_id, **_: deleted.append(server_id))
    cloud = OpenStackCloud(connection=SimpleNamespace(compute=compute, network=network))
    cloud.server_port_detach = lambda server_id, port_id: detached.append((server_id, port_id))
    context = PluginContext(cloud=cloud, stack_id="s", stack_name="st", project_id="p")
    for name in ("a", "b", "c"):
        Server(name=name, properties={}, context=context,
               physical_id=f"server-{name}").handle_delete()
    assert listed == [{"description": INTERNAL_PORT}]  # one Neutron list for the three
    assert detached == [("server-b", "port-b")]
    assert deleted == ["server-a", "server-b", "server-c"]
    # A call of its own (outside a task's plugins) still looks for them.
    cloud.server_delete("server-b")
    assert len(listed) == 2 and detached[-1] == ("server-b", "port-b")
