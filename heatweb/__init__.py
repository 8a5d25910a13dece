"""heatweb: a Heat-compatible orchestration service on Django and Celery."""

from .celery import app as celery_app

__all__ = ("celery_app",)
