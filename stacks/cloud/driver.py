"""The cloud driver interface: what resource plugins may ask of a cloud.

Two implementations: ``SimulatedCloud`` (objects held in this service's
database, the default) and ``OpenStackCloud`` (Nova, Glance, Neutron and
Keystone through openstacksdk). Every template runs on both. Besides
servers and images, a driver keeps generic objects of the kinds declared in
``stacks.cloud.kinds`` (``object_create/get/update/delete``).

Creates are idempotent: a ``creation_key`` (stable across re-runs of one
resource's create, see ``ResourcePlugin.creation_key``) is stored on the
physical object, and a create run again after a worker crash first looks
for an object with that key, so it finds the object it made. A first
attempt (``find_first=False``) skips that look: nothing can carry a key
given out just now.
"""
import json
from abc import ABC, abstractmethod
from contextlib import nullcontext

# ``server_create``'s ``options``: Nova's further create options a server may be given.
SERVER_OPTIONS = ("admin_pass", "config_drive", "scheduler_hints", "tags")
# The body of a signal URL's object nobody has written yet (Heat's), in either cloud.
IN_PROGRESS = "in progress"


class CloudError(Exception):
    """A call the cloud refused or failed; the message is shown as the resource's reason."""


class CloudNotFound(CloudError):
    """The object asked for does not exist (any more)."""


def nova_metadata(metadata):
    """A server's metadata as Nova keeps it: values are strings, others their JSON (Heat's
    ``meta_serialize``)."""
    return {key: value if isinstance(value, str) else json.dumps(value)
            for key, value in (metadata or {}).items()}


# A server dict's (``server_get``, ``server_list``) ``{network name: id}`` of its
# addresses, when the driver knows them from the ports it read anyway; not a field
# of the server as Nova shows it (the plugin takes it out of ``show``).
NETWORK_IDS = "_network_ids"


class CreatedId(str):
    """An id as ``object_create`` may return it: with ``described``, the create's own
    answer as ``object_get`` would give it (the object's attributes without reading it
    again), when the driver has it."""

    def __new__(cls, object_id, described=None):
        made = super().__new__(cls, object_id)
        made.described = described
        return made


