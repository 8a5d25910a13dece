"""convergence.metrics: the per-process counts bench_engines sums."""
import json
import os
import uuid

import pytest

from convergence.metrics import metrics_install, metrics_read, metrics_uninstall
from convergence.tasks import traversal_finish
from heatweb.models import Project


@pytest.mark.django_db
def test_statements_and_tasks_are_counted_into_the_process_file(tmp_path):
    metrics_install(tmp_path)
    try:
        Project.objects.count()
        traversal_finish.apply(args=(str(uuid.uuid4()), "no-such-traversal"))
    finally:
        metrics_uninstall()
    totals = json.loads((tmp_path / f"{os.getpid()}.json").read_text())
    assert totals["pid"] == os.getpid()
    assert totals["tasks"] == 1
    assert totals["queries"] >= 2  # the count, then the task's SELECT ... FOR UPDATE
    assert metrics_read(tmp_path) == {"queries": totals["queries"], "tasks": 1,
                                      "cloud_calls": 0}

    Project.objects.count()
    traversal_finish.apply(args=(str(uuid.uuid4()), "no-such-traversal"))
    assert metrics_read(tmp_path) == {"queries": totals["queries"], "tasks": 1,
                                      "cloud_calls": 0}
