"""The cloud driver interface: what resource plugins may ask of a cloud.

Two implementations: ``SimulatedCloud`` (objects held in this service's
database, the default) and ``OpenStackCloud`` (Nova, Glance and Neutron
through openstacksdk). Every template runs on both.

Creates are idempotent: a ``creation_key`` (stable across re-runs of one
resource's create, see ``ResourcePlugin.creation_key``) is stored on the
physical object, and a create run again after a worker crash first looks
for an object with that key, so it finds the object it made. A first
attempt (``find_first=False``) skips that look: nothing can carry a key
given out just now.
"""
from abc import ABC, abstractmethod


class CloudError(Exception):
    """A call the cloud refused or failed; the message is shown as the resource's reason."""


class CloudNotFound(CloudError):
    """The object asked for does not exist (any more)."""


# Neutron-style objects the driver keeps: Net, Subnet, Port, SecurityGroup.
NETWORK_KINDS = ("network", "subnet", "port", "security_group")


class CloudDriver(ABC):
    """Servers and images of one cloud."""

    # How many calls the engine may have in flight at once for one batch of
    # nodes (their round trips overlap); 1: one after another.
    parallel_calls = 1

    def for_stack(self, stack):
        """The driver acting for ``stack``'s owner (Keystone mode: through the stack's trust)."""
        return self

    @abstractmethod
    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True):
        """Start building a server; returns its id (status BUILD, then ACTIVE).

        ``networks``: Heat's list of ``{"network"|"port"|"fixed_ip"|"subnet": ...}``
        (names or ids). With ``creation_key``, an existing server made with
        that key (not in ERROR) is returned instead of building another.
        """

    @abstractmethod
    def server_get(self, server_id):
        """A dict describing the server, or None when it does not exist.

        Keys: id, name, status, image, flavor, metadata, addresses (Nova's
        ``{network name: [{"addr", "version"}]}``), locked, locked_reason,
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
    def server_update(self, server_id, **fields):
        """Change name, flavor or metadata in place."""

    @abstractmethod
    def server_delete(self, server_id):
        """Delete the server (refused while it is locked)."""

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

    # Networks (Neutron) ------------------------------------------------------------

    @abstractmethod
    def network_object_create(self, kind, *, project_id, name, creation_key=None,
                              find_first=True, **fields):
        """Create a ``kind`` (one of ``NETWORK_KINDS``) object with Neutron's fields; its id."""

    @abstractmethod
    def network_object_get(self, kind, object_id):
        """A dict of Neutron's fields of the object (``id``, ``name``, ...), or None when gone."""

    @abstractmethod
    def network_object_update(self, kind, object_id, **fields):
        """Change fields of the object in place."""

    @abstractmethod
    def network_object_delete(self, kind, object_id):
        """Delete the object; one already gone is done."""
