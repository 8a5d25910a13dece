"""Stack snapshots, restore, export, abandon and adopt (Heat's shapes and rules).

A snapshot is a SNAPSHOT walk of the stack's resources whose traversal id is
the snapshot's (as in Heat's convergence): each resource saves what a
restore needs in its data (a server: an image of it). When the traversal
ends, ``snapshot_finished`` stores the stack's data (Heat's abandon shape)
on the snapshot. A restore converges the stack to the snapshot's template,
environment and files, each resource's properties first passed through its
plugin's ``restore_properties`` (a server boots from its image): a RESTORE
action. Abandon removes the stack from heatweb and leaves its physical
objects; adopt (``lifecycle.stack_create(adopt_resources=...)``) takes them
back.
"""
import copy
import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from convergence.models import SyncPoint
from convergence.services import stack_save_cas
from heatweb.api import as_uuid
from heatweb.exceptions import EntityNotFound, NotSupported
from heatweb.keystone import stack_trust_delete
from stacks.models import Resource, Snapshot, Stack
from stacks.models.events import stack_event
from stacks.plugins import plugin_context
from stacks.resources import registry
from stacks.resources.base import CREATION_KEY, ResourceFailure
from stacks.services import lifecycle
from stacks.services.traversals import stack_begin

log = logging.getLogger(__name__)


# Heat's abandon shape ----------------------------------------------------------------

def resource_data(res):
    """One resource as Heat's ``prepare_abandon`` gives it."""
    return {"name": res.name, "resource_id": res.physical_resource_id or None,
            "type": res.type, "action": res.action, "status": res.status,
            "metadata": res.rsrc_metadata or {},
            "resource_data": {k: v for k, v in (res.plugin_data or {}).items()
                              if k != CREATION_KEY}}


def _resource_or_child_data(res):
    """A child stack's resource is its child's whole data, as Heat's nested abandon."""
    child_id = (res.plugin_data or {}).get("nested_stack_id")
    child = Stack.objects.select_related("raw_template").filter(
        pk=as_uuid(child_id), deleted_at__isnull=True).first() if as_uuid(child_id) else None
    return stack_data(child) if child is not None else resource_data(res)


def stack_data(stack, *, with_resources=True):
    """The stack as Heat's abandon and export answer it (and a snapshot stores it)."""
    raw = stack.raw_template
    rows = Resource.objects.filter(stack=stack, replaced_by__isnull=True) \
        .exclude(state="DELETE_COMPLETE").order_by("id") if with_resources else []
    return {"name": stack.name, "id": str(stack.pk), "action": stack.action,
            "status": stack.status, "template": raw.template, "environment": raw.environment,
            "files": raw.files or {},
            "resources": {r.name: _resource_or_child_data(r) for r in rows},
            "project_id": stack.project_id, "stack_user_project_id": stack.project_id,
            "tags": stack.tags or None}


def stack_export(stack):
    """``GET .../export``: the abandon data, the stack left as it is."""
    return stack_data(stack)


# Snapshots ---------------------------------------------------------------------------

def stack_snapshot(stack, *, name=None):
    """Start a snapshot of ``stack`` (SNAPSHOT_IN_PROGRESS); returns the Snapshot row."""
    with transaction.atomic():
        snapshot = Snapshot.objects.create(stack=stack, name=name or "",
                                           data=stack_data(stack, with_resources=False))
        lifecycle.stack_snapshot_walk(stack, traversal_id=str(snapshot.pk))
    return snapshot


def snapshot_finished(stack, action, traversal_id, outcome):
    """Engine hook: a traversal ended. A SNAPSHOT's stores the stack's data on its snapshot;
    a finished DELETE deletes the stack's snapshots and their images, as Heat does."""
    if action == "SNAPSHOT":
        data = stack_data(Stack.objects.select_related("raw_template").get(pk=stack.pk))
        reason = stack.status_reason or f"Stack SNAPSHOT {outcome.lower()}"
        Snapshot.objects.filter(pk=traversal_id, stack=stack).update(
            status=outcome, status_reason=reason, data=data)
    elif action == "DELETE" and outcome == "COMPLETE":
        for snapshot in Snapshot.objects.filter(stack=stack):
            _delete_backups(stack, snapshot)
            snapshot.delete()


