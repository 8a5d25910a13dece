"""The Celery app; the convergence app makes every worker process an engine
(``convergence.apps``)."""
import os

from celery import Celery

import heatweb.broker  # noqa: F401 - registers the heatwebfs:// transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")

app = Celery("heatweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
