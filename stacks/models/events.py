"""Event rows: built in memory while work happens (each with the time it happened),
written in one insert."""
import time

from stacks.models import Event


def resource_event(resource, reason="", *, action=None, status=None):
    """An event for ``resource``; ``action``/``status`` default to its state."""
    state_action, state_status = resource.state.split("_", 1)
    if action is None or (status is None and action == state_action):
        action, status = state_action, state_status
    status = status or "IN_PROGRESS"
    return Event(stack_id=resource.stack_id, resource_name=resource.name,
                 physical_resource_id=resource.physical_resource_id or "",
                 resource_type=resource.type, resource_action=action,
                 resource_status=status, resource_status_reason=reason)


def stack_event(stack, reason=""):
    action, status = stack.state.split("_", 1)
    return Event(stack_id=stack.pk, resource_name=stack.name,
                 physical_resource_id=str(stack.pk), resource_type="OS::Heat::Stack",
                 resource_action=action, resource_status=status,
                 resource_status_reason=reason)


class EventRecorder:
    """Collects events during a task and writes them with one bulk insert."""

    def __init__(self):
        self.pending = []
        self._oldest = None  # time.monotonic() of the first event not written yet

    def add(self, event):
        if not self.pending:
            self._oldest = time.monotonic()
        self.pending.append(event)

    def flush(self):
        if self.pending:
            Event.objects.bulk_create(self.pending)
            self.pending = []

    def flush_due(self, seconds):
        """Write what waits once its first event is ``seconds`` old: a long task (a real
        cloud's calls) shows its events as it goes, a short one writes them once."""
        if self.pending and time.monotonic() - self._oldest >= seconds:
            self.flush()
