"""The OpenStack cloud: Nova servers, Glance images and Neutron objects through openstacksdk.

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

from heatweb.keystone import session_for_stack
from stacks.cloud.driver import CloudDriver, CloudError, CloudNotFound
from stacks.cloud.openstack_network import NetworkCalls

log = logging.getLogger(__name__)

KEY_PROPERTY = "heatweb_creation_key"
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
        except os_exceptions.SDKException as error:
            raise CloudError(cloud_message(error)) from None


def _gone(function, *args, **kwargs):
    """``function(...)``, or None when the object is gone (404)."""
    try:
        return call(function, *args, **kwargs)
    except CloudNotFound:
        return None


class OpenStackCloud(NetworkCalls, CloudDriver):
    """A real OpenStack cloud (Nova, Glance, Neutron) through openstacksdk."""

    @property
    def parallel_calls(self):
        """A batch's calls overlap: each is a round trip to a service (settings)."""
        return max(1, int(settings.HEATWEB.get("CLOUD_PARALLEL_CALLS", 8)))

    def __init__(self, connection=None):
        self._connection = connection
        self._lock = threading.Lock()
        self._ids = {}  # (finder, name) -> (id, found at), see _looked_up

    def _looked_up(self, finder, name):
        """The id of the image or flavor ``name`` (a name or an id), looked up at most once a
        ``LOOKUP_SECONDS``."""
        key = (finder.__name__, name)
        found = self._ids.get(key)
        if found is None or time.monotonic() - found[1] > LOOKUP_SECONDS:
            found = self._ids[key] = (call(finder, name, ignore_missing=False).id,
                                      time.monotonic())
        return found[0]

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
                driver = _by_session[session] = OpenStackCloud(openstack.connection.Connection(
                    session=session, region_name=settings.HEATWEB.get("OS_REGION") or None))
            return driver

    @property
    def conn(self):
        with self._lock:
            if self._connection is None:
                self._connection = openstack.connect(
                    cloud=settings.HEATWEB.get("OS_CLOUD") or None)
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

    def _server_networks(self, networks):
        if not networks:
            return "none"  # no auto-allocated topology in a cloud without routers
        out = []
        for entry in networks:
            if entry.get("port"):
                out.append({"port": call(self.conn.network.find_port, entry["port"],
                                         ignore_missing=False).id})
                continue
            nic = {}
            name = entry.get("network") or entry.get("uuid")
            if entry.get("subnet") and not name:
                name = call(self.conn.network.find_subnet, entry["subnet"],
                            ignore_missing=False).network_id
            if name:
                nic["uuid"] = call(self.conn.network.find_network, name,
                                   ignore_missing=False).id
            if entry.get("fixed_ip"):
                nic["fixed_ip"] = entry["fixed_ip"]
            out.append(nic)
        return out

    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True):
        if creation_key and find_first:
            found = self._find_server_by_key(name, creation_key)
            if found is not None:
                return found.id
        fields = {"name": name, "networks": self._server_networks(networks),
                  "metadata": {**(metadata or {}),
                               **({KEY_PROPERTY: creation_key} if creation_key else {})}}
        if key_name:
            fields["key_name"] = key_name
        if user_data:
            fields["user_data"] = base64.b64encode(user_data.encode()).decode()
        finders = {"image_id": (self.conn.image.find_image, image),
                   "flavor_id": (self.conn.compute.find_flavor, flavor)}
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

    @staticmethod
    def _server_dict(server):
        flavor = server.flavor or {}
        image = server.image or {}
        fault = server.fault or {}
        return {"id": server.id, "name": server.name, "status": server.status,
                "image": image.get("id") if isinstance(image, dict) else image,
                "flavor": flavor.get("original_name") or flavor.get("id"),
                "metadata": dict(server.metadata or {}), "addresses": server.addresses or {},
                "locked": bool(server.is_locked), "locked_reason": server.locked_reason,
                "fault": (fault.get("message") or "").strip() or None if server.status == "ERROR" else None,
                "key_name": server.key_name, "task_state": server.task_state,
                "created": server.created_at}

    def server_get(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        if server is None or server.status in GONE_SERVER:
            return None
        return self._server_dict(server)

    def server_status(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        return "DELETED" if server is None or server.status in GONE_SERVER else server.status

    def server_list(self, server_ids):
        """One list of the project's servers (Nova ``GET /servers/detail``) per call."""
        wanted = set(server_ids)
        if not wanted:
            return {}
        servers = call(lambda: list(self.conn.compute.servers(details=True)))
        return {server.id: self._server_dict(server) for server in servers
                if server.id in wanted and server.status not in GONE_SERVER}

    def server_update(self, server_id, **fields):
        server = self._existing_server(server_id)
        if "name" in fields:
            call(self.conn.compute.update_server, server, name=fields["name"])
        if "metadata" in fields:
            self._replace_metadata(server, fields["metadata"] or {})
        if "flavor" in fields:
            flavor = call(self.conn.compute.find_flavor, fields["flavor"], ignore_missing=False)
            call(self.conn.compute.resize_server, server, flavor.id)

    def _replace_metadata(self, server, metadata):
        ours = {k: v for k, v in (server.metadata or {}).items() if k == KEY_PROPERTY}
        wanted = {**metadata, **ours}
        stale = [k for k in (server.metadata or {}) if k not in wanted]
        if stale:
            call(self.conn.compute.delete_server_metadata, server, stale)
        call(self.conn.compute.set_server_metadata, server, **wanted)

    def server_confirm_resize(self, server_id):
        call(self.conn.compute.confirm_server_resize, server_id)

    def _existing_server(self, server_id):
        server = _gone(self.conn.compute.get_server, server_id)
        if server is None:
            raise CloudError(f"Instance {server_id} could not be found. (HTTP 404)")
        return server

    def server_delete(self, server_id):
        _gone(self.conn.compute.delete_server, server_id, ignore_missing=True)

    def server_suspend(self, server_id):
        call(self.conn.compute.suspend_server, self._existing_server(server_id))

    def server_resume(self, server_id):
        call(self.conn.compute.resume_server, self._existing_server(server_id))

    def server_reboot(self, server_id):
        call(self.conn.compute.reboot_server, self._existing_server(server_id), "SOFT")

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
        if data is None and location:  # Glance downloads it (web-download import)
            source = {"use_import": True, "import_method": "web-download", "uri": location}
        else:
            source = {"data": data}
        # allow_duplicates: openstacksdk would otherwise return any image of that name.
        image = call(self.conn.image.create_image, name=name, allow_duplicates=True,
                     wait=False, **source, **attrs, **extra)
        if protected:
            call(self.conn.image.update_image, image, is_protected=True)
        return image.id

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
