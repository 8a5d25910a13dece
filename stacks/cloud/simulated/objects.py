"""Generic objects of the simulated cloud: one ``SimObject`` row per object of any kind.

The row keeps the service's own fields; create, get, update and delete are
written once here. A kind behaves differently only where a template can
tell, through optional hooks a mixin defines by name
(one module per service in this package: ``network``, ``identity``, ...):

- ``_complete_<kind>(fields, project_id)``: the fields a new object gets
  (defaults, an address from a subnet), or CloudError as the service refuses;
- ``_create_<kind>(project_id, name, fields)``: a kind that is an action on
  other objects (a router interface); returns the id;
- ``_describe_<kind>(row, out)``: fields computed on reading (a network's subnets);
- ``_update_<kind>(row, fields)``: the fields an update stores;
- ``_in_use_<kind>(row)``: why it cannot be deleted now (a message) or None;
- ``_deleted_<kind>(row)``: what goes with it (a group's rules);
- ``_get_<kind>`` / ``_delete_<kind>``: a kind not kept as a row of its own.
"""
import uuid

from django.db import transaction
from django.utils import timezone

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.kinds import kind_of, resolve_refs
from stacks.cloud.models import SimObject
from stacks.cloud.simulated.task_reads import NETWORKS_READ, task_forget


def live(kind=None, **filters):
    rows = SimObject.objects.filter(deleted_at__isnull=True, **filters)
    return rows.filter(kind=kind) if kind else rows


def not_found(kind, object_id):
    return CloudNotFound(f"{kind_of(kind).label} {object_id} could not be found. (HTTP 404)")


class SimulatedObjects:
    """Mixin of ``SimulatedCloud``: the ``object_*`` methods over ``SimObject`` rows."""

    def _object_row(self, kind, object_id):
        row = live(kind, pk=object_id).first()
        if row is None:
            raise not_found(kind, object_id)
        return row

    def _resolve(self, kind, name_or_id):
        """The live ``kind`` row with that id, or else the oldest of that name."""
        row = live(kind, pk=name_or_id).first() or \
            live(kind, name=name_or_id).order_by("created_at").first()
        if row is None:
            raise not_found(kind, name_or_id)
        return row

    def _lookup_id(self, kind, name_or_id, project_id=None):
        if kind == "domain" and str(name_or_id).lower() == "default":
            return "default"  # Keystone's own default domain
        return self._resolve(kind, name_or_id).pk

    def object_find(self, kind, name_or_id):
        kind_of(kind)
        return self._lookup_id(kind, name_or_id)

    def object_search(self, kind, **fields):
        kind_of(kind)
        return [row.pk for row in live(kind).order_by("created_at")
                if all(row.fields.get(k) == v for k, v in fields.items())]

    @staticmethod
    def _network_changes(kind):
        """A network made, changed or deleted: the task's read of each project's networks
        (``task_reads``) is stale."""
        if kind == "network":
            task_forget(NETWORKS_READ)

    def _hook(self, prefix, kind):
        return getattr(self, f"_{prefix}_{kind}", None)

    def object_create(self, kind, *, project_id, name, creation_key=None, find_first=True,
                      **fields):
        spec = kind_of(kind)
        self._network_changes(kind)
        self._fault(f"{kind}_create", project_id)
        if creation_key and find_first:
            found = live(kind, creation_key=creation_key).first()
            if found is not None:
                return found.pk
        values = resolve_refs(kind, {k: v for k, v in fields.items() if v is not None},
                              lambda k, n: self._lookup_id(k, n, project_id))
        custom = self._hook("create", kind)
        if custom is not None:
            return custom(project_id=project_id, name=name or "", fields=values,
                          creation_key=creation_key or "")
        if spec.unique_name and name and live(kind, name=name).exists():
            raise CloudError(f"{spec.label} with name {name} already exists. (HTTP 409)")
        # One transaction: what ``complete`` allocates (a subnet's prefix from its pool,
        # after locking the pool's row) is taken by this row before another create looks.
        with transaction.atomic():
            complete = self._hook("complete", kind)
            if complete is not None:
                values = complete({**values, "name": name or ""}, project_id)
                values.pop("name", None)
            values = {"project_id": project_id, **values}
            object_id = values.pop("id", None) or str(uuid.uuid4())
            return self.sim_row_create(kind, project_id=project_id, name=name, fields=values,
                                       creation_key=creation_key, object_id=object_id).pk

    @staticmethod
    def sim_row_create(kind, *, project_id, name, fields, creation_key=None, object_id=None):
        return SimObject.objects.create(kind=kind, project_id=project_id, name=name or "",
                                        fields=fields, creation_key=creation_key or "",
                                        id=object_id or str(uuid.uuid4()))

    def object_get(self, kind, object_id):
        kind_of(kind)
        custom = self._hook("get", kind)
        if custom is not None:
            return custom(object_id)
        row = live(kind, pk=object_id).first()
        return None if row is None else self._described(row)

    def _described(self, row):
        out = {**row.fields, "id": row.pk, "name": row.name}
        describe = self._hook("describe", row.kind)
        if describe is not None:
            describe(row, out)
        return out

    def object_update(self, kind, object_id, **fields):
        self._network_changes(kind)
        row = self._object_row(kind, object_id)
        self._fault(f"{kind}_update", row.project_id)
        fields = resolve_refs(kind, fields, lambda k, n: self._lookup_id(k, n, row.project_id))
        name = fields.pop("name", row.name)
        custom = self._hook("update", kind)
        if custom is not None:
            fields = custom(row, fields)
        SimObject.objects.filter(pk=row.pk).update(name=name or "",
                                                   fields={**row.fields, **fields})

    def router_routes_change(self, router_id, *, add=(), remove=()):
        with transaction.atomic():  # the row locked (PostgreSQL): no route lost to a race
            SimObject.objects.select_for_update().filter(pk=router_id).first()
            super().router_routes_change(router_id, add=add, remove=remove)

    def object_delete(self, kind, object_id):
        kind_of(kind)
        self._network_changes(kind)
        custom = self._hook("delete", kind)
        if custom is not None:
            return custom(object_id)
        row = live(kind, pk=object_id).first()
        if row is None:
            return True  # gone already: deleting is done
        self._fault(f"{kind}_delete", row.project_id)
        in_use = self._hook("in_use", kind)
        reason = in_use(row) if in_use else None
        if reason:
            raise CloudError(reason)
        deleted = self._hook("deleted", kind)
        if deleted is not None:
            deleted(row)
        self.sim_row_delete(row)
        return True  # the simulated cloud deletes before it answers

    @staticmethod
    def sim_row_delete(row):
        # A deleted row keeps its id; ids named by the user (a key pair's name) are freed.
        if row.kind in ("keypair", "flavor", "region", "queue", "workflow", "cron_trigger"):
            SimObject.objects.filter(pk=row.pk).delete()
        else:
            SimObject.objects.filter(pk=row.pk).update(deleted_at=timezone.now())
