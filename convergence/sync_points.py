"""Sync points: creating a traversal's join points and merging into them.

Every node of a traversal has a SyncPoint row holding its predecessors and
its successors (with each successor's predecessor count), so a worker never
loads the whole graph. A node with one predecessor is triggered directly; a
node with several waits until each has merged its data into its row by
compare-and-swap on ``atomic_key``.
"""
from convergence.models import SyncPoint

STACK_ENTITY = None  # the stack's own sync point in successor lists
MAX_CAS_ATTEMPTS = 100


def node_key(entity_id, is_update):
    return f"{entity_id}:{int(bool(is_update))}"


def sync_points_create(stack, traversal_id, graph):
    """One row per node plus the stack's; returns the stack row's predecessor keys."""
    roots = set(graph.roots())
    rows = []
    for node in graph.nodes:
        succ = [[s[0], s[1], len(graph.predecessors(s))] for s in sorted(graph.successors(node))]
        if node in roots:
            succ.append([STACK_ENTITY, True, len(roots)])
        rows.append(SyncPoint(
            entity_id=str(node[0]), traversal_id=traversal_id, is_update=node[1], stack=stack,
            predecessors=[node_key(*p) for p in sorted(graph.predecessors(node))],
            successors=succ))
    rows.append(SyncPoint(entity_id=str(stack.pk), traversal_id=traversal_id, is_update=True,
                          stack=stack, predecessors=[node_key(*r) for r in sorted(roots)],
                          successors=[]))
    SyncPoint.objects.bulk_create(rows, batch_size=500)


def sync_points_for(traversal_id, nodes):
    """The rows of the given (entity_id, is_update) nodes, keyed like them."""
    ids = {str(n[0]) for n in nodes}
    rows = SyncPoint.objects.filter(traversal_id=traversal_id, entity_id__in=ids).only(
        "entity_id", "is_update", "successors", "predecessors", "input_data")
    return {(row.entity_id, row.is_update): row for row in rows}


def sync_point_merge(*, traversal_id, entity_id, is_update, additions):
    """Merge predecessor data into a sync point by compare-and-swap.

    Returns ``(became_ready, input_data)``: ready is True only for the merge
    that completed the set, so a duplicate delivery never triggers twice.
    Returns ``(None, None)`` when the row is gone (a newer traversal).
    """
    base = SyncPoint.objects.filter(traversal_id=traversal_id, entity_id=str(entity_id),
                                    is_update=is_update)
    for _ in range(MAX_CAS_ATTEMPTS):
        row = base.values("pk", "atomic_key", "input_data", "predecessors").first()
        if row is None:
            return None, None
        needed = set(row["predecessors"])
        was_ready = needed <= set(row["input_data"])
        merged = {**row["input_data"], **additions}
        if merged == row["input_data"]:
            return False, merged
        updated = SyncPoint.objects.filter(pk=row["pk"], atomic_key=row["atomic_key"]).update(
            input_data=merged, atomic_key=row["atomic_key"] + 1)
        if updated:
            return (not was_ready and needed <= set(merged)), merged
    raise RuntimeError(f"sync point {entity_id} in {traversal_id}: too much contention")
