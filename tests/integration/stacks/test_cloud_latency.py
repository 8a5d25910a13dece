"""The simulated cloud's configurable latency and its counted API calls."""
from datetime import timedelta

import pytest
from django.test import override_settings
from django.conf import settings
from django.utils import timezone

from stacks.cloud import get_cloud_driver
from stacks.cloud.driver import CloudError
from stacks.cloud.metered import CLOUD_CALLS
from stacks.cloud.models import SimServer


def latency(**values):
    return override_settings(HEATWEB={**settings.HEATWEB, **values})


def time_passes(server_id, seconds=3600):
    """Move the server's pending transition into the past, as if ``seconds`` went by."""
    SimServer.objects.filter(pk=server_id).update(
        ready_at=timezone.now() - timedelta(seconds=seconds))


def new_server(cloud, name="s"):
    return cloud.server_create(project_id="p", name=name, image="cirros", flavor="m1.tiny")


@pytest.mark.django_db
def test_off_by_default_every_transition_is_immediate():
    cloud = get_cloud_driver()
    server = new_server(cloud)
    assert cloud.server_status(server) == "ACTIVE"
    cloud.server_suspend(server)
    assert cloud.server_status(server) == "SUSPENDED"
    cloud.server_resume(server)
    assert cloud.server_status(server) == "ACTIVE"
    cloud.server_delete(server)
    assert cloud.server_status(server) == "DELETED"


@pytest.mark.django_db
def test_each_transition_waits_its_configured_seconds():
    cloud = get_cloud_driver()
    with latency(SIM_BOOT_SECONDS=60, SIM_SUSPEND_SECONDS=60, SIM_RESUME_SECONDS=60,
                 SIM_DELETE_SECONDS=60):
        server = new_server(cloud)
        assert cloud.server_status(server) == "BUILD"
        time_passes(server)
        assert cloud.server_status(server) == "ACTIVE"
        cloud.server_suspend(server)
        assert cloud.server_status(server) == "SUSPENDING"
        time_passes(server)
        assert cloud.server_status(server) == "SUSPENDED"
        cloud.server_resume(server)
        assert cloud.server_status(server) == "RESUMING"
        time_passes(server)
        assert cloud.server_status(server) == "ACTIVE"
        cloud.server_delete(server)
        assert cloud.server_status(server) == "DELETING"
        assert cloud.server_get(server)["status"] == "DELETING"
        time_passes(server)
        assert cloud.server_status(server) == "DELETED"
        assert cloud.server_get(server) is None


@pytest.mark.django_db
def test_server_statuses_answers_for_many_in_one_call_and_settles_due_ones():
    cloud = get_cloud_driver()
    with latency(SIM_BOOT_SECONDS=60):
        servers = [new_server(cloud, f"s{i}") for i in range(5)]
        for server in servers[:3]:
            time_passes(server)
        cloud.server_delete(servers[4])
        before, by_name_before = CLOUD_CALLS.snapshot()
        statuses = cloud.server_statuses([*servers, "no-such-server"])
        after, by_name_after = CLOUD_CALLS.snapshot()
    assert statuses == {servers[0]: "ACTIVE", servers[1]: "ACTIVE", servers[2]: "ACTIVE",
                        servers[3]: "BUILD", servers[4]: "DELETED", "no-such-server": "DELETED"}
    assert after - before == 1
    assert by_name_after["server_statuses"] - by_name_before["server_statuses"] == 1
    assert SimServer.objects.filter(pk__in=servers[:3], status="ACTIVE").count() == 3


@pytest.mark.django_db
def test_image_statuses_answers_for_many_in_one_call():
    cloud = get_cloud_driver()
    kept = cloud.image_create(project_id="p", name="kept")
    gone = cloud.image_create(project_id="p", name="gone")
    cloud.image_delete(gone)
    assert cloud.image_statuses([kept, gone]) == {kept: "active", gone: "deleted"}


@pytest.mark.django_db
def test_a_server_list_shows_each_servers_volumes_in_a_constant_number_of_queries(
        django_assert_max_num_queries):
    """Nova's ``volumes_attached`` of every listed server, read in one query for the list
    (a poll round lists up to 50 servers: not one query each)."""
    cloud = get_cloud_driver()
    servers = [new_server(cloud, f"s{i}") for i in range(8)]
    volumes = [cloud.object_create("volume", project_id="p", name=f"v{i}", size=1)
               for i in range(3)]
    cloud.volume_attach(servers[0], volumes[0])
    cloud.volume_attach(servers[0], volumes[1])
    cloud.volume_attach(servers[5], volumes[2], delete_on_termination=True)
    with django_assert_max_num_queries(3):
        listed = cloud.server_list(servers)
    assert [v["id"] for v in listed[servers[0]]["volumes_attached"]] == volumes[:2]
    assert listed[servers[5]]["volumes_attached"] == [
        {"id": volumes[2], "delete_on_termination": True}]
    assert all(listed[s]["volumes_attached"] == [] for s in servers if s not in
               (servers[0], servers[5]))
    assert cloud.server_get(servers[0])["volumes_attached"] == \
        listed[servers[0]]["volumes_attached"]


@pytest.mark.django_db
def test_one_engine_tasks_server_creates_read_faults_and_the_projects_network_once(
        django_assert_num_queries):
    """Inside ``task_reads`` (one engine task's calls) the simulated Nova reads whether a
    fault is injected and which network a server given none boots on once, not per server;
    a network or a fault the task itself adds is seen by its next call."""
    cloud = get_cloud_driver()
    with cloud.task_reads():
        with django_assert_num_queries(12):  # the fault and network reads, 10 INSERTs
            servers = [new_server(cloud, f"s{i}") for i in range(10)]
        assert [cloud.server_get(s)["networks"] for s in servers] == [[]] * 10
        network = cloud.object_create("network", project_id="p", name="net")
        assert cloud.server_get(new_server(cloud, "on-net"))["networks"][0]["port"]
        cloud.inject_fault("server_create", "no room")
        with pytest.raises(CloudError, match="no room"):
            new_server(cloud, "refused")
        new_server(cloud, "fault-used-up")
    with django_assert_num_queries(3):  # outside a task: both reads again, and the INSERT
        cloud.server_create(project_id="other", name="x", image="cirros", flavor="m1.tiny")
    assert network
