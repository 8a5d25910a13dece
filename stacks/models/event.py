"""Events: every stack and resource state change, with its reason."""
import uuid

from django.db import models
from django.utils import timezone

from stacks.models.stack import Stack


class Event(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, editable=False, unique=True)
    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="events")
    resource_name = models.CharField(max_length=255)
    physical_resource_id = models.CharField(max_length=255, blank=True, default="")
    resource_type = models.CharField(max_length=255)
    resource_action = models.CharField(max_length=16)
    resource_status = models.CharField(max_length=16)
    resource_status_reason = models.TextField(blank=True, default="")
    # When it happened: an engine task builds its events as it goes and writes them
    # together (``stacks.models.events.EventRecorder``); the insert's time would be the
    # task's end for all of them.
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["stack", "id"])]

    def __str__(self):
        return f"{self.resource_name} {self.resource_action}_{self.resource_status}"
