"""Snapshots, restore, abandon, export (``/stacks/{name}/{id}/...``) and ``/services``."""
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import status
from rest_framework.response import Response

from convergence.models import Engine
from heatweb.api import TenantAPIView
from heatweb.exceptions import BadRequest
from heatweb.models import Role
from stacks.api.representations import heat_time
from stacks.api.views import StackApiBase
from stacks.hidden import hidden_values, mask
from stacks.services import snapshots
from stacks.services.actions import stack_action


def snapshot_body(snapshot, hidden):
    """Heat's ``format_snapshot``. Heat's snapshot row has no data until the snapshot is
    taken, so the create (and any show while IN_PROGRESS) answers ``data: null``; once
    taken, the stack's hidden parameter values are masked in it (``hidden``), as
    everywhere else: the stored data keeps them for a restore."""
    data = None if snapshot.status == "IN_PROGRESS" else mask(snapshot.data, hidden)
    return {"id": str(snapshot.pk), "name": snapshot.name or None, "action": snapshot.action,
            "status": snapshot.status, "status_reason": snapshot.status_reason or None,
            "data": data, "creation_time": heat_time(snapshot.created_at)}


class SnapshotListApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        stack = self.stack(stack_name, stack_id)
        hidden = hidden_values(stack)
        return Response({"snapshots": [snapshot_body(s, hidden) for s in stack.snapshots.all()]})

    def post(self, request, tenant_id, stack_name, stack_id):
        name = self.body().get("name")
        if name is not None and (not isinstance(name, str) or len(name) > 255):
            raise BadRequest("The snapshot name must be a string of at most 255 characters.")
        stack = self.stack(stack_name, stack_id)
        snapshot = stack_action(stack, "snapshot", user=request.user, name=name)
        return Response(snapshot_body(snapshot, hidden_values(stack)))


class SnapshotApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, snapshot_id):
        stack = self.stack(stack_name, stack_id)
        return Response({"snapshot": snapshot_body(snapshots.snapshot_get(stack, snapshot_id),
                                                   hidden_values(stack))})

    def delete(self, request, tenant_id, stack_name, stack_id, snapshot_id):
        stack = self.stack(stack_name, stack_id)
        stack_action(stack, "snapshot_delete", user=request.user,
                     snapshot=snapshots.snapshot_get(stack, snapshot_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class SnapshotRestoreApi(StackApiBase):
    def post(self, request, tenant_id, stack_name, stack_id, snapshot_id):
        stack = self.stack(stack_name, stack_id)
        stack_action(stack, "restore", user=request.user,
                     snapshot=snapshots.snapshot_get(stack, snapshot_id))
        return Response(status=status.HTTP_202_ACCEPTED)


class StackAbandonApi(StackApiBase):
    def delete(self, request, tenant_id, stack_name, stack_id):
        data = stack_action(self.stack(stack_name, stack_id), "abandon", user=request.user)
        return Response(data)


class StackExportApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        return Response(snapshots.stack_export(self.stack(stack_name, stack_id)))


class ServiceListApi(TenantAPIView):
    """``GET /services``: the engines (Celery workers), for cloud admins, in Heat's shape."""

    read_role = Role.ADMIN

    def get(self, request, tenant_id):
        beat = settings.HEATWEB["ENGINE_HEARTBEAT_SECONDS"]
        alive_since = timezone.now() - timedelta(
            seconds=settings.HEATWEB["ENGINE_DEAD_AFTER_SECONDS"])
        engines = Engine.objects.filter(stopped_at__isnull=True).order_by("started_at")
        return Response({"services": [{
            "id": engine.id, "binary": "heat-engine", "hostname": engine.hostname,
            "engine_id": engine.id, "host": engine.hostname, "topic": "engine",
            "report_interval": beat,
            "status": "up" if engine.last_heartbeat >= alive_since else "down",
            "created_at": heat_time(engine.started_at),
            "updated_at": heat_time(engine.last_heartbeat),
            "deleted_at": heat_time(engine.stopped_at)} for engine in engines]})
