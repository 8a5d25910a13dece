"""Images of the cloud (``OS::Glance::Image``, ``OS::Glance::WebImage``): simulated or Glance."""
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range

LOCK_SAVED = "lock_saved_protected"  # plugin data: the image's protected flag before the lock
MAX_DATA_BYTES = 64 * 1024


def _format(kind, default, values):
    return Property("String", description=f"{kind} format.", default=default,
                    constraints=(AllowedValues(values),))


COMMON_PROPERTIES = {
    "name": Property("String", description="Image name.", update_allowed=True),
    "container_format": _format("Container", "bare",
                                ("ami", "ari", "aki", "bare", "ova", "ovf", "docker")),
    "disk_format": _format("Disk", "qcow2",
                           ("ami", "ari", "aki", "vhd", "vmdk", "raw", "qcow2", "vdi", "iso")),
    "min_disk": Property("Integer", description="Minimum disk (GB).", default=0,
                         constraints=(Range(0, None),)),
    "min_ram": Property("Integer", description="Minimum RAM (MB).", default=0,
                        constraints=(Range(0, None),)),
    "protected": Property("Boolean", description="Protect against deletion.", default=False,
                          update_allowed=True),
    "visibility": Property("String", description="Visibility.", default="private",
                           update_allowed=True,
                           constraints=(AllowedValues(("public", "private", "community",
                                                       "shared")),)),
    "tags": Property("List", description="Tags.", update_allowed=True),
    "id": Property("String", description="Accepted; ignored."),
}


