"""SyncPoint compare-and-swap: every merge counts once, ready fires once."""
import threading

import pytest
from django.db import connection

from convergence.graph import converge_graph
from convergence.models import SyncPoint
from convergence.sync_points import node_key, sync_point_merge, sync_points_create
from heatweb.models import Project
from stacks.models import RawTemplate, Stack


def make_stack():
    project = Project.objects.create(name=f"p{Project.objects.count()}")
    raw = RawTemplate.objects.create(template={"heat_template_version": "2016-10-14"})
    return Stack.objects.create(project=project, name="s", raw_template=raw)


@pytest.mark.django_db
def test_sync_points_created_per_node_plus_stack():
    stack = make_stack()
    graph = converge_graph(new_requires={1: [], 2: [], 3: [1, 2]}, existing_requires={},
                           in_new_template=set())
    sync_points_create(stack, "t1", graph)
    rows = {(r.entity_id, r.is_update): r for r in SyncPoint.objects.filter(traversal_id="t1")}
    assert set(rows) == {("1", True), ("2", True), ("3", True), (str(stack.pk), True)}
    assert sorted(rows[("3", True)].predecessors) == [node_key(1, True), node_key(2, True)]
    assert rows[("1", True)].successors == [[3, True, 2]]
    assert rows[(str(stack.pk), True)].predecessors == [node_key(3, True)]


@pytest.mark.django_db
def test_duplicate_merge_does_not_trigger_twice():
    stack = make_stack()
    graph = converge_graph(new_requires={1: [], 2: [], 3: [1, 2]}, existing_requires={},
                           in_new_template=set())
    sync_points_create(stack, "t2", graph)
    first = sync_point_merge(traversal_id="t2", entity_id=3, is_update=True,
                             additions={node_key(1, True): {"x": 1}})
    assert first[0] is False
    ready, data = sync_point_merge(traversal_id="t2", entity_id=3, is_update=True,
                                   additions={node_key(2, True): {"y": 2}})
    assert ready is True and set(data) == {node_key(1, True), node_key(2, True)}
    again = sync_point_merge(traversal_id="t2", entity_id=3, is_update=True,
                             additions={node_key(2, True): {"y": 2}})
    assert again[0] is False
    assert sync_point_merge(traversal_id="gone", entity_id=3, is_update=True,
                            additions={"k": 1}) == (None, None)


@pytest.mark.django_db(transaction=True)
def test_concurrent_merges_lose_nothing():
    stack = make_stack()
    n = 12
    graph = converge_graph(new_requires={**{i: [] for i in range(1, n + 1)},
                                         100: list(range(1, n + 1))},
                           existing_requires={}, in_new_template=set())
    sync_points_create(stack, "t3", graph)
    results = []
    barrier = threading.Barrier(n)

    def merge(i):
        barrier.wait()
        try:
            results.append(sync_point_merge(traversal_id="t3", entity_id=100, is_update=True,
                                            additions={node_key(i, True): i})[0])
        finally:
            connection.close()

    threads = [threading.Thread(target=merge, args=(i,)) for i in range(1, n + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    row = SyncPoint.objects.get(traversal_id="t3", entity_id="100")
    assert len(row.input_data) == n
    assert results.count(True) == 1 and len(results) == n
    assert row.atomic_key == n
