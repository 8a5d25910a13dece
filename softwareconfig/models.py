"""Software configs and deployments, as Heat stores them.

A ``SoftwareConfig`` is immutable data (a script, a component's per-action
configs, a structured map) owned by a project. A ``SoftwareDeployment``
says "this config is (being) applied to that server": the agent on the
server reads the configs of its deployments from the metadata endpoint and
reports status and outputs back. Deployments made by the
``OS::Heat::SoftwareDeployment`` resource point at a derived config made
for one action (see ``softwareconfig.services.derive_config``).
"""
import uuid

from django.db import models

from heatweb.models import Project

DEPLOYMENT_STATUSES = ("IN_PROGRESS", "COMPLETE", "FAILED")


class SoftwareConfig(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE,
                                related_name="software_configs")
    name = models.CharField(max_length=255, blank=True, default="")
    group = models.CharField(max_length=255, default="Heat::Ungrouped")
    config = models.JSONField(null=True, blank=True)
    inputs = models.JSONField(default=list, blank=True)
    outputs = models.JSONField(default=list, blank=True)
    options = models.JSONField(default=dict, blank=True)
    derived = models.BooleanField(default=False, help_text="Made by a deployment for one action.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.name or self.pk} ({self.group})"


class SoftwareDeployment(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE,
                                related_name="software_deployments")
    config = models.ForeignKey(SoftwareConfig, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="deployments")
    server_id = models.CharField(max_length=255, db_index=True)
    input_values = models.JSONField(default=dict, blank=True)
    output_values = models.JSONField(default=dict, blank=True)
    action = models.CharField(max_length=32, default="INIT")
    status = models.CharField(max_length=32, default="COMPLETE")
    status_reason = models.TextField(blank=True, default="")
    stack_user_project_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.pk} on {self.server_id}: {self.action}_{self.status}"
