"""The environment's ``event_sinks``, as Heat's: ``[{type: zaqar-queue, target: <queue>,
ttl: <seconds>}]`` posts each of the stack's events to that Zaqar queue, one message a
event, Heat's body (``type`` ``os.heat.event``, ``payload`` with the resource's name,
physical id, stack id, action, status, reason and type).

Heat posts each event as it is made; heatweb posts an action's events when the action's
traversal ends (complete or failed), in order, after its transaction commits, through
the stack's own cloud (its trust in Keystone mode): a queue's reader sees them all once
the stack has settled. ``resource_properties`` is empty (heatweb's events keep no
properties). A post the cloud refuses is logged, not retried; the stack is not failed
for it (as Heat's sinks). Other sink types are ignored.
"""
import logging
from datetime import timedelta

from django.db import transaction

from stacks.cloud import cloud_for_stack
from stacks.models import Event

log = logging.getLogger(__name__)

SINK_TYPE = "zaqar-queue"
DEFAULT_TTL = 3600  # Heat's ZaqarClientPlugin.DEFAULT_TTL
# The stack's first event of an action may be stamped just before action_started_at.
SLACK = timedelta(seconds=1)


def _sinks(stack):
    environment = (stack.raw_template.environment if stack.raw_template_id else None) or {}
    return [sink for sink in environment.get("event_sinks") or []
            if isinstance(sink, dict) and sink.get("type") == SINK_TYPE and sink.get("target")]


def as_message(event, stack_id):
    """Heat's ``Event.as_dict()``."""
    return {"timestamp": event.created_at.isoformat(), "version": "0.1",
            "type": "os.heat.event", "id": str(event.uuid),
            "payload": {"resource_name": event.resource_name,
                        "physical_resource_id": event.physical_resource_id,
                        "stack_id": str(stack_id), "resource_action": event.resource_action,
                        "resource_status": event.resource_status,
                        "resource_status_reason": event.resource_status_reason,
                        "resource_type": event.resource_type, "resource_properties": {},
                        "version": "0.1"}}


def traversal_events_to_sinks(stack, action, traversal_id, outcome):
    """Registered with ``on_traversal_finished``: the action's events to the sinks."""
    sinks = _sinks(stack)
    if not sinks:
        return
    rows = Event.objects.filter(stack_id=stack.pk, resource_action=action)
    if stack.action_started_at is not None:
        rows = rows.filter(created_at__gte=stack.action_started_at - SLACK)
    bodies = [as_message(event, stack.pk) for event in rows.order_by("id")]
    if not bodies:
        return

    def post():
        cloud = cloud_for_stack(stack)
        for sink in sinks:
            try:
                cloud.queue_post(str(sink["target"]), bodies,
                                 ttl=int(sink.get("ttl") or DEFAULT_TTL))
            except Exception as error:  # a sink's failure never fails the stack (Heat's)
                log.warning("event sink %s of stack %s: %s", sink["target"], stack.pk, error)

    transaction.on_commit(post)
