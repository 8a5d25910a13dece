"""Signals a wait condition handle received (``OS::Heat::WaitConditionHandle``)."""
from django.db import models

from stacks.models.resource import Resource


class WaitConditionSignal(models.Model):
    """One signal to a handle. A signal id counts once: a repeated id replaces the
    signal it had, as Heat's metadata does (the unique constraint makes two racing
    signals with one id a single row)."""

    resource = models.ForeignKey(Resource, on_delete=models.CASCADE,
                                 related_name="wait_signals")
    signal_id = models.CharField(max_length=255)
    status = models.CharField(max_length=16)
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["resource", "signal_id"],
                                               name="wait_signal_once_per_id")]
