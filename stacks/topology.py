"""A layered drawing of a stack's dependency graph, for the topology SVG.

Pure Python: a resource's column is the length of the longest chain of
requirements below it, so every edge points right, from a requirement to
the resource that needs it.
"""
from dataclasses import dataclass, field

from stacks.models import states as st

NODE_W, NODE_H = 180, 46
GAP_X, GAP_Y, MARGIN = 70, 18, 12


FAMILIES = (  # (family, test on the type), first match wins
    ("deployment", lambda t: "Deployment" in t),
    ("group", lambda t: t.endswith(("ResourceGroup", "AutoScalingGroup", "InstanceGroup"))),
    ("server", lambda t: t == "OS::Nova::Server"),
    ("image", lambda t: t.startswith("OS::Glance::")),
    ("port", lambda t: t in ("OS::Neutron::Port", "OS::Neutron::FloatingIP")),
    ("network", lambda t: t.startswith("OS::Neutron::")),
    ("config", lambda t: t.endswith(("Config", "MultipartMime"))),
    ("stack", lambda t: t == "OS::Heat::Stack" or t.endswith((".yaml", ".yml", ".json"))
     or "://" in t),
)


def family(type_name):
    """The icon family of a resource type: server, image, network, port, config,
    deployment, stack (nested), group, or other."""
    return next((name for name, test in FAMILIES if test(type_name)), "other")


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
    def family(self):
        return family(self.type)

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
        return self.name if len(self.name) <= 18 else self.name[:17] + "…"


@dataclass
class Layout:
    nodes: list
    edges: list = field(default_factory=list)
    width: int = 0
    height: int = 0
    node_w: int = NODE_W
    node_h: int = NODE_H


def _columns(nodes):
    """Each node's column: the longest chain of requirements below it.

    Iterative (a legal chain of 1000 resources is 1000 levels deep), and a
    requirement met again while its own column is being worked out (a cycle,
    which cannot be stored) counts as column 0 instead of looping.
    """
    by_key = {n.key: n for n in nodes}
    done = {}
    for start in nodes:
        if start.key in done:
            continue
        open_keys = {start.key}
        stack = [(start, iter(start.requires))]
        while stack:
            node, pending = stack[-1]
            child = next((by_key[r] for r in pending if r in by_key and r not in done
                          and r not in open_keys), None)
            if child is not None:
                open_keys.add(child.key)
                stack.append((child, iter(child.requires)))
                continue
            stack.pop()
            open_keys.discard(node.key)
            done[node.key] = max((done[r] + 1 for r in node.requires if r in done), default=0)
    for node in nodes:
        node.column = done[node.key]


def layout(resources, deps=None):
    """A ``Layout`` for resources with ``pk``, ``name``, ``type``, ``state``, ``requires``.

    ``deps``: ``{name: names it depends on}`` instead of the stored ``requires``
    (``stacks.pages.selectors.dependency_names``: edges during a create too).
    """
    if deps is None:
        nodes = [Node(r.pk, r.name, r.type, r.state, list(r.requires or ())) for r in resources]
    else:
        nodes = [Node(r.name, r.name, r.type, r.state, list(deps.get(r.name, ())))
                 for r in resources]
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
