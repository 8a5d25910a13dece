"""Servers and images of the simulated cloud (``OS::Nova::Server``, ``OS::Glance::Image``).

The plugins talk to the cloud driver only (``stacks.cloud``); with the
default settings that is the simulated cloud.
"""
from stacks.cloud.driver import CloudError
from stacks.resources.base import ResourceFailure, ResourcePlugin, await_status, observed_status
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range


def _cloud_call(method, *args, **kwargs):
    try:
        return method(*args, **kwargs)
    except CloudError as error:
        raise ResourceFailure(str(error)) from None


@register
class Server(ResourcePlugin):
    """A server (simulated Nova instance): built, resized in place, suspended, locked.

    Changing ``image`` or ``user_data`` replaces the server; ``name``,
    ``flavor`` and ``metadata`` are updated in place. At lock level ``all``
    the server is locked in the cloud, which then refuses to delete,
    suspend, resume, reboot or rebuild it. The create is idempotent: the
    server is tagged with the engine's creation key, so a create run again
    after a crash finds it instead of building a second.
    """

    type_name = "OS::Nova::Server"
    properties_schema = {
        "name": Property("String", description="Server name.", update_allowed=True),
        "image": Property("String", description="Image name or id.", required=True),
        "flavor": Property("String", description="Flavor name.", required=True,
                           update_allowed=True),
        "key_name": Property("String", description="Keypair name."),
        "networks": Property("List", description="Networks to attach."),
        "metadata": Property("Map", description="Server metadata.", update_allowed=True),
        "user_data": Property("String", description="User data script.", default=""),
        "user_data_format": Property("String", description="How user_data is given to the server.",
                                     default="HEAT_CFNTOOLS",
                                     constraints=(AllowedValues(("HEAT_CFNTOOLS", "RAW",
                                                                 "SOFTWARE_CONFIG")),)),
        "software_config_transport": Property(
            "String", description="How the server gets software configuration.",
            default="POLL_SERVER_HEAT",
            constraints=(AllowedValues(("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL",
                                        "ZAQAR_MESSAGE")),)),
        "availability_zone": Property("String", description="Accepted; ignored."),
        "security_groups": Property("List", description="Accepted; ignored."),
    }
    attributes_schema = {
        "name": Attribute("Name of the server."),
        "first_address": Attribute("The server's first IP address."),
        "addresses": Attribute("Addresses per network."),
        "networks": Attribute("Addresses per network name."),
        "instance_name": Attribute("The cloud's name of the instance."),
        "accessIPv4": Attribute("The server's public IPv4 address."),
        "show": Attribute("Everything the cloud says of the server."),
    }

    @property
    def cloud(self):
        return self.context.cloud

    def _server_name(self, props):
        return props.get("name") or f"{self.context.stack_name}-{self.name}"

    def handle_create(self):
        props = self.properties
        self.physical_id = _cloud_call(
            self.cloud.server_create, project_id=self.context.project_id,
            name=self._server_name(props), image=props["image"], flavor=props["flavor"],
            metadata=props.get("metadata"), user_data=props.get("user_data"),
            networks=props.get("networks"), creation_key=self.creation_key)
        return self._await("ACTIVE")

    def _await(self, *wanted):
        return await_status("server", self.physical_id, wanted=wanted,
                            failed=("ERROR", "DELETED"))

    def _expect(self, cookie, *wanted):
        # The poll round passes the status it read for many servers at once.
        status = observed_status(cookie) or self.cloud.server_status(self.physical_id)
        if status == "ERROR" or status == "DELETED":
            raise ResourceFailure(f"Server {self.physical_id} went to status {status}")
        return status in wanted

    def check_create_complete(self, cookie):
        return self._expect(cookie, "ACTIVE")

    def handle_update(self, new_properties, changed):
        fields = {}
        if "name" in changed:
            fields["name"] = self._server_name(new_properties)
        if "flavor" in changed:
            fields["flavor"] = new_properties["flavor"]
        if "metadata" in changed:
            fields["metadata"] = new_properties.get("metadata") or {}
        if fields:
            _cloud_call(self.cloud.server_update, self.physical_id, **fields)
        self.properties = new_properties

    def handle_delete(self):
        if self.physical_id:
            _cloud_call(self.cloud.server_delete, self.physical_id)
            return await_status("server", self.physical_id, wanted=("DELETED",),
                                failed=("ERROR",))
        return None

    def check_delete_complete(self, cookie):
        if not self.physical_id:
            return True
        status = observed_status(cookie) or self.cloud.server_status(self.physical_id)
        if status == "ERROR":
            raise ResourceFailure(f"Server {self.physical_id} went to status {status}")
        return status == "DELETED"

    def handle_suspend(self):
        _cloud_call(self.cloud.server_suspend, self.physical_id)
        return self._await("SUSPENDED")

    def check_suspend_complete(self, cookie):
        return self._expect(cookie, "SUSPENDED")

    def handle_resume(self):
        _cloud_call(self.cloud.server_resume, self.physical_id)
        return self._await("ACTIVE")

    def check_resume_complete(self, cookie):
        return self._expect(cookie, "ACTIVE")

    def handle_check(self):
        if self.cloud.server_get(self.physical_id) is None:
            raise ResourceFailure(f"Server {self.physical_id} does not exist")

    def check_check_complete(self, cookie):
        return self._expect(cookie, "ACTIVE", "SUSPENDED")

    def handle_lock(self):
        _cloud_call(self.cloud.server_lock, self.physical_id)

    def handle_unlock(self):
        if self.physical_id:
            _cloud_call(self.cloud.server_unlock, self.physical_id)

    def attributes(self):
        """Every attribute from one ``server_get`` (not one call per attribute)."""
        server = self.cloud.server_get(self.physical_id) if self.physical_id and self.context \
            else None
        if server is None:
            return {name: None for name in self.attributes_schema}
        first = server["addresses"]["private"][0]["addr"]
        return {"name": server["name"], "first_address": first, "accessIPv4": first,
                "addresses": server["addresses"], "networks": {"private": [first]},
                "instance_name": f"instance-{server['id'][:8]}", "show": server}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)


