"""Servers (``OS::Nova::Server``) of the cloud: simulated by default, or Nova.

The plugins talk to the cloud driver only (``stacks.cloud``).
"""
from django.conf import settings

from heatweb.stack_users import credentials as stack_user_credentials
from stacks.cloud.driver import NETWORK_IDS, SERVER_OPTIONS, CloudError, CloudNotFound, \
    nova_metadata
from stacks.resources import block_devices as bdm
from stacks.resources import server_networks
from stacks.resources.server_user_data import cfn_metadata_server_url, nova_user_data
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG
from stacks.resources.base import ResourceFailure, ResourcePlugin, await_status, \
    observed_object, observed_status
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.implicit_dependencies import server_waits_for
from stacks.resources import stack_user
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property

LOCK_SAVED = "lock_saved_locked"  # plugin data: was the server locked before the stack lock?
METADATA_QUEUE = "metadata_queue_id"  # plugin data: a ZAQAR_MESSAGE server's queue (Heat's key)
METADATA_QUEUE_PROJECT = "metadata_queue_project"  # its project without Keystone
METADATA_TTL = 3600  # Heat's ZaqarClientPlugin.DEFAULT_TTL


def zaqar_collector(data):
    """os-collect-config's ``zaqar`` settings of a ZAQAR_MESSAGE server (Heat's
    ``_populate_deployments_metadata``): its stack user's credentials and its queue; without
    Keystone, the queue and its project only."""
    if stack_user.USER_ID in data:
        creds = stack_user_credentials(
            data[stack_user.USER_ID], stack_user.password(data), data[stack_user.PROJECT],
            username="")
        return {"user_id": creds["user_id"], "password": creds["password"],
                "auth_url": creds["auth_url"], "project_id": creds["project_id"],
                "queue_id": data[METADATA_QUEUE], "region_name": creds["region_name"]}
    return {"project_id": data.get(METADATA_QUEUE_PROJECT), "queue_id": data[METADATA_QUEUE]}


def cfn_collector(stack_name, resource_name, data):
    """os-collect-config's ``cfn`` settings of a POLL_SERVER_CFN server (Heat's
    ``_populate_deployments_metadata``): heatweb's CloudFormation metadata URL (Heat's
    ``heat_metadata_server_url`` with ``/v1/``: ``cfn_metadata_server_url``), the server's
    EC2 key pair, its stack and the path of its metadata."""
    return {"metadata_url": cfn_metadata_server_url(),
            "access_key_id": data[stack_user.ACCESS_KEY],
            "secret_access_key": stack_user.secret_key(data), "stack_name": stack_name,
            "path": f"{resource_name}.Metadata"}


def collect_config(collector, settings):
    """A server's ``os-collect-config`` metadata as Heat writes it: its collector first,
    then ``local``, with the collector's settings under its name."""
    return {"collectors": [collector, "local"], collector: settings}


