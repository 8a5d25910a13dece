"""A message a worker took and never acknowledged (kill -9) goes back to the queue.

Real processes on the run mode's broker (the filesystem broker, or Redis):
one takes a message without acknowledging it and kills itself with
SIGKILL; after the visibility timeout, ``broker_restore_unacked`` (what the
engines' sweep calls) puts it back, and an acknowledged one leaves nothing.
"""
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import ROOT

SETUP = "import os, django\ndjango.setup()\nfrom heatweb.celery import app\n"
TAKE = SETUP + """
with app.connection_for_read() as conn:
    message = conn.default_channel.basic_get(os.environ["HEATWEB_QUEUE"], no_ack=False)
    print("taken" if message else "empty", flush=True)
    if os.environ.get("ACK"):
        message.ack()
    else:
        os.kill(os.getpid(), 9)
"""


@pytest.fixture
def broker(tmp_path):
    env = {**os.environ, "HEATWEB_DATA_DIR": str(tmp_path), "CELERY_VISIBILITY_TIMEOUT": "1",
           "HEATWEB_QUEUE": f"redelivery-{uuid.uuid4().hex[:8]}",
           "DJANGO_SETTINGS_MODULE": "heatweb.settings", "PYTHONPATH": str(ROOT)}

    def run(code, **extra):
        return subprocess.run([sys.executable, "-c", code], env={**env, **extra}, cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    def queued():
        if env.get("CELERY_BROKER_URL", "").startswith("redis"):
            import redis

            client = redis.Redis.from_url(env["CELERY_BROKER_URL"])
            try:
                return client.llen(env["HEATWEB_QUEUE"])
            finally:
                client.close()
        return len(list(Path(tmp_path, "broker", "queue").glob("*.msg")))

    run.queued = queued
    yield run
    if env.get("CELERY_BROKER_URL", "").startswith("redis"):
        run(SETUP + "app.connection_for_write().default_channel.queue_purge("
                    "os.environ['HEATWEB_QUEUE'])")


def test_a_message_taken_by_a_killed_process_is_handed_back(broker):
    sent = broker(SETUP + "app.send_task('convergence.traversal_finish', args=['s', 't'])")
    assert sent.returncode == 0, sent.stderr
    assert broker.queued() == 1

    taker = broker(TAKE)
    assert (taker.returncode, taker.stdout.strip()) == (-signal.SIGKILL, "taken")
    assert broker.queued() == 0
    time.sleep(1.5)  # past the visibility timeout

    restored = broker(SETUP + "from heatweb.broker import broker_restore_unacked\n"
                              "broker_restore_unacked(app)")
    assert restored.returncode == 0, restored.stderr
    assert broker.queued() == 1

    acked = broker(TAKE, ACK="1")
    assert (acked.returncode, acked.stdout.strip()) == (0, "taken")
    time.sleep(1.5)
    broker(SETUP + "from heatweb.broker import broker_restore_unacked\n"
                   "broker_restore_unacked(app)")
    assert broker.queued() == 0


LIST = SETUP + """import json
from heatweb.broker import broker_queued_tasks
print(json.dumps(sorted(broker_queued_tasks(app))))
"""


def test_the_queued_tasks_listed_for_the_sweep_include_those_taken_and_not_acknowledged(broker):
    sent = broker(SETUP + "app.send_task('convergence.traversal_finish', args=['s', 't1'])\n"
                          "app.send_task('convergence.converge_nodes', args=['s', 't2', []])")
    assert sent.returncode == 0, sent.stderr
    listed = broker(LIST)
    assert listed.returncode == 0, listed.stderr
    expected = [["convergence.converge_nodes", ["s", "t2", []]],
                ["convergence.traversal_finish", ["s", "t1"]]]
    assert json.loads(listed.stdout) == expected

    taker = broker(TAKE)  # takes one and dies holding it
    assert (taker.returncode, taker.stdout.strip()) == (-signal.SIGKILL, "taken")
    assert broker.queued() == 1
    assert json.loads(broker(LIST).stdout) == expected