@register
class Image(ResourcePlugin):
    """An image (a Glance image, or a simulated one), from a URL or from small inline data.

    ``location`` is a URL the cloud downloads (Glance's web-download
    import); ``data`` (a heatweb extension, at most 64 KiB of text) is
    uploaded as the image's bytes. At lock level ``all`` the image is made
    ``protected`` (the cloud then refuses to delete it); unlocking restores
    the flag it had before.
    """

    held_kind = "image"
    type_name = "OS::Glance::Image"
    cloud_calls_only = True
    properties_schema = {
        **COMMON_PROPERTIES,
        "location": Property("String", description="URL of the image data.", default=""),
        "data": Property("String", description="Image bytes (text, at most 64 KiB), "
                                               "uploaded instead of a location."),
        "is_public": Property("Boolean", description="Public image (old spelling).",
                              update_allowed=True),
    }
    attributes_schema = {"show": Attribute("Everything the cloud says of the image."),
                         "name": Attribute("Image name."),
                         "status": Attribute("The image's status.")}

    @property
    def cloud(self):
        return self.context.cloud

    def _fields(self, props):
        visibility = props.get("visibility")
        if props.get("is_public") is not None:
            visibility = "public" if props["is_public"] else "private"
        return {"container_format": props.get("container_format"),
                "disk_format": props.get("disk_format"), "location": props.get("location"),
                "min_disk": props.get("min_disk"), "min_ram": props.get("min_ram"),
                "protected": props.get("protected"), "visibility": visibility,
                "tags": props.get("tags")}

    def handle_create(self):
        name = self.properties.get("name") or f"{self.context.stack_name}-{self.name}"
        data = self.properties.get("data")
        if data is not None and len(data.encode()) > MAX_DATA_BYTES:
            raise ResourceFailure(f"data is {len(data.encode())} bytes; at most "
                                  f"{MAX_DATA_BYTES} can be uploaded inline")
        self.physical_id = _cloud_call(
            self.cloud.image_create, project_id=self.context.project_id, name=name,
            creation_key=self.creation_key, find_first=self.creation_key_reused, data=data.encode() if data is not None else None,
            **self._fields(self.properties))

    def check_create_complete(self, cookie):
        image = _cloud_call(self.cloud.image_get, self.physical_id)
        if image is None or image["status"] in ("killed", "deleted"):
            raise ResourceFailure(f"Image {self.physical_id} went to status "
                                  f"{image['status'] if image else 'deleted'}")
        return image["status"] == "active"

    def drift_pairs(self):
        image = _cloud_call(self.cloud.image_get, self.physical_id) if self.physical_id \
            else None
        if image is None or image.get("status") in ("killed", "deleted"):
            raise ResourceFailure(f"Image {self.physical_id or self.name} does not exist")
        wanted = {k: v for k, v in self._fields(self.properties).items()
                  if v is not None and k in image and k != "location"}
        if self.data.get(LOCK_SAVED) is not None:
            wanted.pop("protected", None)  # the stack lock holds it protected
        if self.properties.get("name"):
            wanted["name"] = self.properties["name"]
        return {k: (v, image.get(k)) for k, v in wanted.items()}

    def handle_update(self, new_properties, changed):
        if _cloud_call(self.cloud.image_get, self.physical_id) is None:
            raise ResourceFailure(f"Image {self.physical_id} could not be found "
                                  f"(deleted outside heatweb)")
        fields = self._fields(new_properties)
        fields.pop("location", None)
        if "name" in changed and new_properties.get("name"):
            fields["name"] = new_properties["name"]
        if self.data.get(LOCK_SAVED) is not None:
            fields.pop("protected", None)  # locked: the lock keeps it protected
        _cloud_call(self.cloud.image_update, self.physical_id, **fields)
        self.properties = new_properties

    def handle_delete(self):
        if self.physical_id:
            _cloud_call(self.cloud.image_delete, self.physical_id)

    def handle_check(self):
        if _cloud_call(self.cloud.image_get, self.physical_id) is None:
            raise ResourceFailure(f"Image {self.physical_id} does not exist")

    def handle_lock(self):
        image = _cloud_call(self.cloud.image_get, self.physical_id)
        if image is None:
            raise ResourceFailure(f"Image {self.physical_id} does not exist")
        if self.data.get(LOCK_SAVED) is None:
            self.data[LOCK_SAVED] = bool(image["protected"])
        _cloud_call(self.cloud.image_protect, self.physical_id, True)
        self.lock_note = (f"Image {self.physical_id} was already protected before the stack "
                          f"lock; left protected" if self.data[LOCK_SAVED] else
                          f"Image {self.physical_id} protected")

    def physical_lock_state(self):
        image = _cloud_call(self.cloud.image_get, self.physical_id) if self.physical_id \
            else None
        if image is None:
            raise ResourceFailure(f"Image {self.physical_id or self.name} does not exist")
        return {"object": f"image {self.physical_id}", "locked": bool(image["protected"]),
                "detail": "protected" if image["protected"] else ""}

    def handle_unlock(self):
        saved = self.data.pop(LOCK_SAVED, None)
        if self.physical_id and saved is not None:
            _cloud_call(self.cloud.image_protect, self.physical_id, saved)
            self.lock_note = (f"Image {self.physical_id} left protected (restored: it was "
                              f"protected before the stack lock)" if saved else
                              f"Image {self.physical_id} unprotected (restored: it was not "
                              f"protected before the stack lock)")

    def physical_state(self):
        image = self.cloud.image_get(self.physical_id) if self.physical_id else None
        if image is None:
            return {"status": "not found"}
        return {"status": image["status"], "protected": bool(image.get("protected"))}

    physical_lock_word = "protected"

    def lock_held_before(self):
        return self.data.get(LOCK_SAVED)

    def get_attribute(self, name, *path):
        image = self.cloud.image_get(self.physical_id) if self.physical_id and self.context \
            else None
        if image is None:
            return None
        return {"show": image, "name": image["name"], "status": image["status"]}.get(name)


@register
class WebImage(Image):
    """An image the cloud downloads from ``location`` (Heat's ``OS::Glance::WebImage``).

    Locked and unlocked like ``OS::Glance::Image``.
    """

    type_name = "OS::Glance::WebImage"
    properties_schema = {
        **COMMON_PROPERTIES,
        "location": Property("String", description="URL the image is downloaded from.",
                             required=True),
        "os_distro": Property("String", description="The image's operating system."),
        "architecture": Property("String", description="CPU architecture."),
        "owner": Property("String", description="Accepted; the image belongs to the project."),
        "extra_properties": Property("Map", description="Accepted; ignored.",
                                     update_allowed=True),
    }
