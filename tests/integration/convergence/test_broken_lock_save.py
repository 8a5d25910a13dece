"""A node whose lock is broken (its engine taken for dead) between creating the physical
resource and saving it: the physical id is kept and the node's rerun creates nothing twice.

The engine's node code runs in this process against the real database and
the simulated cloud; the sweep that breaks the lock is injected right after
the cloud created the server, which is when the race hurts. Tasks the code
would send are recorded at ``converge_nodes.delay`` (the broker boundary).
"""
import pytest

from convergence import nodes
from convergence.recovery import recover_resource
from heatweb.models import Project
from stacks.cloud.models import SimServer
from stacks.cloud.simulated import SimulatedCloud
from stacks.models import Event, Resource, Stack
from stacks.services import lifecycle

pytestmark = pytest.mark.django_db

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "server": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1"}}}}


@pytest.fixture
def sent(converge_nodes_sent):
    return converge_nodes_sent


def test_a_result_saved_after_the_lock_was_broken_keeps_its_server(monkeypatch, sent):
    project = Project.objects.create(name="broken")
    stack = lifecycle.stack_create(project=project, user=None, name="s", template=TEMPLATE)
    res = Resource.objects.get(stack=stack, name="server")
    create = SimulatedCloud.server_create

    def create_then_swept(self, **kwargs):
        server_id = create(self, **kwargs)
        held = Resource.objects.get(pk=res.pk)
        assert held.engine_id and held.state == "CREATE_IN_PROGRESS"
        recover_resource(held, held.engine_id)  # the sweep takes this engine for dead
        return server_id

    monkeypatch.setattr(SimulatedCloud, "server_create", create_then_swept)
    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[res.pk, True, {}]])
    monkeypatch.setattr(SimulatedCloud, "server_create", create)

    (server,) = SimServer.objects.filter(project_id=project.pk)
    saved = Resource.objects.get(pk=res.pk)
    assert (saved.state, saved.physical_resource_id, saved.engine_id) == \
        ("CREATE_COMPLETE", server.pk, None)
    assert Event.objects.filter(resource_name="server", resource_status="FAILED",
                                resource_status_reason="Worker went down during resource "
                                                       "CREATE").exists()
    # The sweep retriggered the node: its rerun finds the server and makes no other.
    assert [node_list for _, _, node_list in sent] == [[[res.pk, True, {}]]]
    nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=sent[0][2])
    assert SimServer.objects.filter(project_id=project.pk).count() == 1
    assert Resource.objects.get(pk=res.pk).physical_resource_id == server.pk
    assert Stack.objects.get(pk=stack.pk).state == "CREATE_COMPLETE"
