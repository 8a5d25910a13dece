"""Lock history: one row per lock, relock, unlock, expiry, refusal and heal of a stack."""
from django.conf import settings
from django.db import models
from django.utils import timezone

from stacks.models.stack import Stack

KINDS = ("lock", "relock", "unlock", "expiry", "refusal", "heal", "interrupt", "resume")


class LockRecord(models.Model):
    """Who did what to a stack's lock, when, at which level, why and for how long.

    ``username`` is kept as written (the user may be deleted later); the
    engine's own records (an expiry, a heal) say "the engine". ``expires_at``
    is the window a lock was taken for; ``held_seconds`` how long the lock
    had held when it was released (unlock, expiry).
    """

    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="lock_records")
    kind = models.CharField(max_length=16, choices=[(k, k) for k in KINDS])
    at = models.DateTimeField(default=timezone.now)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    username = models.CharField(max_length=150, blank=True, default="")
    level = models.CharField(max_length=8, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    held_seconds = models.FloatField(null=True, blank=True)
    detail = models.TextField(blank=True, default="")
    # The lock's mode: what it let through (``Stack.lock_allow``).
    allow = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [models.Index(fields=["stack", "id"])]

    def __str__(self):
        return f"{self.kind} of {self.stack_id} by {self.username or 'the engine'}"


WINDOW_STATES = ("scheduled", "waiting", "active", "done", "cancelled", "failed")


class LockWindow(models.Model):
    """A maintenance window set ahead of time: the engine locks the stack at ``starts_at``
    (at ``level``, with ``reason``) and the lock expires at ``ends_at``.

    ``state``: scheduled, then active (locked), then done; waiting while the
    stack cannot be locked yet (an action in progress, another lock);
    cancelled; failed when the window closed before it could start.
    ``note`` says why it waits or failed.
    """

    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="lock_windows")
    starts_at = models.DateTimeField(db_index=True)
    ends_at = models.DateTimeField()
    level = models.CharField(max_length=8, default="all")
    reason = models.TextField(blank=True, default="")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    username = models.CharField(max_length=150, blank=True, default="")
    state = models.CharField(max_length=16, default="scheduled", db_index=True,
                             choices=[(s, s) for s in WINDOW_STATES])
    note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["starts_at", "id"]

    def __str__(self):
        return f"window {self.pk} of {self.stack_id} ({self.state})"

