"""Stack snapshots: what a stack was (template, environment, parameters, resource data)."""
import uuid

from django.db import models


class Snapshot(models.Model):
    """One snapshot of a stack (Heat's ``snapshot`` row).

    ``status`` is IN_PROGRESS while the stack's SNAPSHOT traversal runs (its
    id is the snapshot's, as in Heat's convergence), then COMPLETE or FAILED;
    ``data`` is Heat's abandon shape of the stack at that time, whose
    resources' ``resource_data`` hold what a restore needs (a server's image).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    stack = models.ForeignKey("stacks.Stack", on_delete=models.CASCADE, related_name="snapshots")
    name = models.CharField(max_length=255, blank=True, default="")
    action = models.CharField(max_length=16, default="CREATE")
    status = models.CharField(max_length=16, default="IN_PROGRESS")
    status_reason = models.TextField(blank=True, default="")
    data = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self):
        return f"snapshot {self.name or self.id} of {self.stack_id} ({self.status})"
