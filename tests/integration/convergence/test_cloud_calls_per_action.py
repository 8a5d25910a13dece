"""The cloud calls a stack's actions make beside the ones they need (bench_direct compares
them with a script's): a suspend or resume reads no object it does not act on, and a
server's update of its metadata reads the server neither before nor after; a Neutron
object's delete is not followed by a read."""
import pytest
from django.utils import timezone

from heatweb.models import Project
from stacks.cloud.metered import CLOUD_CALLS
from stacks.cloud.models import SimServer
from stacks.models import Resource, Stack
from stacks.services import lifecycle
from tests.integration.convergence.conftest import wait_for


def network_and_server(marker):
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.9.0.0/24"}},
        "port": {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "net"},
            "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny", "metadata": {"marker": marker},
            "networks": [{"port": {"get_resource": "port"}}]}}}}


def reached(stack_id, target):
    state = Stack.objects.filter(pk=stack_id).values_list("state", flat=True).first()
    return state if state == target or state.endswith("FAILED") else None


def created(name):
    """A stack of a network, a subnet, a port and a server, created in a new project."""
    project = Project.objects.create(name=name)
    stack = lifecycle.stack_create(project=project, user=None, name=name,
                                   template=network_and_server("1"))
    assert wait_for(lambda: reached(stack.pk, "CREATE_COMPLETE")) == "CREATE_COMPLETE"
    return stack


def calls_of(start, stack_id, target):
    before = CLOUD_CALLS.snapshot()[1]
    start(Stack.objects.get(pk=stack_id))
    assert wait_for(lambda: reached(stack_id, target)) == target
    return CLOUD_CALLS.snapshot()[1] - before


@pytest.mark.django_db(transaction=True)
def test_suspend_resume_and_update_read_only_what_they_act_on(worker):
    stack = created("calls")
    attributes = dict(Resource.objects.filter(stack=stack).values_list("name",
                                                                       "attributes_data"))

    for action, target in ((lifecycle.stack_suspend, "SUSPEND_COMPLETE"),
                           (lifecycle.stack_resume, "RESUME_COMPLETE")):
        calls = calls_of(action, stack.pk, target)
        # The network, subnet and port do nothing to suspend: not read; the server's
        # status and attributes come from the poll round's list.
        assert calls["object_get"] == calls["server_get"] == calls["server_status"] == 0, calls
        kept = dict(Resource.objects.filter(stack=stack).exclude(name="server")
                    .values_list("name", "attributes_data"))
        assert kept == {k: v for k, v in attributes.items() if k != "server"}

    calls = calls_of(lambda s: lifecycle.stack_update(s, template=network_and_server("2")),
                     stack.pk, "UPDATE_COMPLETE")
    assert calls["server_update"] == 1
    # The metadata alone changed: the attributes are the stored ones with the metadata
    # sent, so neither a read before nor one after (the direct script reads none).
    assert calls["server_get"] == 0, calls
    server = Resource.objects.get(stack=stack, name="server")
    assert server.attributes_data["show"]["metadata"] == {"marker": "2"}
    assert server.attributes_data["show"] == {
        **attributes["server"]["show"], "metadata": {"marker": "2"}}
    assert SimServer.objects.get(pk=server.physical_resource_id).metadata == {"marker": "2"}

    calls = calls_of(lifecycle.stack_delete, stack.pk, "DELETE_COMPLETE")
    # Neutron's answer to a delete says the object is gone: no read after it.
    assert calls["object_delete"] == 3
    assert calls["object_get"] == 0, calls


@pytest.mark.django_db(transaction=True)
def test_an_update_of_a_server_deleted_outside_heatweb_says_so(worker):
    stack = created("gone")
    server_id = Resource.objects.get(stack=stack, name="server").physical_resource_id
    SimServer.objects.filter(pk=server_id).update(deleted_at=timezone.now())

    lifecycle.stack_update(Stack.objects.get(pk=stack.pk), template=network_and_server("2"))
    assert wait_for(lambda: reached(stack.pk, "UPDATE_COMPLETE")) == "UPDATE_FAILED"
    reason = Resource.objects.get(stack=stack, name="server").status_reason
    assert f"The server {server_id} could not be found (deleted outside heatweb)" in reason
