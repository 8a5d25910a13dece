"""The OpenStack cloud: Nova servers, Glance images and generic objects through openstacksdk.

Chosen with ``HEATWEB_CLOUD=openstack``; the connection comes from
``clouds.yaml`` (``OS_CLOUD``, ``OS_CLIENT_CONFIG_FILE``) or the ``OS_*``
variables, as for OpenStack's own tools. Every refusal of the cloud becomes a
``CloudError`` carrying the cloud's own message and HTTP status; a refused
connection or a 502/503/504 is tried again with a short backoff first.

Every object this driver creates carries its ``creation_key`` (Nova metadata
``heatweb_creation_key``, Glance property of that name, Neutron tag
``heatweb-key:<key>``), and a create first looks for it.
"""
import base64
import logging
import re
import threading
import time
import weakref

import openstack
from django.conf import settings
from keystoneauth1 import exceptions as ksa_exceptions
from openstack import exceptions as os_exceptions
from openstack.compute.v2.server import Server

from heatweb.keystone import session_for_stack, session_for_user
from stacks.cloud.driver import CloudDriver, CloudError, CloudNotFound, nova_metadata
from stacks.cloud.openstack_actions import ActionCalls
from stacks.cloud.openstack_cinder import CinderCalls
from stacks.cloud.openstack_swift_barbican import SwiftBarbicanCalls
from stacks.cloud.openstack_objects import ObjectCalls, _is_id

log = logging.getLogger(__name__)

KEY_PROPERTY = "heatweb_creation_key"
# The description of a port heatweb makes for a server's networks entry naming a subnet
# (Nova takes no subnet): Heat's internal port, deleted with the server.
INTERNAL_PORT = "heatweb: port of a server's networks entry, deleted with the server"
TRANSIENT_STATUS = (502, 503, 504)
# Backoff between tries of a transient failure (seconds). Short: a call is
# made from a worker's poll, and a longer outage fails the resource.
RETRY_DELAYS = (0.5, 1.5, 3.0)
GONE_SERVER = ("DELETED", "SOFT_DELETED")
# How long an image's or flavor's id found by name is reused: a batch of
# creates looks each name up once, not once per server.
LOOKUP_SECONDS = 60
# The drivers acting through sessions (stack trusts): gone with their session.
_by_session = weakref.WeakKeyDictionary()
_by_session_lock = threading.Lock()


def cloud_message(error):
    """The cloud's own words for a failed call (no traceback, no URL)."""
    if isinstance(error, os_exceptions.HttpException):
        detail = (error.details or error.message or "").strip()
        return f"{detail} (HTTP {error.status_code})" if error.status_code else detail
    return str(error)


def _glance_words(body):
    """Glance's message in its HTML error page (the line after the title)."""
    text = [line.strip() for line in re.sub(r"<[^>]+>", "\n", body or "").splitlines()
            if line.strip()]
    return text[-1] if text else "Glance refused the request"


def call(function, *args, **kwargs):
    """Call the cloud; transient failures are tried again, refusals become CloudError."""
    for attempt, delay in enumerate((*RETRY_DELAYS, None)):
        try:
            return function(*args, **kwargs)
        except os_exceptions.ResourceNotFound as error:
            raise CloudNotFound(cloud_message(error)) from None
        except (ksa_exceptions.ConnectFailure, ksa_exceptions.ConnectTimeout,
                os_exceptions.HttpException) as error:
            status = getattr(error, "status_code", None)
            transient = status in TRANSIENT_STATUS or not isinstance(
                error, os_exceptions.HttpException)
            if not transient or delay is None:
                raise CloudError(cloud_message(error)) from None
            log.warning("cloud call %s failed (%s), try %d again in %ss",
                        getattr(function, "__name__", function), error, attempt + 2, delay)
            # A real wait, but bounded (5 s in all): cheaper than failing a resource.
            time.sleep(delay)
        except (os_exceptions.SDKException, ksa_exceptions.ClientException) as error:
            # (the second: Keystone refusing the session's token, e.g. an expired one)
            raise CloudError(cloud_message(error)) from None


def _gone(function, *args, **kwargs):
    """``function(...)``, or None when the object is gone (404)."""
    try:
        return call(function, *args, **kwargs)
    except CloudNotFound:
        return None


def _on_session(session):
    return OpenStackCloud(openstack.connection.Connection(
        session=session, region_name=settings.HEATWEB.get("OS_REGION") or None))


