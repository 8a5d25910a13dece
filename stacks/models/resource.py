"""The Resource model (one row per physical resource version) and its state machine."""
import json
import uuid

from django.db import models
from django_fsm import GET_STATE, FSMField, transition

from stacks.models import states as st
from stacks.models.stack import Stack
from stacks.models.template import RawTemplate


def _without_nul(value):
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nul(v) for v in value]
    return value


class CloudJSONEncoder(json.JSONEncoder):
    """JSON of what the cloud answered (attributes, plugin data, a waiting action's
    cookie), with no NUL character: PostgreSQL's JSON cannot store one, and a binary
    value from the cloud (a secret's payload) may hold one (the row's save then failed and
    its stack stayed IN_PROGRESS). A NUL becomes U+FFFD, as undecodable bytes do."""

    def encode(self, o):
        # JSON writes a NUL as the escape \u0000: only a value whose JSON has one is
        # rebuilt without it (the common value is encoded once and not copied).
        text = super().encode(o)
        return super().encode(_without_nul(o)) if "\\u0000" in text else text


def _same_action(status):
    return GET_STATE(lambda res: f"{res.action}_{status}")


class Resource(models.Model):
    """A resource of a stack. ``engine_id``/``atomic_key`` are the convergence lock."""

    uuid = models.UUIDField(default=uuid.uuid4, editable=False, unique=True)
    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="resources")
    name = models.CharField(max_length=255)
    type = models.CharField(max_length=255)
    physical_resource_id = models.CharField(max_length=255, blank=True, default="")
    properties_data = models.JSONField(default=dict, blank=True)
    attributes_data = models.JSONField(default=dict, blank=True, encoder=CloudJSONEncoder)
    plugin_data = models.JSONField(default=dict, blank=True, encoder=CloudJSONEncoder)
    rsrc_metadata = models.JSONField(default=dict, blank=True)
    action_cookie = models.JSONField(null=True, blank=True, encoder=CloudJSONEncoder)
    state = FSMField(default=st.INIT_COMPLETE, choices=st.STATE_CHOICES, max_length=32)
    status_reason = models.TextField(blank=True, default="")
    requires = models.JSONField(default=list, blank=True)
    template = models.ForeignKey(RawTemplate, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    engine_id = models.CharField(max_length=64, null=True, blank=True, db_index=True)
    atomic_key = models.IntegerField(default=0)
    replaces = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    replaced_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["stack", "name"])]

    def __str__(self):
        return f"{self.name} [{self.type}] {self.state}"

    @property
    def action(self):
        return st.split(self.state)[0]

    @property
    def status(self):
        return st.split(self.state)[1]

    @transition(field=state, source=st.RESOURCE_SOURCES["CREATE"], target="CREATE_IN_PROGRESS")
    def begin_create(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["UPDATE"], target="UPDATE_IN_PROGRESS")
    def begin_update(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["DELETE"], target="DELETE_IN_PROGRESS")
    def begin_delete(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["SUSPEND"], target="SUSPEND_IN_PROGRESS")
    def begin_suspend(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["RESUME"], target="RESUME_IN_PROGRESS")
    def begin_resume(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["CHECK"], target="CHECK_IN_PROGRESS")
    def begin_check(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["SNAPSHOT"], target="SNAPSHOT_IN_PROGRESS")
    def begin_snapshot(self):
        pass

    @transition(field=state, source=st.RESOURCE_SOURCES["ADOPT"], target="ADOPT_IN_PROGRESS")
    def begin_adopt(self):
        pass

    @transition(field=state, source=st.IN_PROGRESS_STATES, target=_same_action(st.COMPLETE))
    def mark_complete(self):
        pass

    @transition(field=state, source=st.IN_PROGRESS_STATES, target=_same_action(st.FAILED))
    def mark_failed(self):
        pass