class CloudDriver(ABC):
    """Servers, images and generic objects of one cloud."""

    # How many calls the engine may have in flight at once for one batch of
    # nodes (their round trips overlap); 1: one after another.
    parallel_calls = 1

    def task_reads(self):
        """A context around one engine task's calls, in which the driver may answer a read
        of its own (one a real cloud makes on its side) once for all of them: the
        simulated cloud's fault check and network choice. A real cloud's driver reads
        nothing of the kind: nothing to keep."""
        return nullcontext()

    def for_stack(self, stack):
        """The driver acting for ``stack``'s owner (Keystone mode: through the stack's trust)."""
        return self

    def for_user(self, user, project_id):
        """The driver acting as ``user`` in ``project_id`` (Keystone mode: the caller's own
        token), for what Heat checks in the request's context before a stack exists."""
        return self

    def for_stack_user(self, user_id, password, project_id):
        """The driver logged in as a stack user (``heatweb.stack_users``) in its project;
        a cloud without Keystone has none: the driver itself."""
        return self

    def visible_to(self, kind, physical_id, *, project_id):
        """Whether the ``kind`` object ``physical_id`` exists and is the caller's to take
        over (an adopt, an ``external_id``). A real cloud answers through the caller's own
        credentials (``for_user``): what its API lets them read; ``project_id`` is the
        caller's project (None for a cloud admin), which the simulated cloud compares with
        the object's own."""
        try:
            if kind == "server":
                found = self.server_get(physical_id)
            elif kind == "image":
                found = self.image_get(physical_id)
            else:
                found = self.object_get(kind, physical_id)
        except CloudNotFound:
            return False
        return found is not None

    def has_service(self, service_type):
        """Whether the cloud's catalog has a service of that type (``volumev3``, ``dns`` ...)."""
        return False

    def has_network_extension(self, alias):
        """Whether Neutron offers the API extension ``alias`` (``router``, ``qos`` ...)."""
        return True

    @abstractmethod
    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True,
                      block_devices=None, options=None, security_groups=None):
        """Start building a server; returns its id (status BUILD, then ACTIVE).

        ``options``: Nova's further create options, each when given: ``admin_pass``,
        ``config_drive`` (a boolean), ``scheduler_hints`` (a map), ``tags`` (a list);
        ``server_get`` answers ``tags`` and ``config_drive``, never the password.

        ``networks``: Heat's list of ``{"network"|"port"|"fixed_ip"|"subnet": ...}``
        (names or ids). ``security_groups`` (names or ids) go on the ports made for
        the server, not on ports given. ``block_devices``: Nova's block device mapping v2
        (``boot_index``, ``source_type`` image/volume/snapshot/blank, ``uuid``,
        ``volume_size``, ``device_name``, ``delete_on_termination``); with a boot
        volume, ``image`` is empty. With ``creation_key``, an existing server made with
        that key (not in ERROR) is returned instead of building another.
        """

    @abstractmethod
    def server_get(self, server_id):
        """A dict describing the server, or None when it does not exist.

        Keys: id, name, status, image, flavor, metadata, addresses (Nova's
        ``{network name: [{"addr", "version", ...}]}``, each with its ``port`` id as
        Heat shows them), locked, locked_reason,
        fault (the cloud's message when status is ERROR, else None).
        """

    @abstractmethod
    def server_status(self, server_id):
        """BUILD, ACTIVE, SUSPENDED, ERROR, or DELETED when gone."""

    def server_list(self, server_ids):
        """``{id: server}`` (as ``server_get`` describes one) for many servers in one list
        call; those gone are left out.

        The engine's poll round asks this once for every server its waiting
        resources watch, and the attributes of those it finds ready come from
        it (no ``server_get`` each). This fallback asks one by one; a real
        driver lists (Nova: ``GET /servers/detail``) and filters by id.
        """
        found = {server_id: self.server_get(server_id) for server_id in server_ids}
        return {server_id: server for server_id, server in found.items() if server is not None}

    def server_statuses(self, server_ids):
        """``{id: status}`` for many servers in one list call (DELETED for those gone)."""
        listed = self.server_list(server_ids)
        return {server_id: listed[server_id]["status"] if server_id in listed else "DELETED"
                for server_id in server_ids}

    @abstractmethod
    def server_update(self, server_id, *, creation_key=None, **fields):
        """Change name, flavor, metadata, tags or admin_pass in place. ``creation_key``:
        the one the server was made with (kept in its metadata), when known."""

    @abstractmethod
    def server_delete(self, server_id, *, internal_ports=None):
        """Delete the server (refused while it is locked), and the ports made for its
        ``networks`` entries naming a subnet: ``internal_ports`` when the caller read them
        (``internal_ports_by_server``), else the driver looks for them."""

    def internal_ports_by_server(self):
        """``{server id: [port id]}``: the ports made for servers' ``networks`` entries
        naming a subnet, of every server the caller sees; one read for a task's server
        deletes (Heat keeps them in each resource's data). A cloud whose driver makes none
        of its own: ``{}``."""
        return {}

    @abstractmethod
    def server_suspend(self, server_id):
        """Suspend an ACTIVE server (refused while locked)."""

    @abstractmethod
    def server_resume(self, server_id):
        """Resume a SUSPENDED server (refused while locked)."""

    @abstractmethod
    def server_reboot(self, server_id):
        """Reboot (refused while locked)."""

    @abstractmethod
    def server_lock(self, server_id, reason=None):
        """Lock the server against delete, suspend, resume, reboot and rebuild."""

    @abstractmethod
    def server_unlock(self, server_id):
        """Release the server's lock."""

    @abstractmethod
    def server_port_detach(self, server_id, port_id):
        """Detach port ``port_id`` from the server and return once the port is free.

        Used before a server is replaced, so that its replacement can take the
        port (Heat's ``prepare_for_replace``). A port already detached, or a
        server gone, is fine.
        """

    def server_interfaces(self, server_id):
        """The server's ports now: ``[{"port", "network", "subnets", "fixed_ips"}]`` (ids)."""
        raise CloudError("This cloud cannot list a server's interfaces.")

    def server_interface_attach(self, server_id, entry, *, security_groups=None):
        """Attach one of Heat's ``networks`` entries (``port`` / ``network`` / ``subnet`` /
        ``fixed_ip``, ids) to a running server; the port made for it goes with the server,
        as one made at the server's create."""
        raise CloudError("This cloud cannot attach interfaces to a server.")

    def server_image_create(self, server_id, *, name):
        """An image of the server (Nova's createImage); returns the image's id."""
        raise CloudError("This cloud cannot make images of servers.")

    @abstractmethod
    def image_create(self, *, project_id, name, creation_key=None, find_first=True, data=None,
                     **fields):
        """Register an image (from ``location`` or the bytes in ``data``); returns its id."""

    @abstractmethod
    def image_get(self, image_id):
        """A dict describing the image, or None."""

    def image_statuses(self, image_ids):
        """``{id: status}`` for many images in one list call (``deleted`` for those gone).

        This fallback asks one by one; a real driver lists by ids (Glance:
        ``GET /v2/images?id=in:...``).
        """
        statuses = {}
        for image_id in image_ids:
            image = self.image_get(image_id)
            statuses[image_id] = image["status"] if image else "deleted"
        return statuses

    @abstractmethod
    def image_update(self, image_id, **fields):
        """Change the image's metadata."""

    @abstractmethod
    def image_delete(self, image_id):
        """Delete the image (refused while protected)."""

    @abstractmethod
    def image_protect(self, image_id, protected):
        """Set or clear the image's ``protected`` flag."""

    # Objects of any kind (stacks.cloud.kinds) -------------------------------------

    @abstractmethod
    def object_create(self, kind, *, project_id, name, creation_key=None, find_first=True,
                      **fields):
        """Create an object of ``kind`` with the service's own field names; its id.

        A field ``refs`` declares (``network_id``, ``domain_id`` ...) may name the
        object instead of giving its id. Refusals are CloudError with the service's words.
        """

    @abstractmethod
    def object_find(self, kind, name_or_id):
        """The id of the ``kind`` object with that id or name; CloudNotFound when none."""

    def object_search(self, kind, **fields):
        """The ids of the ``kind`` objects whose fields have these values, as Neutron's list
        filters (``router:external``, ``floating_ip_address``)."""
        raise CloudError("This cloud cannot search its objects.")

    def find_boot_source(self, kind, name_or_id):
        """The id of the ``image`` or ``flavor`` with that id or name (what a server boots
        from); CloudNotFound when none."""
        return self.object_find(kind, name_or_id)

    @abstractmethod
    def object_get(self, kind, object_id):
        """A dict of the object's fields (``id``, ``name``, ...), or None when it is gone."""

    @abstractmethod
    def object_update(self, kind, object_id, **fields):
        """Change fields of the object in place."""

    @abstractmethod
    def object_delete(self, kind, object_id):
        """Delete the object; one already gone is done. True when the cloud's answer says
        it is gone (a service that deletes at once, as Neutron does): the caller need not
        read it again; False when it may still be going (read it until it is gone)."""

    def router_routes_change(self, router_id, *, add=(), remove=()):
        """The router's extra routes gain ``add`` and lose ``remove`` (``{destination,
        nexthop}`` maps), other routes kept. Here read, then written: a driver whose
        cloud changes them atomically (Neutron's ``extraroute-atomic``) does so, so two
        resources changing one router's routes at once lose neither's."""
        router = self.object_get("router", router_id)
        if router is None:
            raise CloudNotFound(f"The router {router_id} could not be found")
        routes = [{"destination": r["destination"], "nexthop": r["nexthop"]}
                  for r in router.get("routes") or []]
        routes = [r for r in routes if r not in list(remove)]
        routes += [r for r in add if r not in routes]
        self.object_update("router", router_id, routes=routes)

    def queue_signed_url(self, queue, *, project_id, paths=None, methods=None, ttl=None):
        """Zaqar's signed URL of ``queue`` (its ``share``): ``{paths, methods, project,
        expires, signature}``; ``paths`` among messages, subscriptions and claims (default
        messages), ``methods`` default GET, valid ``ttl`` seconds (default a day)."""
        raise CloudError("This cloud has no messaging service (Zaqar)")

    def queue_post(self, queue, bodies, *, ttl=3600):
        """Post one message per body to ``queue`` (Zaqar makes the queue on first use)."""
        raise CloudError("This cloud has no messaging service (Zaqar)")

    def queue_pop(self, queue, *, limit=20):
        """The bodies of up to ``limit`` of the queue's messages, oldest first, deleted from
        it as they are read (Zaqar's ``DELETE .../messages?pop=``); none when it has none
        or does not exist."""
        raise CloudError("This cloud has no messaging service (Zaqar)")

    # The names of the Neutron-only interface, kept for callers written before it.

    def network_object_create(self, kind, **kwargs):
        return self.object_create(kind, **kwargs)

    def network_object_get(self, kind, object_id):
        return self.object_get(kind, object_id)

    def network_object_update(self, kind, object_id, **fields):
        return self.object_update(kind, object_id, **fields)

    def network_object_delete(self, kind, object_id):
        return self.object_delete(kind, object_id)
