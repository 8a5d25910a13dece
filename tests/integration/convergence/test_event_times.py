"""An event's time is when it happened, and a long engine task writes its events as it goes.

The engine's node code runs in this process against the real database on the
simulated cloud, whose server create is made slow (``SIM_CREATE_SECONDS``: the
call returns after that long, as a real cloud's POST would); the tasks it would
send are recorded instead of delivered.
"""
import pytest
from django.conf import settings
from django.test import override_settings

from convergence import nodes
from heatweb.models import Project
from stacks.models import Event, Resource
from stacks.models.events import EventRecorder
from stacks.services import lifecycle

pytestmark = pytest.mark.django_db

CREATE_SECONDS = 0.6
# Three servers one after the other: one task runs the chain (each node's successor
# inline), three slow cloud calls long.
TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "s1": {"type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}},
    "s2": {"type": "OS::Nova::Server", "depends_on": "s1",
           "properties": {"image": "cirros", "flavor": "m1.tiny"}},
    "s3": {"type": "OS::Nova::Server", "depends_on": "s2",
           "properties": {"image": "cirros", "flavor": "m1.tiny"}}}}


@pytest.fixture
def flushes(monkeypatch):
    """The events each flush wrote (names and statuses), the flushes themselves real."""
    written = []
    real = EventRecorder.flush

    def flush(self):
        if self.pending:
            written.append([(e.resource_name, e.resource_status) for e in self.pending])
        real(self)
    monkeypatch.setattr(EventRecorder, "flush", flush)
    return written


def test_a_chain_in_one_task_writes_its_events_as_it_goes_each_with_its_own_time(
        converge_nodes_sent, flushes, monkeypatch):
    monkeypatch.setattr(nodes, "EVENTS_DUE_SECONDS", CREATE_SECONDS / 2)
    project = Project.objects.create(name="event-times")
    with override_settings(HEATWEB={**settings.HEATWEB, "SIM_CREATE_SECONDS": CREATE_SECONDS}):
        stack = lifecycle.stack_create(project=project, user=None, name="chain",
                                       template=TEMPLATE)
        first = Resource.objects.get(stack=stack, name="s1")
        nodes.nodes_run(str(stack.pk), stack.current_traversal, nodes=[[first.pk, True, {}]])

    stack.refresh_from_db()
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert converge_nodes_sent == []  # the whole chain ran in this one task
    # s1's events were written before s2's slow create ended, not all at the task's end.
    assert len(flushes) >= 3, flushes
    assert ("s1", "COMPLETE") in flushes[0] and ("s3", "COMPLETE") not in flushes[0]
    times = {(e.resource_name, e.resource_status): e.created_at
             for e in Event.objects.filter(stack=stack).exclude(resource_name="chain")}
    # Each server's IN_PROGRESS is one slow create before its COMPLETE, and the next
    # server starts after it: the times are the events', not their inserts'.
    for name in ("s1", "s2", "s3"):
        took = (times[(name, "COMPLETE")] - times[(name, "IN_PROGRESS")]).total_seconds()
        assert took >= CREATE_SECONDS * 0.9, (name, took)
    assert times[("s1", "COMPLETE")] <= times[("s2", "IN_PROGRESS")] \
        <= times[("s2", "COMPLETE")] <= times[("s3", "IN_PROGRESS")]
