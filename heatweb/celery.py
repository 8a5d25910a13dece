"""The Celery app: every worker process is one convergence engine."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")

app = Celery("heatweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
