"""The Celery app: every worker process is one convergence engine."""
import os
import signal

from celery import Celery
from celery.signals import celeryd_after_setup, worker_init, worker_process_init

import heatweb.broker  # noqa: F401 - registers the heatwebfs:// transport
from heatweb.lifeline import die_with_launcher, die_with_parent

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")

app = Celery("heatweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

if os.environ.get("HEATWEB_BENCH_METRICS_DIR"):  # manage.py bench_engines counts per process
    from convergence.metrics import metrics_from_environment  # only for bench runs

    worker_process_init.connect(metrics_from_environment)


# The worker's main process; its pool processes are forked from it and inherit this.
_worker_pid = {"pid": None}


@worker_init.connect
def worker_lifeline(**kwargs):
    """The worker's main process ends with ``manage.py serve`` (when started by it)."""
    _worker_pid["pid"] = os.getpid()
    die_with_launcher()


@worker_process_init.connect
def pool_lifeline(**kwargs):
    """A pool process ends with the worker's main process, even when that is killed -9."""
    if _worker_pid["pid"] not in (None, os.getpid()):  # the solo pool runs in the main one
        die_with_parent(_worker_pid["pid"], signal.SIGKILL)


@worker_process_init.connect
def engine_start(**kwargs):
    """Every pool process is an engine: register it and start its heartbeat at once."""
    from convergence.engines import engine_id  # cycle: convergence.engines imports this module

    engine_id()


@celeryd_after_setup.connect
def remember_node_name(sender, instance, **kwargs):
    """The worker's node name (``w1@host``), inherited by its pool processes for pings."""
    os.environ["HEATWEB_WORKER_NODE"] = str(sender)
