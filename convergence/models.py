"""Convergence bookkeeping: traversals, sync points and engines."""
from django.db import models


class Traversal(models.Model):
    """One walk of a stack's graph; the stack row names the current one."""

    id = models.CharField(primary_key=True, max_length=36)
    stack = models.ForeignKey("stacks.Stack", on_delete=models.CASCADE, related_name="traversals")
    action = models.CharField(max_length=16)
    node_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.action} {self.id}"


class SyncPoint(models.Model):
    """A node's (or the stack's) join point in one traversal.

    ``input_data`` maps each predecessor that has reported to the data it
    passed on; ``atomic_key`` makes each merge a compare-and-swap.
    ``predecessors`` and ``successors`` are the node's edges, so a worker
    needs only this row, never the whole graph.
    """

    entity_id = models.CharField(max_length=64)
    traversal_id = models.CharField(max_length=36, db_index=True)
    is_update = models.BooleanField()
    stack = models.ForeignKey("stacks.Stack", on_delete=models.CASCADE, related_name="+")
    atomic_key = models.IntegerField(default=0)
    predecessors = models.JSONField(default=list)
    successors = models.JSONField(default=list)
    input_data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["entity_id", "traversal_id", "is_update"],
                                               name="uniq_sync_point")]

    def __str__(self):
        kind = "update" if self.is_update else "cleanup"
        return f"{self.entity_id} ({kind}) in {self.traversal_id}"


class Engine(models.Model):
    """A worker process (one engine) and its liveness heartbeat."""

    id = models.CharField(primary_key=True, max_length=64)
    hostname = models.CharField(max_length=255)
    pid = models.IntegerField()
    started_at = models.DateTimeField(auto_now_add=True)
    last_heartbeat = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return self.id
