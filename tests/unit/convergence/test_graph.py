"""The convergence graph, pure Python."""
import pytest

from convergence.graph import converge_graph, walk_graph
from heatweb.exceptions import CircularDependencyException

A, B, C, D, E = 1, 2, 3, 4, 5
NAMES = {A: "A", B: "B", C: "C", D: "D", E: "E"}


def dependency_pairs(graph):
    """(dependent, requirement) pairs of the update nodes, by name."""
    return {(NAMES[after[0]], NAMES[before[0]])
            for before, afters in graph.edges.items() for after in afters
            if before[1] and after[1]}


def test_five_resource_example():
    # C requires A and B; D and E require C.
    graph = converge_graph(new_requires={A: [], B: [], C: [A, B], D: [C], E: [C]},
                           existing_requires={}, in_new_template=set())
    assert dependency_pairs(graph) == {("E", "C"), ("D", "C"), ("C", "A"), ("C", "B")}
    assert len(graph.nodes) == 5  # one sync point each, plus the stack's own
    assert graph.leaves() == [(A, True), (B, True)]
    assert graph.roots() == [(D, True), (E, True)]


def test_update_adds_cleanup_nodes_in_reverse_order():
    # Existing: B requires A. New template keeps A and B, adds C requiring B.
    graph = converge_graph(new_requires={A: [], B: [A], C: [B]},
                           existing_requires={A: [], B: [A]}, in_new_template={A, B})
    assert (B, False) in graph.successors((B, True))  # own update before own cleanup
    assert (A, False) in graph.successors((B, False))  # dependents cleaned first
    assert (B, False) in graph.successors((C, True))  # new dependent updated before
    assert graph.leaves() == [(A, True)]


def test_removed_resource_only_has_a_cleanup_node():
    graph = converge_graph(new_requires={A: []}, existing_requires={A: [], B: [A]},
                           in_new_template={A})
    assert (B, True) not in graph.nodes
    assert (A, False) in graph.successors((B, False))


def test_kept_resources_that_cannot_be_replaced_get_no_cleanup_node():
    # A chain A <- B <- C, all kept; B and C cannot be replaced, A can.
    graph = converge_graph(new_requires={A: [], B: [A], C: [B]},
                           existing_requires={A: [], B: [A], C: [B]},
                           in_new_template={A, B, C}, no_cleanup={B, C})
    assert (B, False) not in graph.nodes and (C, False) not in graph.nodes
    assert (A, False) in graph.nodes  # A may be replaced: its old self is cleaned up
    assert (A, False) in graph.successors((B, True))  # ... once B no longer needs it
    assert graph.roots() == [(A, False), (C, True)]


def test_a_removed_requirement_is_cleaned_after_its_kept_dependent_updates():
    # B required A; the new template removes A, B (never replaced) stays.
    graph = converge_graph(new_requires={B: []}, existing_requires={A: [], B: [A]},
                           in_new_template={B}, no_cleanup={B})
    assert (B, False) not in graph.nodes
    assert graph.successors((B, True)) == {(A, False)}


def test_delete_graph_is_reverse_dependency_order():
    graph = converge_graph(new_requires={}, existing_requires={A: [], B: [A], C: [B]},
                           in_new_template=set())
    assert graph.leaves() == [(C, False)]
    assert graph.roots() == [(A, False)]


def test_cycle_is_refused():
    with pytest.raises(CircularDependencyException):
        converge_graph(new_requires={A: [B], B: [A]}, existing_requires={},
                       in_new_template=set())


def test_walk_graph_forward_and_reverse():
    forward = walk_graph({A: [], B: [A]}, reverse=False)
    assert forward.leaves() == [(A, True)]
    reverse = walk_graph({A: [], B: [A]}, reverse=True)
    assert reverse.leaves() == [(B, False)]
    assert reverse.successors((B, False)) == {(A, False)}
