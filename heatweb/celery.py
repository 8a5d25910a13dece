"""The Celery app; the convergence app makes every worker process an engine
(``convergence.apps``)."""
import gc
import os
import signal

from celery import Celery
from celery.signals import worker_init, worker_process_init

import heatweb.broker  # noqa: F401 - registers the heatwebfs:// transport
from heatweb.lifeline import die_with_launcher, die_with_parent

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")

app = Celery("heatweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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
    # The code loaded so far stays out of the collector's full passes (as the web workers').
    gc.collect()
    gc.freeze()
