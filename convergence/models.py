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


class OutboxMessage(models.Model):
    """A task to publish, written in the same transaction as the work it starts.

    The writer publishes it right after the commit (holding a short claim);
    if the writer dies first, an engine's relay publishes it once the claim
    has lapsed. ``due_at`` in the future delays it (stack timeouts) without
    parking a long countdown in the broker.
    """

    task = models.CharField(max_length=64)
    args = models.JSONField(default=list)
    stack = models.ForeignKey("stacks.Stack", on_delete=models.CASCADE, related_name="+")
    traversal_id = models.CharField(max_length=36, db_index=True)
    due_at = models.DateTimeField(db_index=True)
    claimed_by = models.CharField(max_length=32, blank=True, default="", db_index=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["due_at", "id"]

    def __str__(self):
        return f"{self.task} {self.args!r:.60}"


class Waiter(models.Model):
    """A resource whose action waits (on the cloud, a signal, a child stack).

    ``kind``/``object_id``/``ready_on`` name a cloud object whose status the
    poll round reads with one list call per kind for all waiters of a
    project; with no kind, the plugin's own check runs at ``next_check``
    (or at once when poked). Times are seconds since the epoch. ``ticket`` is
    new at every registration: a round removes the rows it read by it, never
    the same wait registered again meanwhile (a timed wait's ``next_check``
    is the same every time).
    """

    resource_id = models.BigIntegerField(primary_key=True)
    project_id = models.CharField(max_length=64, db_index=True)
    stack_id = models.UUIDField(db_index=True)
    traversal_id = models.CharField(max_length=36)
    kind = models.CharField(max_length=16, blank=True, default="")
    object_id = models.CharField(max_length=255, blank=True, default="")
    ready_on = models.JSONField(default=list, blank=True)
    since = models.FloatField()
    next_check = models.FloatField()
    deadline = models.FloatField(null=True, blank=True)
    ticket = models.CharField(max_length=32, blank=True, default="")

    def __str__(self):
        return f"resource {self.resource_id} waits on {self.kind or 'its plugin'} {self.object_id}"


class PollRound(models.Model):
    """The one poll round of a project: only the task carrying ``token`` may run it."""

    project_id = models.CharField(primary_key=True, max_length=64)
    token = models.CharField(max_length=32)
    due_at = models.FloatField()
    # Set when the round's task began: it may have read the stacks before a change a
    # caller now wants seen, so a round asked for then is a new one, not this one.
    started_at = models.FloatField(null=True, blank=True)

    def __str__(self):
        return f"poll round of {self.project_id} due {self.due_at}"


class Breakpoint(models.Model):
    """A node of a traversal paused on a hook (breakpoint) of its resource.

    Nothing runs while it waits: the node (``entity``) and what it needs to
    go on (``data``: its input for a ``pre-`` hook, its output for a
    ``post-`` one) are kept here until a signal ``{"unset_hook": ...}``
    clears it (``cleared``), which sends the node on. A cleared row stays
    until its traversal ends, so a rerun of the node passes the hook.
    """

    resource_id = models.BigIntegerField()
    hook = models.CharField(max_length=16)
    stack = models.ForeignKey("stacks.Stack", on_delete=models.CASCADE, related_name="+")
    traversal_id = models.CharField(max_length=36, db_index=True)
    entity = models.JSONField(default=list)
    data = models.JSONField(default=dict, blank=True, null=True)
    cleared = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["resource_id", "hook"],
                                               name="uniq_breakpoint")]

    def __str__(self):
        return f"resource {self.resource_id} {self.hook}{' (cleared)' if self.cleared else ''}"
