"""Raw templates: each version of a stack's template, files and environment."""
from django.db import models


class RawTemplate(models.Model):
    """One immutable template version (rows are never updated, so workers cache them)."""

    template = models.JSONField()
    # The template text as submitted (a page's or an API client's YAML string), shown
    # by the Template tab; empty when it came as a JSON object (``template`` says it all).
    source = models.TextField(blank=True, default="")
    files = models.JSONField(default=dict, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"template {self.pk}"
