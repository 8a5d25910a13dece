"""The convergence dependency graph of (resource_id, is_update) nodes.

Pure Python, no Django. An update node brings a resource to the new
template's definition, so update nodes follow the new template's
dependencies (requirements first). Every existing resource also gets a
cleanup node (is_update False) whose edges run the other way: dependents
are cleaned up before what they required, and a resource's own cleanup
comes after its update, and after the updates of everything that now
requires it, so a replaced resource is deleted only once nothing uses it.
"""
from collections import defaultdict
from dataclasses import dataclass, field

from heatweb.exceptions import CircularDependencyException

Node = tuple[int, bool]


@dataclass
class Graph:
    """Nodes with their edges; ``edges[a]`` holds the nodes that wait for ``a``."""

    nodes: set = field(default_factory=set)
    edges: dict = field(default_factory=lambda: defaultdict(set))
    preds: dict = field(default_factory=lambda: defaultdict(set))

    def add_node(self, node):
        self.nodes.add(node)

    def add_edge(self, before, after):
        """``after`` runs only once ``before`` has finished."""
        self.nodes.update((before, after))
        self.edges[before].add(after)
        self.preds[after].add(before)

    def successors(self, node):
        return self.edges.get(node, set())

    def predecessors(self, node):
        return self.preds.get(node, set())

    def leaves(self):
        """Nodes that can start at once."""
        return sorted(n for n in self.nodes if not self.preds.get(n))

    def roots(self):
        """Nodes nothing waits for: the stack's own sync point waits for them."""
        return sorted(n for n in self.nodes if not self.edges.get(n))

    def check_acyclic(self):
        indegree = {n: len(self.preds.get(n, ())) for n in self.nodes}
        ready = [n for n, d in indegree.items() if d == 0]
        seen = 0
        while ready:
            node = ready.pop()
            seen += 1
            for nxt in self.edges.get(node, ()):
                indegree[nxt] -= 1
                if indegree[nxt] == 0:
                    ready.append(nxt)
        if seen != len(self.nodes):
            cycle = sorted(str(n) for n, d in indegree.items() if d > 0)
            raise CircularDependencyException(cycle=", ".join(cycle))


def converge_graph(*, new_requires, existing_requires, in_new_template, no_cleanup=()):
    """Graph for a create/update/rollback/delete traversal.

    ``new_requires``: resource id -> ids it requires in the new template
    (only resources in the new template). ``existing_requires``: resource
    id -> ids it required when last converged (every existing resource,
    including old replaced ones). ``in_new_template``: ids of existing
    resources that the new template keeps (they get an update node too).
    ``no_cleanup``: kept resources that cannot be replaced, so their
    cleanup node would do nothing; they get none, and the cleanups that
    would have waited for it wait for their update node instead.
    """
    graph = Graph()
    cleans = {rid for rid in existing_requires
              if not (rid in no_cleanup and rid in in_new_template)}
    for rid, requires in new_requires.items():
        graph.add_node((rid, True))
        for req in requires:
            graph.add_edge((req, True), (rid, True))
            if req in cleans:
                graph.add_edge((rid, True), (req, False))
    for rid, requires in existing_requires.items():
        before = (rid, False) if rid in cleans else (rid, True)
        if rid in cleans:
            graph.add_node((rid, False))
            if rid in in_new_template:
                graph.add_edge((rid, True), (rid, False))
        for req in requires:
            if req in cleans:
                graph.add_edge(before, (req, False))
    graph.check_acyclic()
    return graph


def walk_graph(requires, *, reverse):
    """Graph for suspend/resume/check/lock/unlock over existing resources.

    Forward (requirements first) uses update nodes; ``reverse`` (dependents
    first, as suspend needs) uses cleanup-direction nodes.
    """
    graph = Graph()
    for rid, reqs in requires.items():
        graph.add_node((rid, not reverse))
        for req in reqs:
            if req not in requires:
                continue
            if reverse:
                graph.add_edge((rid, False), (req, False))
            else:
                graph.add_edge((req, True), (rid, True))
    return graph