# Server create options (``driver.SERVER_OPTIONS``) named otherwise by openstacksdk.
SDK_SERVER_FIELDS = {"admin_pass": "admin_password"}


class OpenStackCloud(CinderCalls, SwiftBarbicanCalls, ActionCalls, ObjectCalls, CloudDriver):
    """A real OpenStack cloud (Nova, Glance, Neutron, Keystone) through openstacksdk."""

    @property
    def parallel_calls(self):
        """A batch's calls overlap: each is a round trip to a service (settings)."""
        return max(1, int(settings.HEATWEB.get("CLOUD_PARALLEL_CALLS", 8)))

    def __init__(self, connection=None):
        self._connection = connection
        self._lock = threading.Lock()
        self._ids = {}  # (finder, name) -> (id, found at), see _looked_up
        self._lookup_lock = threading.Lock()

    def _looked_up(self, finder, name):
        """The id of the image or flavor ``name`` (a name or an id), looked up at most once a
        ``LOOKUP_SECONDS``."""
        key = (finder.__name__, name)
        # One lookup at a time: a batch's creates, side by side in threads, would each
        # look the name up at once before the first had stored it.
        with self._lookup_lock:
            found = self._ids.get(key)
            if found is None or time.monotonic() - found[1] > LOOKUP_SECONDS:
                found = self._ids[key] = (call(finder, name, ignore_missing=False).id,
                                          time.monotonic())
            return found[0]

    def find_boot_source(self, kind, name_or_id):
        finder = self.conn.image.find_image if kind == "image" else \
            self.conn.compute.find_flavor
        return self._looked_up(finder, name_or_id)

    def for_stack(self, stack):
        """In Keystone mode, this cloud in the owner's project through the stack's trust.

        Outside it (or for a stack made without a trust) the driver's own
        credentials (``OS_CLOUD``) are used. One driver per trust session.
        """
        session = session_for_stack(stack) if stack is not None else None
        if session is None:
            return self
        with _by_session_lock:
            driver = _by_session.get(session)
            if driver is None:
                driver = _by_session[session] = _on_session(session)
            return driver

    def for_user(self, user, project_id):
        """In Keystone mode, this cloud as the caller (their token, in ``project_id``), as
        Heat looks a custom constraint's value up in the request's context: what the
        caller cannot see does not validate, whatever the driver's own credentials see."""
        session = session_for_user(user, project_id)
        return self if session is None else _on_session(session)

    def has_service(self, service_type):
        """Whether the catalog of the driver's own credentials has an endpoint of that type."""
        try:
            return bool(self.conn.session.get_endpoint(service_type=service_type,
                                                       interface="public"))
        except (ksa_exceptions.EndpointNotFound, ksa_exceptions.CatalogException):
            return False

    def has_network_extension(self, alias):
        """Neutron's extension list, asked at most once a ``LOOKUP_SECONDS``."""
        found = self._ids.get(("extensions",))
        if found is None or time.monotonic() - found[1] > LOOKUP_SECONDS:
            aliases = {ext.alias for ext in call(lambda: list(self.conn.network.extensions()))}
            found = self._ids[("extensions",)] = (aliases, time.monotonic())
        return alias in found[0]

    @property
    def conn(self):
        with self._lock:
            if self._connection is None:
                self._connection = openstack.connect(
                    cloud=settings.HEATWEB.get("OS_CLOUD") or None,
                    app_name=settings.HEATWEB.get("CLOUD_APP_NAME") or None)
            return self._connection

    # Servers -----------------------------------------------------------------------

    def _find_server_by_key(self, name, creation_key):
        for server in call(self.conn.compute.servers, details=True,
                           name=f"^{re.escape(name)}$"):
            if (server.metadata or {}).get(KEY_PROPERTY) != creation_key:
                continue
            if server.status == "ERROR":
                # The create this key belongs to failed in the cloud: clear
                # it away and build again.
                _gone(self.conn.compute.delete_server, server, ignore_missing=True)
                continue
            if server.status not in GONE_SERVER and server.task_state != "deleting":
                return server
        return None

    def _server_networks(self, networks, *, security_groups=None, made=None):
        """Nova's networks of Heat's entries; an entry naming a subnet gets a port made on it
        (its id appended to ``made``)."""
        if not networks:
            return self._default_networks()
        out = []
        for entry in networks:
            if entry.get("port"):  # an id goes to Nova as it is (Nova refuses a wrong one)
                out.append({"port": entry["port"] if _is_id(entry["port"]) else call(
                    self.conn.network.find_port, entry["port"], ignore_missing=False).id})
            elif entry.get("subnet"):
                port = self._internal_port(entry, security_groups)
                made.append(port)
                out.append({"port": port})
            else:
                nic = {"uuid": self._network_id(entry)} if entry.get("network") or \
                    entry.get("uuid") else {}
                if entry.get("fixed_ip"):
                    nic["fixed_ip"] = entry["fixed_ip"]
                out.append(nic)
        return out

    def _default_networks(self):
        """Nova's network for a server given none (Heat leaves it to Nova's default): the
        one network the project has or shares. With none, or several (where Nova would
        refuse: "Multiple possible networks found"), the server boots without a network,
        as heatweb always did: no auto-allocated topology in a cloud without routers."""
        project_id = self.conn.current_project_id
        visible = [net for net in call(lambda: list(self.conn.network.networks()))
                   if net.is_shared or (net.project_id == project_id
                                        and not net.is_router_external)]
        return [{"uuid": visible[0].id}] if len(visible) == 1 else "none"

    def _network_id(self, entry):
        """A network given by id is looked at once a ``LOOKUP_SECONDS`` (a group's servers
        share theirs); a name is looked up each time (a network of that name may have been
        made again meanwhile)."""
        value = entry.get("network") or entry.get("uuid")
        if _is_id(value):
            return self._looked_up(self.conn.network.find_network, value)
        return call(self.conn.network.find_network, value, ignore_missing=False).id

    def _internal_port(self, entry, security_groups):
        subnet = call(self.conn.network.find_subnet, entry["subnet"], ignore_missing=False)
        fixed = {"subnet_id": subnet.id, **({"ip_address": entry["fixed_ip"]}
                                            if entry.get("fixed_ip") else {})}
        fields = {"network_id": subnet.network_id, "fixed_ips": [fixed],
                  "description": INTERNAL_PORT}
        if security_groups:
            fields["security_group_ids"] = [
                call(self.conn.network.find_security_group, group, ignore_missing=False).id
                for group in security_groups]
        return call(self.conn.network.create_port, **fields).id

    def _delete_internal_ports(self, port_ids):
        for port_id in port_ids:
            _gone(self.conn.network.delete_port, port_id, ignore_missing=True)

    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True,
                      block_devices=None, options=None, security_groups=None):
        if creation_key and find_first:
            found = self._find_server_by_key(name, creation_key)
            if found is not None:
                return found.id
        made = []
        fields = {"name": name, "networks": self._server_networks(
                      networks, security_groups=security_groups, made=made),
                  "metadata": {**nova_metadata(metadata),
                               **({KEY_PROPERTY: creation_key} if creation_key else {})}}
        if key_name:
            fields["key_name"] = key_name
        for option, value in (options or {}).items():
            if value is not None:
                fields[SDK_SERVER_FIELDS.get(option, option)] = value
        if security_groups:  # Nova puts them on the ports it makes (names or ids)
            fields["security_groups"] = [{"name": group} for group in security_groups]
        if user_data:
            fields["user_data"] = base64.b64encode(user_data.encode()).decode()
        finders = {"flavor_id": (self.conn.compute.find_flavor, flavor)}
        if image:
            finders["image_id"] = (self.conn.image.find_image, image)
        if block_devices:
            fields["block_device_mapping"] = self._block_devices(block_devices)
        try:
            return self._create_server(fields, finders)
        except CloudError:
            self._delete_internal_ports(made)
            raise

    def _create_server(self, fields, finders):
        try:
            return call(self.conn.compute.create_server, **fields, **{
                field: self._looked_up(*finder) for field, finder in finders.items()}).id
        except CloudError as error:
            # An id looked up a while ago may be stale (an image replaced under its
            # name): Nova refuses it ("Image ... could not be found"); look again once.
            stale = [(f.__name__, n) for f, n in finders.values()]
            if not ("image" in str(error).lower() or "flavor" in str(error).lower()) or \
                    not any(key in self._ids for key in stale):
                raise
            for key in stale:
                self._ids.pop(key, None)
            return call(self.conn.compute.create_server, **fields, **{
                field: self._looked_up(*finder) for field, finder in finders.items()}).id

    def _block_devices(self, devices):
        """Nova's mapping v2 with image names replaced by ids (volumes and snapshots by id)."""
        out = []
        for entry in devices:
            entry = {k: v for k, v in entry.items() if v is not None}
            if entry.get("source_type") == "image" and entry.get("uuid"):
                entry["uuid"] = self._looked_up(self.conn.image.find_image, entry["uuid"])
            out.append(entry)
        return out

    def _ports_by_address(self, server_ids):
        """``{(server id, ip, mac): port id}`` of the servers' ports: Heat's ``port`` in each
        of a server's ``addresses`` (one Neutron list)."""
        ports = call(lambda: list(self.conn.network.ports(device_id=server_ids[0]))
                     if len(server_ids) == 1 else list(self.conn.network.ports()))
        return {(port.device_id, ip["ip_address"], port.mac_address): port.id
                for port in ports if port.device_id in server_ids
                for ip in port.fixed_ips or []}

    @staticmethod
    def _addresses(server, ports):
        return {net: [{**addr, "port": ports.get(
                    (server.id, addr.get("addr"), addr.get("OS-EXT-IPS-MAC:mac_addr")))}
                      for addr in addrs]
                for net, addrs in (server.addresses or {}).items()}

    @classmethod
    def _server_dict(cls, server, ports):
        flavor = server.flavor or {}
        image = server.image or {}
        fault = server.fault or {}
        return {"id": server.id, "name": server.name, "status": server.status,
                "image": image.get("id") if isinstance(image, dict) else image,
                "flavor": flavor.get("original_name") or flavor.get("id"),
                # Our creation key is ours, not the user's metadata (nor drift).
                "metadata": {k: v for k, v in (server.metadata or {}).items()
                             if k != KEY_PROPERTY},
                "addresses": cls._addresses(server, ports),
                "locked": bool(server.is_locked), "locked_reason": server.locked_reason,
                "fault": (fault.get("message") or "").strip() or None if server.status == "ERROR" else None,
                "key_name": server.key_name, "task_state": server.task_state,
                "created": server.created_at, "tags": list(server.tags or []),
                "config_drive": "True" if server.has_config_drive else "",
                "volumes_attached": [dict(v) for v in server.attached_volumes or []],
                "availability_zone": server.availability_zone}

    def server_get(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        if server is None or server.status in GONE_SERVER:
            return None
        return self._server_dict(server, self._ports_by_address([server.id]))

    def server_status(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        return "DELETED" if server is None or server.status in GONE_SERVER else server.status

    def server_list(self, server_ids):
        """One list of the project's servers (Nova ``GET /servers/detail``) per call."""
        wanted = set(server_ids)
        if not wanted:
            return {}
        servers = [server for server in call(lambda: list(self.conn.compute.servers(details=True)))
                   if server.id in wanted and server.status not in GONE_SERVER]
        # A server still building is waited for again: its attributes (its addresses'
        # ports) are read when it is done, not on every round of the wait.
        settled = [server.id for server in servers if server.status != "BUILD"]
        ports = self._ports_by_address(settled) if settled else {}
        return {server.id: self._server_dict(server, ports) for server in servers}

    def server_update(self, server_id, *, creation_key=None, **fields):
        if creation_key and set(fields) == {"metadata"}:
            # Nova replaces the whole set (PUT), our key with it: no read of the server
            # first; a server gone is Nova's 404.
            wanted = {**nova_metadata(fields["metadata"] or {}), KEY_PROPERTY: creation_key}
            call(Server.new(id=server_id).replace_metadata, self.conn.compute, wanted)
            return
        server = self._existing_server(server_id)
        if "name" in fields:
            call(self.conn.compute.update_server, server, name=fields["name"])
        if "metadata" in fields:
            self._replace_metadata(server, fields["metadata"] or {})
        if "tags" in fields:
            call(server.set_tags, self.conn.compute, list(fields["tags"] or []))
        if fields.get("admin_pass"):
            call(self.conn.compute.change_server_password, server, fields["admin_pass"])
        if "flavor" in fields:
            flavor = call(self.conn.compute.find_flavor, fields["flavor"], ignore_missing=False)
            call(self.conn.compute.resize_server, server, flavor.id)

    def _replace_metadata(self, server, metadata):
        ours = {k: v for k, v in (server.metadata or {}).items() if k == KEY_PROPERTY}
        wanted = {**nova_metadata(metadata), **ours}
        stale = [k for k in (server.metadata or {}) if k not in wanted]
        if stale:
            call(self.conn.compute.delete_server_metadata, server, stale)
        call(self.conn.compute.set_server_metadata, server, **wanted)

    def server_confirm_resize(self, server_id):
        call(self.conn.compute.confirm_server_resize, server_id)

    def _existing_server(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        if server is None:
            raise CloudNotFound(f"Instance {server_id} could not be found. (HTTP 404)")
        return server

    def server_delete(self, server_id):
        # Neutron refuses the owner the delete of a port bound to a server: detached
        # first (server_port_detach then deletes a port of ours).
        for port in call(lambda: list(self.conn.network.ports(device_id=server_id))):
            if port.description == INTERNAL_PORT:
                self.server_port_detach(server_id, port.id)
        _gone(self.conn.compute.delete_server, server_id, ignore_missing=True)

    def server_interfaces(self, server_id):
        return [{"port": port.id, "network": port.network_id,
                 "subnets": [ip["subnet_id"] for ip in port.fixed_ips or []],
                 "fixed_ips": [ip["ip_address"] for ip in port.fixed_ips or []]}
                for port in call(lambda: list(self.conn.network.ports(device_id=server_id)))]

    def server_interface_attach(self, server_id, entry, *, security_groups=None):
        server = self._existing_server(server_id)
        if entry.get("port"):
            fields = {"port_id": entry["port"]}
        elif entry.get("subnet"):
            fields = {"port_id": self._internal_port(entry, security_groups)}
        else:
            fields = {"net_id": self._network_id(entry), **(
                {"fixed_ips": [{"ip_address": entry["fixed_ip"]}]} if entry.get("fixed_ip")
                else {})}
        try:
            call(self.conn.compute.create_server_interface, server, **fields)
        except CloudError:
            if entry.get("subnet"):
                self._delete_internal_ports([fields["port_id"]])
            raise

    # The action goes to the id as it is (no read first): a server gone is Nova's 404.
    def server_suspend(self, server_id):
        call(self.conn.compute.suspend_server, server_id)

    def server_resume(self, server_id):
        call(self.conn.compute.resume_server, server_id)

    def server_reboot(self, server_id):
        call(self.conn.compute.reboot_server, self._existing_server(server_id), "SOFT")

    def server_image_create(self, server_id, *, name):
        """Nova's createImage: the image starts queued/saving in Glance, then goes active
        (the plugin waits on ``image_get``); the id comes from Nova's answer, so no Glance
        read races the new image."""
        server = self._existing_server(server_id)
        return call(server.create_image, self.conn.compute, name)

    def server_lock(self, server_id, reason=None):
        call(self.conn.compute.lock_server, self._existing_server(server_id),
             locked_reason=reason)

    def server_unlock(self, server_id):
        call(self.conn.compute.unlock_server, self._existing_server(server_id))

    def server_port_detach(self, server_id, port_id):
        port = _gone(self.conn.network.get_port, port_id)
        if port is None or port.device_id != server_id:
            return  # gone, or not (any more) this server's
        if _gone(self.conn.compute.get_server, server_id) is not None:
            try:
                call(self.conn.compute.delete_server_interface, port_id, server=server_id)
            except CloudNotFound:
                pass
        # Nova detaches asynchronously; as Heat does, wait (bounded) until Neutron
        # shows the port free, or its replacement's boot fails "port in use".
        deadline = time.monotonic() + settings.HEATWEB["PORT_DETACH_SECONDS"]
        while time.monotonic() < deadline:
            port = _gone(self.conn.network.get_port, port_id)
            if port is None or not port.device_id:
                if port is not None and port.description == INTERNAL_PORT:
                    self._delete_internal_ports([port_id])
                return
            time.sleep(0.5)
        raise CloudError(f"Port {port_id} was not detached from server {server_id} within "
                         f"{settings.HEATWEB['PORT_DETACH_SECONDS']} s")

    # Images ------------------------------------------------------------------------

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
        _gone(self.conn.image.delete_image, image, ignore_missing=True)
        raise CloudError(f"{_glance_words(response.text)} (HTTP {response.status_code})")

    def image_get(self, image_id):
        image = _gone(self.conn.image.get_image, image_id)
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
        image = _gone(self.conn.image.get_image, image_id)
        if image is None:
            raise CloudError(f"No image found with ID {image_id} (HTTP 404)")
        renamed = {"protected": "is_protected"}
        changes = {renamed.get(k, k): v for k, v in fields.items()
                   if v is not None and k not in ("location",)}
        if changes:
            call(self.conn.image.update_image, image, **changes)

    def image_delete(self, image_id):
        _gone(self.conn.image.delete_image, image_id, ignore_missing=True)

    def image_protect(self, image_id, protected):
        self.image_update(image_id, protected=bool(protected))