def push_metadata(cloud, data, metadata):
    """Post a ZAQAR_MESSAGE server's whole metadata to its queue, as its stack user (Heat
    pushes it at the server's create and at each change of its deployments)."""
    if data.get(METADATA_QUEUE):
        cloud = cloud.for_stack_user(data[stack_user.USER_ID], stack_user.password(data),
                                     data[stack_user.PROJECT]) \
            if data.get(stack_user.USER_ID) else cloud
        _cloud_call(cloud.queue_post, data[METADATA_QUEUE], [metadata], ttl=METADATA_TTL)


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
    cloudinit_user = None  # the user a HEAT_CFNTOOLS server's cloud-init makes
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
            default=settings.HEATWEB["DEFAULT_SOFTWARE_CONFIG_TRANSPORT"],
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

    @property
    def cloud_calls_only(self):
        """A ZAQAR_MESSAGE or POLL_SERVER_CFN server's create makes a stack user (and reads
        the server's row) first."""
        return self._transport() not in ("ZAQAR_MESSAGE", "POLL_SERVER_CFN")

    def _transport(self):
        """The software config transport of a SOFTWARE_CONFIG server, else None."""
        props = self.properties or {}
        if props.get("user_data_format") != "SOFTWARE_CONFIG":
            return None
        return props.get("software_config_transport")

    def _zaqar_message(self):
        return self._transport() == "ZAQAR_MESSAGE"

    @classmethod
    def shown_metadata(cls, res):
        """A ZAQAR_MESSAGE server's metadata has os-collect-config's ``zaqar`` settings, as
        Heat's (``collectors: [zaqar, local]``); a POLL_SERVER_CFN one its ``cfn``
        settings (``collectors: [cfn, local]``)."""
        shown = super().shown_metadata(res)
        data = res.plugin_data or {}
        if data.get(METADATA_QUEUE):
            return {**shown, "os-collect-config": collect_config("zaqar", zaqar_collector(data))}
        if data.get(stack_user.ACCESS_KEY):
            return {**shown, "os-collect-config": collect_config(
                "cfn", cfn_collector(res.stack.name, res.name, data))}
        return shown

    def _zaqar_message_start(self):
        """Heat's ``_create_transport_credentials`` and first metadata push: a stack user
        (Keystone mode), a queue named by the server's physical name, and the metadata
        posted there."""
        stack_user.ensure_user(self)
        self.data[METADATA_QUEUE] = stack_user.physical_name(self)
        self.data.setdefault(METADATA_QUEUE_PROJECT, self.context.project_id)
        # The template's metadata (Heat's metadata_get(True)): stored once the create is done
        metadata = {**(self.metadata or {}), "deployments": [],
                    "os-collect-config": collect_config("zaqar", zaqar_collector(self.data))}
        push_metadata(self.context.cloud, self.data, metadata)

    def _boot_metadata(self):
        """The metadata a SOFTWARE_CONFIG server's user data carries (``cfn-init-data``):
        no deployments yet, and a POLL_SERVER_CFN server's ``os-collect-config``, so that
        its collector knows where to poll from its first boot (as Heat's)."""
        metadata = {**(self.metadata if isinstance(self.metadata, dict) else {}),
                    "deployments": []}
        if self._transport() == "POLL_SERVER_CFN":
            metadata["os-collect-config"] = collect_config("cfn", cfn_collector(
                self.context.stack_name, self.name, self.data))
        return metadata

    def handle_create(self):
        props = self.properties
        if self._zaqar_message() and not self.data.get(METADATA_QUEUE):
            self._zaqar_message_start()
        if self._transport() == "POLL_SERVER_CFN":
            stack_user.ensure_keypair(self)
        devices = bdm.block_devices(props)
        options = {k: props[k] for k in SERVER_OPTIONS if props.get(k) is not None}
        self.physical_id = _cloud_call(
            self.cloud.server_create, project_id=self.context.project_id,
            name=self._server_name(props), image=props.get("image") or "",
            flavor=props["flavor"], **({"block_devices": devices} if devices else {}),
            metadata=props.get("metadata"), user_data=self._user_data(props),
            networks=self._networks(props), key_name=props.get("key_name"),
            **({"options": options} if options else {}),
            security_groups=props.get("security_groups") or None,
            creation_key=self.creation_key, find_first=self.creation_key_reused)
        return self._await("ACTIVE")

    def _user_data(self, props):
        """Heat's ``build_userdata``: ``HEAT_CFNTOOLS`` gives cfn-init the resource's
        template metadata (``AWS::CloudFormation::Init``), ``SOFTWARE_CONFIG`` the
        server's metadata at its create (``_boot_metadata``)."""
        return nova_user_data(props, project_id=self.context.project_id,
                              metadata=self.metadata, instance_user=self.cloudinit_user,
                              boot_metadata=self._boot_metadata())

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
        self.listed = self.shown_as_sent = self._shown_after(fields, changed)
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
        if self.data.get(METADATA_QUEUE):  # Heat's _delete_queue, then the stack user
            _cloud_call(stack_user.user_cloud(self).object_delete, "queue",
                        self.data.pop(METADATA_QUEUE))
        stack_user.delete_user(self)
        if self.physical_id:
            # Ports made for networks entries naming a subnet go with the server. They are
            # looked for always (an update from a subnet entry to its network keeps the
            # port made for it: Heat's swap_subnet_network test left a subnet in use), with
            # one read for the task's server deletes.
            internal = self.context.shared_read("internal ports",
                                                self.cloud.internal_ports_by_server)
            _cloud_call(self.cloud.server_delete, self.physical_id,
                        internal_ports=internal.get(self.physical_id, []))
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

    shown_as_sent = None  # after an update Nova shows as sent (_shown_after)

    def attributes(self):
        """Every attribute from one ``server_get`` (not one call per attribute), or from the
        engine's list call that saw the server ready."""
        if self.shown_as_sent is not None and self.stored_attributes.get("show"):
            # Only its name, metadata, tags or password changed: the addresses and
            # networks stored stand (no look-up of their networks again).
            return {**self.stored_attributes, "name": self.shown_as_sent["name"],
                    "show": self.shown_as_sent}
        server = self.listed or (self.cloud.server_get(self.physical_id)
                                 if self.physical_id and self.context else None)
        if server is None:
            return {name: None for name in self.attributes_schema}
        server = dict(server)
        known = server.pop(NETWORK_IDS, None) or {}  # from the ports the driver read
        networks = {net: [a["addr"] for a in addrs]
                    for net, addrs in (server.get("addresses") or {}).items()}
        first = next((addrs[0] for addrs in networks.values() if addrs), "")
        ids = self._network_ids(networks, known)
        return {"name": server["name"], "first_address": first, "accessIPv4": first,
                "addresses": with_network_ids(server.get("addresses") or {}, ids),
                "networks": with_network_ids(networks, ids),
                "instance_name": f"instance-{server['id'][:8]}", "show": server}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)

    def _network_ids(self, networks, known=None):
        """``{network name: id}`` of the networks a server's addresses are keyed by (a
        name no network or several have is left out, as Heat's ``_extend_networks``);
        ``known``: those the driver found from the addresses' ports (no look-up)."""
        ids = {}
        for name in networks:
            found = (known or {}).get(name) or self._network_id(name)
            if found is not None:
                ids[name] = found
        return ids

    def _network_id(self, name):
        """The id of the one network named ``name`` (None: none or several), looked up once
        for the servers of one task (1,000 servers on one network: one look-up, not 1,000)."""
        def find():
            try:
                return self.cloud.object_find("network", name)
            except CloudError:  # not found, or not unique
                return None
        if self.context is None:
            return find()
        return self.context.shared_read(("network named", name), find)


def with_network_ids(by_name, ids):
    """``by_name`` with each network's entry also under its id, as Heat's server gives its
    ``addresses`` and ``networks`` attributes (a template reads them by id or name)."""
    out = dict(by_name)
    for name, network_id in ids.items():
        out.setdefault(network_id, by_name[name])
    return out
