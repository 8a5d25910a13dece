"""Sync points: creating a traversal's join points and merging into them.

Every node of a traversal has a SyncPoint row holding its predecessors and
its successors (with each successor's predecessor count), so a worker never
loads the whole graph. A node with one predecessor is triggered directly; a
node with several waits until each has merged its data into its row by
compare-and-swap on ``atomic_key``.
"""
from django.db import connection

from convergence.models import SyncPoint
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
    rows = _rows(traversal_id, sorted({str(n[0]) for n in nodes}),
                 ("id", "entity_id", "is_update", "successors", "predecessors", "input_data"))
    return {(row.entity_id, row.is_update): row for row in rows}


def _rows(traversal_id, entity_ids, names):
    """The traversal's sync points of those entities, with the fields ``names`` (the
    others deferred, as ``only()`` leaves them), read by a written-out statement."""
    if not entity_ids:
        return []
    sql = (f'SELECT {written_sql.columns(SyncPoint, "sp", names)} FROM "convergence_syncpoint" '
           f'sp WHERE sp."traversal_id" = %s AND sp."entity_id" IN '
           f'({", ".join(["%s"] * len(entity_ids))})')
    return [written_sql.instance(SyncPoint, "sp", values, names)
            for values in written_sql.fetch(sql, [traversal_id, *entity_ids])]


def sync_point_merge(*, traversal_id, entity_id, is_update, additions):
    """Merge predecessor data into one sync point (``sync_points_merge`` of one)."""
    return sync_points_merge(traversal_id, {(entity_id, is_update): additions})[
        (entity_id, is_update)]


# The merges' statements, written out: a traversal makes one merge per edge into a node
# of several predecessors (119 for an update of 20 servers on their ports), and the
# ORM's building of a SELECT and an UPDATE cost ~1 ms of CPU a merge, many times the
# statements themselves (docs/benchmarks.md, issue 38).
_MERGE_READ_NAMES = ("id", "entity_id", "is_update", "atomic_key", "predecessors",
                     "input_data")
_MERGE_WRITE = ('UPDATE "convergence_syncpoint" SET "input_data" = %s, '
                '"atomic_key" = %s WHERE "id" = %s AND "atomic_key" = %s')


def _merge_rows(traversal_id, entity_ids):
    """``{(entity_id, is_update): row}`` of the traversal's sync points of those entities."""
    return {(row.entity_id, bool(row.is_update)): row
            for row in _rows(traversal_id, entity_ids, _MERGE_READ_NAMES)}


def _merge_write(row, merged):
    """The compare-and-swap of one row: True when ``row`` was still as read."""
    value = SyncPoint._meta.get_field("input_data").get_db_prep_save(merged, connection)
    with connection.cursor() as cursor:
        cursor.execute(_MERGE_WRITE, [value, row.atomic_key + 1, row.pk, row.atomic_key])
        return cursor.rowcount == 1


def sync_points_merge(traversal_id, merges):
    """Merge predecessor data into sync points by compare-and-swap, each row once read.

    ``merges``: ``{(entity_id, is_update): additions}``. Returns, keyed the same,
    ``(became_ready, input_data)``: ready is True only for the merge that
    completed the set, so a duplicate delivery never triggers twice;
    ``(None, None)`` when the row is gone (a newer traversal). The rows are
    read in one statement; a row another merge changed since is read again.
    """
    out = {}
    pending = {(str(entity), bool(is_update)): (key, additions)
               for key, additions in merges.items() for entity, is_update in [key]}
    for _ in range(MAX_CAS_ATTEMPTS):
        if not pending:
            return out
        rows = _merge_rows(traversal_id, sorted({entity for entity, _ in pending}))
        again = {}
        for target, (key, additions) in pending.items():
            row = rows.get(target)
            if row is None:
                out[key] = (None, None)
                continue
            needed = set(row.predecessors)
            was_ready = needed <= set(row.input_data)
            merged = {**row.input_data, **additions}
            if merged == row.input_data:
                out[key] = (False, merged)
            elif _merge_write(row, merged):
                out[key] = ((not was_ready and needed <= set(merged)), merged)
            else:
                again[target] = (key, additions)
        pending = again
    raise RuntimeError(f"sync points {sorted(pending)} in {traversal_id}: too much contention")
