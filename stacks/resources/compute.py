"""Servers (``OS::Nova::Server``) of the cloud: simulated by default, or Nova.

The plugins talk to the cloud driver only (``stacks.cloud``).
"""
from stacks.cloud.driver import SERVER_OPTIONS, CloudError, CloudNotFound, nova_metadata
from stacks.resources import block_devices as bdm
from stacks.resources import server_networks
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG
from stacks.resources.base import ResourceFailure, ResourcePlugin, await_status, \
    observed_object, observed_status
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.implicit_dependencies import server_waits_for
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property

LOCK_SAVED = "lock_saved_locked"  # plugin data: was the server locked before the stack lock?


@register
class Server(ResourcePlugin):
    """A server (a Nova instance, or a simulated one): built, resized in place, suspended, locked.

    Changing ``image``, ``user_data``, ``key_name``, ``config_drive`` or
    ``scheduler_hints`` replaces the server; ``name``, ``flavor`` (a resize, or a
    replacement with ``flavor_update_policy: REPLACE``), ``metadata``, ``tags``,
    ``admin_pass`` and ``networks`` (interfaces detached and attached, those still
    wanted kept: ``server_networks``) are updated in place. A server that goes
    to ERROR fails the resource with the cloud's fault message. At lock level ``all`` the server is locked in the
    cloud (with a ``locked_reason`` naming the stack), which then refuses to
    delete, suspend, resume, reboot or rebuild it; unlocking leaves a server
    that was locked before the stack lock locked.
    """

    held_kind = "server"
    type_name = "OS::Nova::Server"
    cloud_calls_only = True
    properties_schema = {
        "name": Property("String", description="Server name.", update_allowed=True),
        "image": Property("String", description="Image name or id (none: boot from the "
                          "block device mapping's volume)."),
        "flavor": Property("String", description="Flavor name.", required=True,
                           update_allowed=True),
        "key_name": Property("String", description="Keypair name."),
        "networks": Property("List", description=(
            "Networks to attach: maps of network (name or id), port, fixed_ip, subnet."),
            update_allowed=True),
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
        "security_groups": Property("List", description=(
            "Security groups (names or ids) of the ports made for the server (not of "
            "ports given in networks).")),
        "admin_pass": Property("String", description="The server's administrator password "
                               "(set at boot; a change sets it again).", update_allowed=True),
        "config_drive": Property("Boolean", description="Give the server a config drive."),
        "scheduler_hints": Property("Map", description="Hints to Nova's scheduler (a server "
                                    "group's ``group``, ...)."),
        "tags": Property("List", description="The server's tags.", update_allowed=True),
        "flavor_update_policy": Property(
            "String", description="A flavor change resizes the server, or replaces it.",
            default="RESIZE", update_allowed=True,
            constraints=(AllowedValues(("RESIZE", "REPLACE")),)),
        "image_update_policy": Property(
            "String", description="Accepted (Heat's rebuild): an image change replaces the "
            "server here.", default="REBUILD", update_allowed=True,
            constraints=(AllowedValues(("REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL")),)),
        **bdm.PROPERTIES,
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

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return server_waits_for(name, definitions, properties_of)

    def _server_name(self, props):
        return props.get("name") or f"{self.context.stack_name}-{self.name}"

    @staticmethod
    def _networks(props):
        return [entry if isinstance(entry, dict) else {"network": entry}
                for entry in props.get("networks") or []]

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        bdm.check_bootable(props, resource_name=resource_name)
        return props

    @classmethod
    def needs_replacement_for(cls, old_properties, new_properties, changed):
        if "flavor" in changed and new_properties.get("flavor_update_policy") == "REPLACE":
            return True
        return super().needs_replacement_for(old_properties, new_properties, changed)

    def handle_create(self):
        props = self.properties
        devices = bdm.block_devices(props)
        options = {k: props[k] for k in SERVER_OPTIONS if props.get(k) is not None}
        self.physical_id = _cloud_call(
            self.cloud.server_create, project_id=self.context.project_id,
            name=self._server_name(props), image=props.get("image") or "",
            flavor=props["flavor"], **({"block_devices": devices} if devices else {}),
            metadata=props.get("metadata"), user_data=props.get("user_data"),
            networks=self._networks(props), key_name=props.get("key_name"),
            **({"options": options} if options else {}),
            security_groups=props.get("security_groups") or None,
            creation_key=self.creation_key, find_first=self.creation_key_reused)
        return self._await("ACTIVE")

    def _await(self, *wanted):
        return await_status("server", self.physical_id, wanted=wanted,
                            failed=("ERROR", "DELETED"))

    # The server as the engine's list call described it (attributes need no server_get).
    listed = None

    def _expect(self, cookie, *wanted):
        # The poll round passes the status it read for many servers at once.
        status = observed_status(cookie) or _cloud_call(self.cloud.server_status,
                                                        self.physical_id)
        self.listed = observed_object(cookie)
        if status == "ERROR":
            server = self.listed or _cloud_call(self.cloud.server_get, self.physical_id) or {}
            fault = server.get("fault") or "Unknown"
            raise ResourceFailure(f'Went to status ERROR due to "Message: {fault}"')
        if status == "DELETED":
            raise ResourceFailure(f"The server {self.physical_id} could not be found "
                                  f"(deleted outside heatweb)")
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
        if "tags" in changed:
            fields["tags"] = new_properties.get("tags") or []
        if "admin_pass" in changed and new_properties.get("admin_pass"):
            fields["admin_pass"] = new_properties["admin_pass"]
        if not _cloud_call(self._updated_if_there, fields):
            raise ResourceFailure(f"The server {self.physical_id} could not be found "
                                  f"(deleted outside heatweb)")
        self.listed = self._shown_after(fields, changed)
        if "networks" in changed:
            self._update_networks(new_properties)
        self.properties = new_properties
        return {"resize": "flavor" in fields}

    def _update_networks(self, new_properties):
        def find(kind, name_or_id):
            try:
                return _cloud_call(self.cloud.object_find, kind, name_or_id)
            except ResourceFailure:  # gone: matches no interface
                return name_or_id

        detach, attach = server_networks.plan(
            [server_networks.entry_ids(e, find) for e in self._networks(self.properties)],
            [server_networks.entry_ids(e, find) for e in self._networks(new_properties)],
            _cloud_call(self.cloud.server_interfaces, self.physical_id))
        for port in detach:
            _cloud_call(self.cloud.server_port_detach, self.physical_id, port)
        for entry in attach:
            _cloud_call(self.cloud.server_interface_attach, self.physical_id, entry,
                        security_groups=new_properties.get("security_groups") or None)

    def check_update_complete(self, cookie):
        if not (cookie or {}).get("resize"):
            return True
        if _cloud_call(self.cloud.server_status, self.physical_id) == "VERIFY_RESIZE":
            _cloud_call(self.cloud.server_confirm_resize, self.physical_id)
            return False
        return self._expect(None, "ACTIVE")

    def prepare_for_replace(self):
        """Detach the ports given in ``networks``: the replacement boots on them."""
        if not self.physical_id:
            return
        for entry in self._networks(self.properties):
            if entry.get("port"):
                _cloud_call(self.cloud.server_port_detach, self.physical_id, entry["port"])

    # What an update changes in the server as Nova shows it, and nothing else: after
    # an update of only these, its attributes are the stored ones with the new values
    # (no read of the server; a direct script reads none either).
    SHOWN_AS_SENT = {"name": "name", "metadata": "metadata", "tags": "tags",
                     "admin_pass": None}

    def _shown_after(self, fields, changed):
        show = self.stored_attributes.get("show")
        if not changed or not set(changed) <= set(self.SHOWN_AS_SENT) or \
                not isinstance(show, dict):
            return None
        return {**show, **{key: fields[prop] for prop, key in self.SHOWN_AS_SENT.items()
                           if key and prop in fields}}

    def _updated_if_there(self, fields):
        """Update the server's ``fields``; False when it is gone. The update itself finds
        a server gone (no read first); with no fields to update, a read does."""
        try:
            if fields:
                self.cloud.server_update(self.physical_id, creation_key=self.creation_key,
                                         **fields)
                return True
            return self.cloud.server_get(self.physical_id) is not None
        except CloudNotFound:
            return False

    def handle_delete(self):
        if self.physical_id:
            # Ports made for networks entries naming a subnet go with the server. They are
            # looked for always: an update from a subnet entry to its network keeps the
            # port made for it (Heat's swap_subnet_network test left a subnet in use).
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

    def _lift_own_lock(self):
        """Under a stack lock whose mode allows suspend and resume: lift the physical lock
        the stack lock put on the server (the lock, taken again after, puts it back)."""
        if self.data.get(LOCK_SAVED) is False and self.data.get(PHYSICAL_LOCK_FLAG):
            _cloud_call(self.cloud.server_unlock, self.physical_id)
            self.data[PHYSICAL_LOCK_FLAG] = False

    def handle_suspend(self):
        self._lift_own_lock()
        _cloud_call(self.cloud.server_suspend, self.physical_id)
        return self._await("SUSPENDED")

    def check_suspend_complete(self, cookie):
        return self._expect(cookie, "SUSPENDED")

    def handle_resume(self):
        self._lift_own_lock()
        _cloud_call(self.cloud.server_resume, self.physical_id)
        return self._await("ACTIVE")

    def check_resume_complete(self, cookie):
        return self._expect(cookie, "ACTIVE")

    def handle_check(self):
        if _cloud_call(self.cloud.server_get, self.physical_id) is None:
            raise ResourceFailure(f"Server {self.physical_id} does not exist")

    def check_check_complete(self, cookie):
        return self._expect(cookie, "ACTIVE", "SUSPENDED")

    def handle_snapshot(self):
        """An image of the server (Nova createImage); a restore boots from it."""
        image_id = _cloud_call(self.cloud.server_image_create, self.physical_id,
                               name=f"{self.context.stack_name}-{self.name}-snapshot")
        self.data["snapshot_image_id"] = image_id
        return {"image": image_id}

    def check_snapshot_complete(self, cookie):
        image = _cloud_call(self.cloud.image_get, cookie["image"])
        if image is None or image["status"] in ("killed", "deleted"):
            raise ResourceFailure(f"Image {cookie['image']} went to status "
                                  f"{image['status'] if image else 'deleted'}")
        return image["status"] == "active"

    def handle_delete_snapshot(self, resource_data):
        image_id = (resource_data or {}).get("snapshot_image_id")
        if image_id and _cloud_call(self.cloud.image_get, image_id) is not None:
            _cloud_call(self.cloud.image_delete, image_id)

    @classmethod
    def restore_properties(cls, properties, resource_data):
        image_id = (resource_data or {}).get("snapshot_image_id")
        return {**properties, "image": image_id} if image_id else properties

    def handle_adopt(self):
        if _cloud_call(self.cloud.server_get, self.physical_id) is None:
            raise ResourceFailure(f"The server {self.physical_id} could not be found")
        return None

    def handle_lock(self):
        server = _cloud_call(self.cloud.server_get, self.physical_id)
        if server is None:
            raise ResourceFailure(f"Server {self.physical_id} does not exist")
        if LOCK_SAVED not in self.data:
            self.data[LOCK_SAVED] = bool(server["locked"])
        if not server["locked"]:
            reason = f"heatweb stack {self.context.stack_name} locked"
            if self.context.lock_reason:
                reason += f": {self.context.lock_reason}"
            _cloud_call(self.cloud.server_lock, self.physical_id, reason=reason[:255])
            self.lock_note = f"Server {self.physical_id} locked (\"{reason[:255]}\")"
        else:
            self.lock_note = (f"Server {self.physical_id} was already locked before the "
                              f"stack lock; left locked")

    def physical_lock_state(self):
        server = _cloud_call(self.cloud.server_get, self.physical_id) if self.physical_id \
            else None
        if server is None:
            raise ResourceFailure(f"Server {self.physical_id or self.name} does not exist")
        return {"object": f"server {self.physical_id}", "locked": bool(server["locked"]),
                "detail": server.get("locked_reason") or ""}

    def handle_unlock(self):
        was_locked = self.data.pop(LOCK_SAVED, False)
        if self.physical_id and not was_locked:
            _cloud_call(self.cloud.server_unlock, self.physical_id)
            self.lock_note = (f"Server {self.physical_id} unlocked (restored: it was not "
                              f"locked before the stack lock)")
        elif self.physical_id:
            self.lock_note = (f"Server {self.physical_id} left locked (restored: it was "
                              f"locked before the stack lock)")

    def physical_state(self):
        server = self.cloud.server_get(self.physical_id) if self.physical_id else None
        if server is None:
            return {"status": "not found"}
        return {"status": server["status"], "locked": server["locked"],
                "lock reason": server.get("locked_reason") or "—"}

    physical_lock_word = "locked"

    def drift_pairs(self):
        server = _cloud_call(self.cloud.server_get, self.physical_id) if self.physical_id \
            else None
        if server is None:
            raise ResourceFailure(f"Server {self.physical_id or self.name} does not exist")
        props = self.properties
        return {"name": (self._server_name(props), server["name"]),
                "flavor": (props["flavor"], server["flavor"]),
                # compared as Nova keeps them (a number in the template is its JSON there)
                "metadata": (nova_metadata(props.get("metadata")),
                             nova_metadata(server.get("metadata"))),
                # Nova keeps tags as a set
                "tags": (sorted(props.get("tags") or []), sorted(server.get("tags") or []))}

    def lock_held_before(self):
        return self.data.get(LOCK_SAVED)

    def attributes(self):
        """Every attribute from one ``server_get`` (not one call per attribute), or from the
        engine's list call that saw the server ready."""
        server = self.listed or (self.cloud.server_get(self.physical_id)
                                 if self.physical_id and self.context else None)
        if server is None:
            return {name: None for name in self.attributes_schema}
        networks = {net: [a["addr"] for a in addrs]
                    for net, addrs in (server.get("addresses") or {}).items()}
        first = next((addrs[0] for addrs in networks.values() if addrs), "")
        ids = self._network_ids(networks)
        return {"name": server["name"], "first_address": first, "accessIPv4": first,
                "addresses": with_network_ids(server.get("addresses") or {}, ids),
                "networks": with_network_ids(networks, ids),
                "instance_name": f"instance-{server['id'][:8]}", "show": server}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)

    def _network_ids(self, networks):
        """``{network name: id}`` of the networks a server's addresses are keyed by (a
        name no network or several have is left out, as Heat's ``_extend_networks``)."""
        ids = {}
        for name in networks:
            try:
                ids[name] = self.cloud.object_find("network", name)
            except CloudError:  # not found, or not unique
                continue
        return ids


def with_network_ids(by_name, ids):
    """``by_name`` with each network's entry also under its id, as Heat's server gives its
    ``addresses`` and ``networks`` attributes (a template reads them by id or name)."""
    out = dict(by_name)
    for name, network_id in ids.items():
        out.setdefault(network_id, by_name[name])
    return out
