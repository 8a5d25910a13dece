"""Drift reports: what changed behind a stack's back."""
from django.db import models
from django.utils import timezone

from stacks.models.stack import Stack


DRIFT_STATUSES = ("IN_SYNC", "MODIFIED", "DELETED", "NOT_CHECKED")


class DriftReport(models.Model):
    """One drift detection of a stack: per resource, whether its physical object still is
    what the template set (``resources``: ``[{resource_name, resource_type,
    physical_resource_id, drift_status, differences: [{property, expected, actual}]}]``)."""

    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="drift_reports")
    at = models.DateTimeField(default=timezone.now)
    username = models.CharField(max_length=150, blank=True, default="")
    resources = models.JSONField(default=list)

    class Meta:
        indexes = [models.Index(fields=["stack", "id"])]

    def __str__(self):
        return f"drift of {self.stack_id} at {self.at}"