@register
class Image(ResourcePlugin):
    """An image (simulated Glance image).

    At lock level ``all`` the image is made ``protected`` (the cloud then
    refuses to delete it); unlocking restores the flag it had before.
    """

    type_name = "OS::Glance::Image"
    properties_schema = {
        "name": Property("String", description="Image name.", update_allowed=True),
        "location": Property("String", description="URL of the image data.", default=""),
        "container_format": Property("String", description="Container format.", default="bare",
                                     constraints=(AllowedValues(("ami", "ari", "aki", "bare",
                                                                 "ova", "ovf", "docker")),)),
        "disk_format": Property("String", description="Disk format.", default="qcow2",
                                constraints=(AllowedValues(("ami", "ari", "aki", "vhd", "vmdk",
                                                            "raw", "qcow2", "vdi", "iso")),)),
        "min_disk": Property("Integer", description="Minimum disk (GB).", default=0,
                             constraints=(Range(0, None),)),
        "min_ram": Property("Integer", description="Minimum RAM (MB).", default=0,
                            constraints=(Range(0, None),)),
        "protected": Property("Boolean", description="Protect against deletion.", default=False,
                              update_allowed=True),
        "is_public": Property("Boolean", description="Public image (old spelling).",
                              update_allowed=True),
        "visibility": Property("String", description="Visibility.", default="private",
                               update_allowed=True,
                               constraints=(AllowedValues(("public", "private", "community",
                                                           "shared")),)),
        "tags": Property("List", description="Tags.", update_allowed=True),
        "id": Property("String", description="Accepted; ignored."),
    }
    attributes_schema = {"show": Attribute("Everything the cloud says of the image."),
                         "name": Attribute("Image name.")}

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
        self.physical_id = _cloud_call(self.cloud.image_create,
                                       project_id=self.context.project_id, name=name,
                                       **self._fields(self.properties))

    def handle_update(self, new_properties, changed):
        fields = self._fields(new_properties)
        if "name" in changed and new_properties.get("name"):
            fields["name"] = new_properties["name"]
        if self.data.get("lock_saved_protected") is not None:
            fields.pop("protected", None)  # locked: the lock keeps it protected
        _cloud_call(self.cloud.image_update, self.physical_id, **fields)
        self.properties = new_properties

    def handle_delete(self):
        if self.physical_id:
            _cloud_call(self.cloud.image_delete, self.physical_id)

    def handle_check(self):
        if self.cloud.image_get(self.physical_id) is None:
            raise ResourceFailure(f"Image {self.physical_id} does not exist")

    def handle_lock(self):
        image = self.cloud.image_get(self.physical_id)
        if image is None:
            raise ResourceFailure(f"Image {self.physical_id} does not exist")
        if self.data.get("lock_saved_protected") is None:
            self.data["lock_saved_protected"] = bool(image["protected"])
        _cloud_call(self.cloud.image_protect, self.physical_id, True)

    def handle_unlock(self):
        saved = self.data.pop("lock_saved_protected", None)
        if self.physical_id and saved is not None:
            _cloud_call(self.cloud.image_protect, self.physical_id, saved)

    def get_attribute(self, name, *path):
        image = self.cloud.image_get(self.physical_id) if self.physical_id and self.context \
            else None
        if image is None:
            return None
        return {"show": image, "name": image["name"]}.get(name)
