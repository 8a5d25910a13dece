"""The Stack model and its state machine."""
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django_fsm import GET_STATE, FSMField, transition

from stacks.models import states as st
from stacks.models.template import RawTemplate


def _same_action(status):
    return GET_STATE(lambda stack: f"{stack.action}_{status}")


class Stack(models.Model):
    """A stack of resources in one project. ``state`` changes only by transitions."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey("heatweb.Project", on_delete=models.CASCADE, related_name="stacks")
    name = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    raw_template = models.ForeignKey(RawTemplate, on_delete=models.PROTECT, related_name="+")
    prev_raw_template = models.ForeignKey(RawTemplate, null=True, blank=True,
                                          on_delete=models.SET_NULL, related_name="+")
    parameters = models.JSONField(default=dict, blank=True)
    state = FSMField(default=st.INIT_COMPLETE, choices=st.STATE_CHOICES, max_length=32,
                     db_index=True)
    status_reason = models.TextField(blank=True, default="")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE,
                               related_name="children")
    parent_resource_name = models.CharField(max_length=255, blank=True, default="")
    nested_depth = models.PositiveSmallIntegerField(default=0)
    timeout_mins = models.FloatField(null=True, blank=True)
    disable_rollback = models.BooleanField(default=True)
    tags = models.JSONField(default=list, blank=True)
    current_traversal = models.CharField(max_length=36, blank=True, default="")
    action_started_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Lock (maintenance mode) details, shown by show/list and pages.
    lock_level = models.CharField(max_length=8, blank=True, default="")
    lock_reason = models.TextField(blank=True, default="")
    locked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  on_delete=models.SET_NULL, related_name="+")
    locked_by_admin = models.BooleanField(default=False)
    locked_at = models.DateTimeField(null=True, blank=True)
    # When the lock's window closes (the engine then unlocks it); None: until unlocked.
    lock_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # When an engine last checked that the lock's physical locks are in place.
    lock_verified_at = models.DateTimeField(null=True, blank=True)
    # The state the stack was in when first locked (a suspended stack stays
    # suspended through lock and unlock, and can be resumed after).
    pre_lock_state = models.CharField(max_length=32, blank=True, default="")
    # What stays permitted while the lock holds (``states.LOCK_MODES``); [] = nothing.
    lock_allow = models.JSONField(default=list, blank=True)
    # The lock to take again when the action running under it settles (an action the
    # lock allows, or one a lock interrupted); while set, the lock holds.
    lock_pending = models.JSONField(null=True, blank=True)
    # Imported (``manage.py import_heat``) and not re-authorised yet: nothing acts on the
    # cloud for it until its owner consents (``stacks.services.consent``).
    needs_consent = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], condition=Q(deleted_at__isnull=True),
                                    name="uniq_live_stack_name"),
        ]
        indexes = [models.Index(fields=["project", "created_at"]),
                   models.Index(fields=["project", "state", "created_at"],
                                name="stack_project_state_idx")]

    def __str__(self):
        return f"{self.name} ({self.id})"

    @property
    def action(self):
        return st.split(self.state)[0]

    @property
    def status(self):
        return st.split(self.state)[1]

    @property
    def is_locked(self):
        """Locked itself (shown as a badge); ``states.lock_holder`` also asks the ancestors."""
        return self.state in st.LOCKED_STATES or bool(self.lock_pending)

    @property
    def effective_state(self):
        """What the stack is underneath a finished unlock (e.g. still suspended)."""
        if self.state == "UNLOCK_COMPLETE" and self.pre_lock_state:
            return self.pre_lock_state
        return self.state

    @property
    def is_suspended(self):
        """Suspended, also underneath a lock or a finished unlock (a badge on the pages)."""
        return st.is_suspended(self.state, self.pre_lock_state)

    @property
    def identifier(self):
        return f"{self.name}/{self.id}"

    def lock_message(self):
        who = self.locked_by.username if self.locked_by_id else "unknown"
        level = self.lock_level or "all"
        reason = f' ("{self.lock_reason}")' if self.lock_reason else ""
        allows = f" (it allows only {', '.join(self.lock_allow)})" if self.lock_allow else ""
        return (f"Stack {self.name} is locked at level {level} by {who}{reason}{allows}; "
                f"unlock it first.")

    # Starting an action: sources from the state table ------------------------
    @transition(field=state, source=st.STACK_SOURCES["CREATE"], target="CREATE_IN_PROGRESS")
    def begin_create(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["UPDATE"], target="UPDATE_IN_PROGRESS",
                conditions=[st.not_suspended_under_unlock, st.lock_permits("UPDATE")])
    def begin_update(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["DELETE"], target="DELETE_IN_PROGRESS",
                conditions=[st.no_lock_over])
    def begin_delete(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["SUSPEND"], target="SUSPEND_IN_PROGRESS",
                conditions=[st.not_suspended_under_lock, st.lock_permits("SUSPEND")])
    def begin_suspend(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["RESUME"], target="RESUME_IN_PROGRESS",
                conditions=[st.suspended_if_unlocked, st.lock_permits("RESUME")])
    def begin_resume(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["CHECK"], target="CHECK_IN_PROGRESS",
                conditions=[st.lock_permits("CHECK")])
    def begin_check(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["SCALE"], target="UPDATE_IN_PROGRESS",
                conditions=[st.not_suspended_under_unlock, st.lock_permits("SCALE")])
    def begin_scale(self):
        """A signal resizes a scaling group's members (an update a ``signal`` lock allows)."""

    @transition(field=state, source=st.STACK_SOURCES["ROLLBACK"], target="ROLLBACK_IN_PROGRESS",
                conditions=[st.no_ancestor_lock])
    def begin_rollback(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["LOCK"], target="LOCK_IN_PROGRESS",
                conditions=[st.no_ancestor_lock])
    def begin_lock(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["LOCK"], target="LOCK_IN_PROGRESS",
                conditions=[st.parent_locking])
    def begin_lock_from_parent(self):
        """A nested stack takes the lock its parent is taking."""

    @transition(field=state, source=st.STACK_SOURCES["LOCK_RESUME"], target="LOCK_IN_PROGRESS",
                conditions=[st.lock_resumable])
    def begin_lock_resume(self):
        """The lock is taken again: the action that ran under it (or that it interrupted)
        settled."""

    @transition(field=state, source=st.STACK_SOURCES["UNLOCK"], target="UNLOCK_IN_PROGRESS",
                conditions=[st.no_ancestor_lock])
    def begin_unlock(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["INTERRUPT"], target=_same_action(st.FAILED),
                conditions=[st.no_lock_over])
    def begin_interrupt(self):
        """A lock with ``interrupt: cancel`` stops the action in progress where it is."""
        pass

    @transition(field=state, source=st.STACK_SOURCES["SNAPSHOT"], target="SNAPSHOT_IN_PROGRESS",
                conditions=[st.not_suspended_under_unlock, st.no_lock_over])
    def begin_snapshot(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["RESTORE"], target="RESTORE_IN_PROGRESS",
                conditions=[st.not_suspended_under_unlock, st.no_lock_over])
    def begin_restore(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["ADOPT"], target="ADOPT_IN_PROGRESS")
    def begin_adopt(self):
        pass

    @transition(field=state, source=st.STACK_SOURCES["ABANDON"], target="DELETE_IN_PROGRESS",
                conditions=[st.no_lock_over])
    def begin_abandon(self):
        """Abandon is a delete that leaves the physical objects (it completes at once)."""

    # Finishing the action in progress ---------------------------------------------
    @transition(field=state, source=st.IN_PROGRESS_STATES, target=_same_action(st.COMPLETE))
    def mark_complete(self):
        pass

    @transition(field=state, source=st.IN_PROGRESS_STATES, target=_same_action(st.FAILED))
    def mark_failed(self):
        pass
