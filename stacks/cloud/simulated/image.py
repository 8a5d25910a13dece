"""Glance in the simulated cloud: images as ``SimImage`` rows.

An image is active when made (no upload to wait for); a protected image
refuses deletion, as Glance does.
"""
from django.utils import timezone

from stacks.cloud.driver import CloudError
from stacks.cloud.models import SimImage


class SimulatedGlance:
    """Mixin of ``SimulatedCloud``: the ``image_*`` methods."""

    _IMAGE_FIELDS = ("name", "container_format", "disk_format", "location", "min_disk",
                     "min_ram", "protected", "visibility", "tags")

    def _image(self, image_id, operation=None):
        image = SimImage.objects.filter(pk=image_id, deleted_at__isnull=True).first()
        if image is None:
            raise CloudError(f"Image {image_id} could not be found.")
        if operation:
            self._fault(operation, image.project_id)
        return image

    def image_create(self, *, project_id, name, creation_key=None, find_first=True, data=None,
                     **fields):
        self._fault("image_create", project_id)
        if creation_key and find_first:
            found = SimImage.objects.filter(deleted_at__isnull=True, name=name,
                                            creation_key=creation_key).first()
            if found is not None:
                return found.id
        values = {k: v for k, v in fields.items() if k in self._IMAGE_FIELDS and v is not None}
        return SimImage.objects.create(project_id=project_id, name=name,
                                       creation_key=creation_key or "",
                                       size=len(data or b""), **values).id

    def image_get(self, image_id):
        image = SimImage.objects.filter(pk=image_id, deleted_at__isnull=True).first()
        if image is None:
            return None
        return {"id": image.id, "status": image.status,
                **{k: getattr(image, k) for k in self._IMAGE_FIELDS}}

    def image_statuses(self, image_ids):
        """One list query for many images (``deleted`` for those gone)."""
        ids = list(image_ids)
        found = dict(SimImage.objects.filter(pk__in=ids, deleted_at__isnull=True)
                     .values_list("id", "status"))
        return {image_id: found.get(image_id, "deleted") for image_id in ids}

    def image_update(self, image_id, **fields):
        image = self._image(image_id, "image_update")
        values = {k: v for k, v in fields.items() if k in self._IMAGE_FIELDS and v is not None}
        SimImage.objects.filter(pk=image.pk).update(**values)

    def image_delete(self, image_id):
        image = SimImage.objects.filter(pk=image_id, deleted_at__isnull=True).first()
        if image is None:
            return
        self._fault("image_delete", image.project_id)
        if image.protected:
            raise CloudError(f"Image {image_id} is protected and cannot be deleted (HTTP 403)")
        SimImage.objects.filter(pk=image.pk).update(deleted_at=timezone.now(), status="deleted")

    def image_protect(self, image_id, protected):
        image = self._image(image_id, "image_protect")
        SimImage.objects.filter(pk=image.pk).update(protected=bool(protected))
