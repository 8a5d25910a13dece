"""Tables of the simulated cloud (servers, images, generic objects, injected faults)."""
import uuid

from django.db import models


def new_id():
    """A new row's id (the migrations name this default too)."""
    return uuid.uuid4().hex


class SimServer(models.Model):
    """A simulated Nova server."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    project_id = models.CharField(max_length=64, db_index=True)
    name = models.CharField(max_length=255)
    image = models.CharField(max_length=255)
    flavor = models.CharField(max_length=64)
    status = models.CharField(max_length=16, default="BUILD")
    locked = models.BooleanField(default=False)
    locked_reason = models.CharField(max_length=255, blank=True, default="")
    fault = models.CharField(max_length=255, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    user_data = models.TextField(blank=True, default="")
    networks = models.JSONField(default=list, blank=True)
    # Nova's further create options: admin_pass, config_drive, scheduler_hints, tags.
    options = models.JSONField(default=dict, blank=True)
    address = models.CharField(max_length=64, blank=True, default="")
    # The engine's key for the create that made it: a create run again finds it.
    creation_key = models.CharField(max_length=64, blank=True, default="", db_index=True)
    ready_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "stacks"
        verbose_name = "simulated server"

    def __str__(self):
        return f"{self.name} ({self.id})"


class SimImage(models.Model):
    """A simulated Glance image."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    project_id = models.CharField(max_length=64, db_index=True)
    name = models.CharField(max_length=255)
    container_format = models.CharField(max_length=32, blank=True, default="bare")
    disk_format = models.CharField(max_length=32, blank=True, default="qcow2")
    location = models.CharField(max_length=1024, blank=True, default="")
    min_disk = models.IntegerField(default=0)
    min_ram = models.IntegerField(default=0)
    protected = models.BooleanField(default=False)
    visibility = models.CharField(max_length=16, default="private")
    tags = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, default="active")
    creation_key = models.CharField(max_length=128, blank=True, default="", db_index=True)
    size = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "stacks"
        verbose_name = "simulated image"

    def __str__(self):
        return f"{self.name} ({self.id})"


class SimObject(models.Model):
    """A simulated cloud object of any kind (a network, router, flavor, project ...).

    ``fields`` holds the service's own field names (Neutron's, Nova's,
    Keystone's); what a kind does beyond storing them is in
    ``stacks.cloud.simulated.objects``.
    """

    id = models.CharField(primary_key=True, max_length=255, default=new_id, editable=False)
    kind = models.CharField(max_length=64, db_index=True)
    project_id = models.CharField(max_length=64, db_index=True)
    name = models.CharField(max_length=255, blank=True, default="")
    fields = models.JSONField(default=dict, blank=True)
    creation_key = models.CharField(max_length=128, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "stacks"
        verbose_name = "simulated cloud object"

    def __str__(self):
        return f"{self.kind} {self.name} ({self.id})"


class SimFault(models.Model):
    """Makes the named cloud operation fail, for tests and demonstrations."""

    operation = models.CharField(max_length=64, help_text="e.g. server_create, server_lock")
    project_id = models.CharField(max_length=64, default="*")
    message = models.CharField(max_length=255, default="Simulated cloud failure")
    remaining = models.IntegerField(default=1, help_text="0 = every call")

    class Meta:
        app_label = "stacks"
        verbose_name = "simulated fault"

    def __str__(self):
        return f"{self.operation}: {self.message}"


__all__ = ["SimFault", "SimImage", "SimObject", "SimServer"]
