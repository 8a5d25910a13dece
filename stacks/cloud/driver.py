"""The cloud driver interface: what resource plugins may ask of a cloud.

heatweb ships one implementation, ``SimulatedCloud`` (objects held in this
service's database). A real driver (e.g. OpenStack Nova/Glance through
openstacksdk) implements the same methods.
"""
from abc import ABC, abstractmethod


class CloudError(Exception):
    """A call the cloud refused or failed; the message is shown as the resource's reason."""


class CloudDriver(ABC):
    """Servers and images of one cloud."""

    @abstractmethod
    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, creation_key=None):
        """Start building a server; returns its id (status BUILD, then ACTIVE).

        With ``creation_key`` the server is tagged with it, and a server that
        already carries the key is returned instead of building a second
        (a create run again after a crash).
        """

    @abstractmethod
    def server_get(self, server_id):
        """A dict describing the server, or None when it does not exist."""

    @abstractmethod
    def server_status(self, server_id):
        """BUILD, ACTIVE, SUSPENDED, ERROR, or DELETED when gone."""

    def server_statuses(self, server_ids):
        """``{id: status}`` for many servers in one list call (DELETED for those gone).

        The engine's poll round asks this once for every server its waiting
        resources watch. This fallback asks one by one; a real driver lists
        (Nova: ``GET /servers/detail?changes-since=``) and filters by id.
        """
        return {server_id: self.server_status(server_id) for server_id in server_ids}

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
    def server_lock(self, server_id):
        """Lock the server against delete, suspend, resume, reboot and rebuild."""

    @abstractmethod
    def server_unlock(self, server_id):
        """Release the server's lock."""

    @abstractmethod
    def image_create(self, *, project_id, name, **fields):
        """Register an image; returns its id."""

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
