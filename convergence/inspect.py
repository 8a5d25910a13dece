"""Reads for the admin: a traversal's nodes in words, and what engines hold.

A sync point is named by its resource and what the node does there
(create, update, cleanup, or the walk's action: lock, delete...), and its
edges by those names; nothing here writes.
"""
import json
from dataclasses import dataclass, field

from django.db.models import F

from convergence.models import SyncPoint, Traversal
from convergence.sync_points import node_key
from stacks.models import Resource
from stacks.models import states as st

@dataclass
class NodeView:
    key: str
    name: str
    action: str
    resource: object = None
    predecessors: list = field(default_factory=list)  # (key, name) pairs
    arrived: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    successors: list = field(default_factory=list)
    input_data: dict = field(default_factory=dict)
    is_stack: bool = False

    @property
    def ready(self):
        return not self.missing

    @property
    def input_text(self):
        return json.dumps(self.input_data, indent=1, sort_keys=True, default=str) \
            if self.input_data else ""

    @property
    def state(self):
        return self.resource.state if self.resource is not None else ""


def node_action(traversal_action, resource, is_update):
    """What the node does: create/update/cleanup in a create or update, else the walk's."""
    if traversal_action in ("CREATE", "UPDATE") or \
            (traversal_action == "ROLLBACK" and resource is not None and is_update):
        if not is_update:
            return "cleanup"
        if resource is None or resource.state == st.INIT_COMPLETE or resource.action == "CREATE":
            return "create"
        return "update"
    if not is_update and traversal_action not in ("DELETE",):
        return "cleanup"
    return traversal_action.lower()


def _resources(rows):
    return {str(r.pk): r for r in Resource.objects.filter(
        pk__in=[int(r.entity_id) for r in rows if r.entity_id.isdigit()])}


def traversal_nodes(traversal, *, waiting_only=False):
    """The traversal's sync points as ``NodeView``s, in graph order (predecessors first)."""
    rows = list(SyncPoint.objects.filter(traversal_id=traversal.pk).order_by("id"))
    resources = _resources(rows)
    stack_entity = str(traversal.stack_id)

    def name_of(entity_id, is_update):
        if str(entity_id) == stack_entity or entity_id is None:
            return f"stack {traversal.stack.name}"
        res = resources.get(str(entity_id))
        label = res.name if res is not None else f"resource {entity_id}"
        return f"{label} ({node_action(traversal.action, res, is_update)})"

    def key_name(key):
        entity, _, flag = key.rpartition(":")
        return name_of(entity, flag == "1")

    nodes = []
    for row in rows:
        res = resources.get(row.entity_id)
        is_stack = row.entity_id == stack_entity
        arrived = set(row.input_data)
        node = NodeView(
            key=node_key(row.entity_id, row.is_update),
            name=f"stack {traversal.stack.name}" if is_stack else
            (res.name if res is not None else f"resource {row.entity_id}"),
            action="finish" if is_stack else node_action(traversal.action, res, row.is_update),
            resource=res, is_stack=is_stack,
            predecessors=[(k, key_name(k)) for k in row.predecessors],
            arrived=[key_name(k) for k in row.predecessors if k in arrived],
            missing=[key_name(k) for k in row.predecessors if k not in arrived],
            successors=[name_of(s[0], s[1]) for s in row.successors],
            input_data={key_name(k): v for k, v in row.input_data.items()})
        nodes.append(node)
    if waiting_only:
        nodes = [n for n in nodes if not n.ready]
    return nodes


def waiting_sync_point_ids(queryset):
    """The ids of sync points in ``queryset`` still missing a predecessor's data."""
    return [pk for pk, preds, data in queryset.values_list("pk", "predecessors", "input_data")
            .iterator() if not set(preds) <= set(data)]


def current_sync_points(queryset):
    """The sync points of ``queryset`` that belong to their stack's current traversal."""
    return queryset.filter(traversal_id=F("stack__current_traversal"))


def sync_point_label(row):
    """``name (action)`` of a sync point's node, or ``stack NAME`` for the stack's own."""
    if row.entity_id == str(row.stack_id):
        return f"stack {row.stack.name}"
    res = Resource.objects.filter(pk=int(row.entity_id)).first() \
        if row.entity_id.isdigit() else None
    traversal = Traversal.objects.filter(pk=row.traversal_id).values_list("action",
                                                                          flat=True).first()
    if res is None:
        return f"resource {row.entity_id}"
    return f"{res.name} ({node_action(traversal or 'UPDATE', res, row.is_update)})"


def engine_holds(engine):
    """The resources whose convergence lock ``engine`` holds, with their stacks."""
    return list(Resource.objects.filter(engine_id=engine.pk).select_related("stack")
                .order_by("stack__name", "name"))
