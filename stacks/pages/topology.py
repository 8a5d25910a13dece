"""A layered drawing of a stack's dependency graph, for the topology SVG.

Pure Python: a resource's column is the length of the longest chain of
requirements below it, so every edge points right, from a requirement to
the resource that needs it.
"""
from dataclasses import dataclass, field

from stacks.models import states as st

NODE_W, NODE_H = 180, 46
GAP_X, GAP_Y, MARGIN = 70, 18, 12


@dataclass
class Node:
    key: object
    name: str
    type: str
    state: str
    requires: list
    column: int = 0
    row: int = 0

    @property
    def x(self):
        return MARGIN + self.column * (NODE_W + GAP_X)

    @property
    def y(self):
        return MARGIN + self.row * (NODE_H + GAP_Y)

    @property
    def status(self):
        return "INIT" if self.state == st.INIT_COMPLETE else st.split(self.state)[1]

    @property
    def label(self):
        return self.name if len(self.name) <= 22 else self.name[:21] + "…"


@dataclass
class Layout:
    nodes: list
    edges: list = field(default_factory=list)
    width: int = 0
    height: int = 0
    node_w: int = NODE_W
    node_h: int = NODE_H


def _columns(nodes):
    by_key = {n.key: n for n in nodes}
    done = {}

    def column(node, path=()):
        if node.key in done:
            return done[node.key]
        if node.key in path:  # a cycle cannot be stored, but never loop on one
            return 0
        below = [column(by_key[r], path + (node.key,)) + 1 for r in node.requires if r in by_key]
        done[node.key] = max(below, default=0)
        return done[node.key]

    for node in nodes:
        node.column = column(node)


def layout(resources):
    """A ``Layout`` for resources with ``pk``, ``name``, ``type``, ``state``, ``requires``."""
    nodes = [Node(r.pk, r.name, r.type, r.state, list(r.requires or ())) for r in resources]
    _columns(nodes)
    rows = {}
    for node in sorted(nodes, key=lambda n: (n.column, n.name)):
        node.row = rows.get(node.column, 0)
        rows[node.column] = node.row + 1
    by_key = {n.key: n for n in nodes}
    edges = []
    for node in nodes:
        for key in node.requires:
            source = by_key.get(key)
            if source is None:
                continue
            x1, y1 = source.x + NODE_W, source.y + NODE_H / 2
            x2, y2 = node.x, node.y + NODE_H / 2
            bend = (x2 - x1) / 2
            edges.append(f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}")
    columns = max((n.column for n in nodes), default=-1) + 1
    height_rows = max(rows.values(), default=0)
    return Layout(nodes=nodes, edges=edges,
                  width=max(2 * MARGIN + columns * NODE_W + max(columns - 1, 0) * GAP_X, 200),
                  height=max(2 * MARGIN + height_rows * NODE_H + max(height_rows - 1, 0) * GAP_Y,
                             60))
