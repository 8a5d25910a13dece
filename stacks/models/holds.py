"""Who holds a cloud object: one resource per (cloud, kind, physical id)."""
from django.db import models

from stacks.models.resource import Resource
from stacks.models.stack import Stack


class CloudHold(models.Model):
    """A cloud object held by one resource: the resource made it, adopted it, or took it
    with ``external_id``.

    Recorded in the transaction that stores the resource's physical id and
    released when the resource lets go of it (deleted, abandoned, retained
    by ``DeletionPolicy: Retain``, replaced and cleaned up). Unique per cloud,
    kind and physical id: no second resource adopts an object another holds,
    and the engine deletes an object only through the resource that holds it.
    ``stack`` is the holding resource's stack, kept for the lock's question
    ("is the holder locked?") without a join through the resource.
    """

    cloud = models.CharField(max_length=255)
    kind = models.CharField(max_length=64)
    physical_id = models.CharField(max_length=255)
    resource = models.ForeignKey(Resource, on_delete=models.CASCADE, related_name="holds")
    stack = models.ForeignKey(Stack, on_delete=models.CASCADE, related_name="+")
    since = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cloud", "kind", "physical_id"],
                                               name="one_holder_per_cloud_object")]

    def __str__(self):
        return f"{self.kind} {self.physical_id} held by resource {self.resource_id}"
