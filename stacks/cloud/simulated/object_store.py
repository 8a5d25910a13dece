"""What Swift's kinds do in the simulated cloud beyond storing their fields.

A container is known by its name, and making one that exists changes
nothing; a write ACL naming a referrer is refused. A signal URL
(``OS::Heat::SwiftSignalHandle``) is a temp URL served by heatweb itself
(``stacks.api.webhooks``): each PUT through it is a new version of the
signal object.
"""
import hashlib
import hmac
import time
from urllib.parse import urlparse

from django.conf import settings

from stacks.cloud.driver import IN_PROGRESS, CloudError, CloudNotFound
from stacks.cloud.simulated.objects import SimulatedObjects, live

# The simulated Swift's temp URLs are served by heatweb itself (stacks.api.webhooks).
TEMP_URL_PATH = "/sim/object-store"


def temp_url_signature(method, expires, path):
    """Swift's tempurl signature (HMAC-SHA256 of method, expiry and path), keyed here by
    heatweb's secret."""
    return hmac.new(settings.SECRET_KEY.encode(), f"{method}\n{expires}\n{path}".encode(),
                    hashlib.sha256).hexdigest()


def swift_object_put(container, name, body):
    """A PUT through a simulated temp URL: the object's new version."""
    row = live("container", pk=container).first()
    if row is None:
        raise CloudNotFound(f"Container {container} could not be found. (HTTP 404)")
    SimulatedObjects.sim_row_create("swift_object", project_id=row.project_id, name=name,
                                    fields={"container": container, "body": body})


def _check_write_acl(acl):
    """Swift's refusal: a referrer (``.r:``) may read a container, never write to it."""
    referrers = [item for item in str(acl or "").split(",") if item.strip().startswith(".r")]
    if referrers:
        raise CloudError(f"Referrers not allowed in write ACL: '{referrers[0].strip()}' "
                         f"(HTTP 400)")


class SimulatedSwift:
    """Mixin of ``SimulatedCloud``: the Swift kinds' hooks, and signal URLs."""

    def _create_container(self, *, project_id, name, fields, creation_key):
        if live("container", pk=name).exists():
            return name  # Swift's PUT of an existing container: 202, nothing changes
        if not name or "/" in name or len(name) > 256:
            raise CloudError(f"Container name '{name}' is not valid. (HTTP 400)")
        _check_write_acl(fields.get("write_acl"))
        self.sim_row_create("container", project_id=project_id, name=name, object_id=name,
                            creation_key=creation_key,
                            fields={"read_acl": None, "write_acl": None, "metadata": {},
                                    **fields, "object_count": 0, "bytes_used": 0})
        return name

    def _update_container(self, row, fields):
        _check_write_acl(fields.get("write_acl"))
        return fields

    def _describe_container(self, row, out):
        endpoint = f"https://object-store.simulated/v1/AUTH_{row.project_id}"
        out.update(endpoint=endpoint, url=f"{endpoint}/{row.pk}")

    def container_purge(self, name):
        """Delete every object of the container."""
        for row in live("swift_object", fields__container=name):
            self.sim_row_delete(row)

    def _in_use_container(self, row):
        if live("swift_object", fields__container=row.pk).exists():
            return ("There was a conflict when trying to complete your request. (HTTP 409)")
        return None

    def signal_url_create(self, name, *, project_id):
        """A container with one object reading "in progress", and a temp URL to PUT it."""
        self.object_create("container", project_id=project_id, name=name)
        swift_object_put(name, "signal", IN_PROGRESS)
        path = f"{TEMP_URL_PATH}/{name}/signal"
        expires = int(time.time()) + 10 * 365 * 86400
        base = settings.HEATWEB["PUBLIC_URL"].rstrip("/")
        return (f"{base}{path}?temp_url_sig={temp_url_signature('PUT', expires, path)}"
                f"&temp_url_expires={expires}")

    def signal_bodies(self, url):
        """Every version of the signal object, oldest first."""
        container = urlparse(url).path.split("/")[-2]
        return [row.fields.get("body") or "" for row in
                live("swift_object", fields__container=container).order_by("created_at", "id")]

    def signal_url_delete(self, url):
        container = urlparse(url).path.split("/")[-2]
        self.container_purge(container)
        self.object_delete("container", container)
