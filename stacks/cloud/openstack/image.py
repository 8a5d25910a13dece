"""Glance on a real cloud: images made, read, changed and deleted.

An image carries its creation key as the Glance property ``KEY_PROPERTY``
and a create first looks for it; an image given a ``location`` is imported
by Glance itself (web-download), and Glance's refusal of the URI fails the
create, as Heat's does.
"""
from stacks.cloud.driver import CloudError
from stacks.cloud.openstack.calls import KEY_PROPERTY, call, glance_words, gone


class ImageCalls:
    """Mixin of ``OpenStackCloud``: the ``image_*`` methods."""

    @staticmethod
    def _image_dict(image):
        return {"id": image.id, "name": image.name, "status": image.status,
                "protected": bool(image.is_protected), "visibility": image.visibility,
                "container_format": image.container_format, "disk_format": image.disk_format,
                "min_disk": image.min_disk, "min_ram": image.min_ram,
                "tags": list(image.tags or []), "size": image.size,
                "location": (image.properties or {}).get("heatweb_location", ""),
                "checksum": image.checksum, "owner": image.owner_id}

    def image_create(self, *, project_id, name, creation_key=None, find_first=True, data=None,
                     **fields):
        if creation_key and find_first:
            for image in call(self.conn.image.images, name=name):
                if (image.properties or {}).get(KEY_PROPERTY) == creation_key and \
                        image.status not in ("killed", "deleted", "pending_delete"):
                    return image.id
        location = fields.pop("location", None)
        protected = fields.pop("protected", None)
        attrs = {k: v for k, v in fields.items() if v is not None}
        extra = {KEY_PROPERTY: creation_key} if creation_key else {}
        if location:
            extra["heatweb_location"] = location
        web = data is None and location  # Glance downloads it (web-download import)
        # allow_duplicates: openstacksdk would otherwise return any image of that name.
        image = call(self.conn.image.create_image, name=name, allow_duplicates=True,
                     wait=False, **({} if web else {"data": data}), **attrs, **extra)
        if web:
            self._web_download(image, location)
        if protected:
            call(self.conn.image.update_image, image, is_protected=True)
        return image.id

    def _web_download(self, image, location):
        """Have Glance import the image from ``location``; Glance's refusal (a URI its
        import filtering does not pass, ...) fails the create, as Heat's image_import
        does, and the image record goes (openstacksdk's create_image would swallow it and
        leave the image queued for ever)."""
        response = call(self.conn.image.post, f"/images/{image.id}/import",
                        json={"method": {"name": "web-download", "uri": location}})
        if response.status_code < 400:
            return
        gone(self.conn.image.delete_image, image, ignore_missing=True)
        raise CloudError(f"{glance_words(response.text)} (HTTP {response.status_code})")

    def image_get(self, image_id):
        image = gone(self.conn.image.get_image, image_id)
        return None if image is None or image.status == "deleted" else self._image_dict(image)

    def image_statuses(self, image_ids):
        """One Glance list call (``id=in:...``) for many images."""
        ids = list(image_ids)
        if not ids:
            return {}
        found = {image.id: image.status
                 for image in call(self.conn.image.images, id="in:" + ",".join(ids))}
        return {i: found.get(i, "deleted") for i in ids}

    def image_update(self, image_id, **fields):
        image = gone(self.conn.image.get_image, image_id)
        if image is None:
            raise CloudError(f"No image found with ID {image_id} (HTTP 404)")
        renamed = {"protected": "is_protected"}
        changes = {renamed.get(k, k): v for k, v in fields.items()
                   if v is not None and k not in ("location",)}
        if changes:
            call(self.conn.image.update_image, image, **changes)

    def image_delete(self, image_id):
        gone(self.conn.image.delete_image, image_id, ignore_missing=True)

    def image_protect(self, image_id, protected):
        self.image_update(image_id, protected=bool(protected))
