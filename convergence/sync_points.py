"""Sync points: creating a traversal's join points and merging into them.

Every node of a traversal has a SyncPoint row holding its predecessors and
its successors (with each successor's predecessor count), so a worker never
loads the whole graph. A node with one predecessor is triggered directly; a
node with several waits until each has merged its data into its row by
compare-and-swap on ``atomic_key``.
"""
from convergence.models import SyncPoint
from convergence.rows import INCREMENT, rows_update
from heatweb import written_sql

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
    return _rows_by_node(traversal_id, {str(n[0]) for n in nodes},
                         ("id", "entity_id", "is_update", "successors", "predecessors",
                          "input_data"))


def _rows_by_node(traversal_id, entity_ids, names):
    """``{(entity_id, is_update): row}`` of the traversal's sync points of those entities,
    with the fields ``names`` (the others deferred, as ``only()`` leaves them), read by a
    written-out statement: the engine reads them for every batch, and the ORM's building
    of the query cost many times the statement (docs/benchmarks.md, issue 38)."""
    if not entity_ids:
        return {}
    entity_ids = sorted(entity_ids)
    sql = (f'SELECT {written_sql.columns(SyncPoint, "sp", names)} FROM '
           f'"{SyncPoint._meta.db_table}" sp WHERE sp."traversal_id" = %s AND '
           f'sp."entity_id" IN ({", ".join(["%s"] * len(entity_ids))})')
    rows = (written_sql.instance(SyncPoint, "sp", values, names)
            for values in written_sql.fetch(sql, [traversal_id, *entity_ids]))
    return {(row.entity_id, row.is_update): row for row in rows}


def sync_point_merge(*, traversal_id, entity_id, is_update, additions):
    """Merge predecessor data into one sync point (``sync_points_merge`` of one)."""
    return sync_points_merge(traversal_id, {(entity_id, is_update): additions})[
        (entity_id, is_update)]


_MERGE_READ_NAMES = ("id", "entity_id", "is_update", "atomic_key", "predecessors",
                     "input_data")


def sync_points_merge(traversal_id, merges):
    """Merge predecessor data into sync points by compare-and-swap.

    ``merges``: ``{(entity_id, is_update): additions}``. Returns, keyed the same,
    ``(became_ready, input_data)``: ready is True only for the merge that
    completed the set, so a duplicate delivery never triggers twice;
    ``(None, None)`` when the row is gone (a newer traversal). The rows are
    read in one statement and written in one (``rows_update``: each row's own
    condition on its ``atomic_key``); a row another merge changed since is read
    again. A traversal merges once per edge into a node of several predecessors
    (119 times for an update of 20 servers on their ports).
    """
    out = {}
    pending = {(str(entity), bool(is_update)): ((entity, is_update), additions)
               for (entity, is_update), additions in merges.items()}
    for _ in range(MAX_CAS_ATTEMPTS):
        if not pending:
            return out
        rows = _rows_by_node(traversal_id, {entity for entity, _ in pending},
                             _MERGE_READ_NAMES)
        writes = {}
        for target, (key, additions) in pending.items():
            row = rows.get(target)
            if row is None:
                out[key] = (None, None)
                continue
            merged = {**row.input_data, **additions}
            if merged == row.input_data:
                out[key] = (False, merged)
                continue
            needed = set(row.predecessors)
            became_ready = not needed <= set(row.input_data) and needed <= set(merged)
            writes[target] = (row, became_ready, merged)
        changed = rows_update(SyncPoint, [
            ({"id": row.pk, "atomic_key": row.atomic_key},
             {"input_data": merged, "atomic_key": INCREMENT})
            for row, _, merged in writes.values()])
        again = {}
        for target, (row, became_ready, merged) in writes.items():
            if row.pk in changed:
                out[pending[target][0]] = (became_ready, merged)
            else:
                again[target] = pending[target]
        pending = again
    raise RuntimeError(f"sync points {sorted(pending)} in {traversal_id}: too much contention")