def snapshot_get(stack, snapshot_id):
    snapshot = Snapshot.objects.filter(stack=stack, pk=as_uuid(snapshot_id)).first() \
        if as_uuid(snapshot_id) else None
    if snapshot is None:
        raise EntityNotFound(entity="Snapshot", name=snapshot_id)
    return snapshot


def snapshot_delete(stack, *, snapshot):
    """Delete a snapshot and what its resources saved (a server's image)."""
    if snapshot.status == "IN_PROGRESS":
        raise NotSupported(feature="Deleting in-progress snapshot")
    _delete_backups(stack, snapshot)
    snapshot.delete()


def _delete_backups(stack, snapshot):
    context = plugin_context(stack)
    for name, res in ((snapshot.data or {}).get("resources") or {}).items():
        if not isinstance(res, dict) or not res.get("resource_data"):
            continue
        cls = registry.plugin_or_base(res.get("type", ""))
        plugin = cls(name=name, properties={}, context=context,
                     physical_id=res.get("resource_id"), data=dict(res["resource_data"]))
        try:
            plugin.handle_delete_snapshot(res["resource_data"])
        except ResourceFailure as error:  # best effort, as Heat ignores a missing image
            log.warning("snapshot %s, resource %s: %s", snapshot.pk, name, error)


def stack_restore(stack, *, snapshot):
    """Converge ``stack`` back to ``snapshot`` (RESTORE_IN_PROGRESS)."""
    if snapshot.status != "COMPLETE":
        raise NotSupported(feature=f"Restoring a snapshot in status {snapshot.status}")
    data = snapshot.data or {}
    return lifecycle.stack_restore(stack, template=restore_template(data),
                                   environment=data.get("environment") or {},
                                   files=data.get("files") or {})


def restore_template(data):
    """The snapshot's template, each resource's properties as its plugin restores them."""
    template = copy.deepcopy(data.get("template") or {})
    saved = data.get("resources") or {}
    resources_key = "resources" if "resources" in template else "Resources"
    for name, snippet in (template.get(resources_key) or {}).items():
        res = saved.get(name)
        if not isinstance(snippet, dict) or not isinstance(res, dict):
            continue
        props_key = "properties" if resources_key == "resources" else "Properties"
        cls = registry.plugin_or_base(snippet.get("type") or snippet.get("Type") or "")
        props = snippet.get(props_key) or {}
        restored = cls.restore_properties(props, res.get("resource_data") or {})
        if restored != props:
            snippet[props_key] = restored
    return template


# Abandon and adopt -------------------------------------------------------------------

def stack_abandon(stack):
    """Remove the stack (and its nested stacks) from heatweb, leaving every physical
    object; returns the abandon data (Heat's ``DELETE .../abandon``)."""
    check_abandon_enabled()
    with transaction.atomic():
        data = stack_data(stack)
        old_state, old_traversal = stack.state, stack.current_traversal
        stack_begin(stack, "ABANDON")
        stack_event(stack, "Stack DELETE started (abandon)").save()
        stack.mark_complete()
        now = timezone.now()
        stack_save_cas(stack, expected_state=old_state, expected_traversal=old_traversal,
                       state=stack.state, status_reason="Stack abandoned", deleted_at=now,
                       updated_at=now)
        stack_event(stack, "Stack abandoned: its resources were left in place").save()
        ids = _with_descendants(stack.pk)
        Stack.objects.filter(pk__in=ids[1:]).update(
            state="DELETE_COMPLETE", status_reason="Parent stack abandoned", deleted_at=now)
        SyncPoint.objects.filter(stack_id__in=ids).delete()
        Resource.objects.filter(stack_id__in=ids).delete()
        for stack_id in ids:
            transaction.on_commit(lambda sid=stack_id: stack_trust_delete(sid))
    return data


def _with_descendants(stack_id):
    ids, frontier = [stack_id], [stack_id]
    while frontier:
        frontier = list(Stack.objects.filter(parent_id__in=frontier, deleted_at__isnull=True)
                        .values_list("pk", flat=True))
        ids.extend(frontier)
    return ids


def check_abandon_enabled():
    if not settings.HEATWEB["ENABLE_STACK_ABANDON"]:
        raise NotSupported(feature="Stack Abandon")


def check_adopt_enabled():
    if not settings.HEATWEB["ENABLE_STACK_ADOPT"]:
        raise NotSupported(feature="Stack Adopt")
