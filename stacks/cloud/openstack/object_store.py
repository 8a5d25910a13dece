"""Swift on a real cloud: containers, and the signal objects of temp URLs.

Swift's API is a handful of plain REST calls, made through openstacksdk's
proxy (its session finds the endpoint in the catalog): a container is known
by its name (headers carry its ACLs and metadata); a signal URL
(``OS::Heat::SwiftSignalHandle``) is a temp URL to PUT one object of a
versioned container, as Heat's get_signal_url makes it.
"""
import hashlib
import hmac
import secrets
import time
from urllib.parse import urlparse

from stacks.cloud.driver import IN_PROGRESS
from stacks.cloud.openstack.calls import call, raise_for

META = "X-Container-Meta-"


class ObjectStoreCalls:
    """Mixin of ``OpenStackCloud``: Swift's containers (``_os_<verb>_container``) and
    signal URLs."""

    def _os_create_container(self, *, name, fields, creation_key, find_first):
        headers = {f"{META}{k}": str(v) for k, v in (fields.get("metadata") or {}).items()}
        for field, header in (("read_acl", "X-Container-Read"),
                              ("write_acl", "X-Container-Write")):
            if fields.get(field):
                headers[header] = fields[field]
        raise_for(call(self.conn.object_store.put, f"/{name}", headers=headers))
        return name

    def _os_get_container(self, object_id):
        response = call(self.conn.object_store.head, f"/{object_id}")
        if response.status_code == 404:
            return None
        headers = raise_for(response).headers
        endpoint = self.conn.object_store.get_endpoint()
        return {"id": object_id, "name": object_id, "headers": dict(headers),
                "object_count": int(headers.get("X-Container-Object-Count", 0)),
                "bytes_used": int(headers.get("X-Container-Bytes-Used", 0)),
                "read_acl": headers.get("X-Container-Read"),
                "write_acl": headers.get("X-Container-Write"),
                "metadata": {k[len(META):].lower(): v for k, v in headers.items()
                             if k.lower().startswith(META.lower())},
                "url": f"{endpoint}/{object_id}", "endpoint": endpoint}

    def _os_delete_container(self, object_id):
        response = call(self.conn.object_store.delete, f"/{object_id}")
        if response.status_code == 404:
            return None
        raise_for(response)
        return None

    def container_purge(self, name):
        """Delete every object of the container (Heat's ``PurgeOnDelete``)."""
        store = self.conn.object_store
        response = call(store.get, f"/{name}", headers={"Accept": "application/json"})
        if response.status_code == 404:
            return
        for item in raise_for(response).json():
            call(store.delete, f"/{name}/{item['name']}")

    # Signals through temp URLs (OS::Heat::SwiftSignalHandle) ------------------------------------

    def _temp_url_key(self):
        store = self.conn.object_store
        headers = raise_for(call(store.head, "")).headers
        key = headers.get("X-Account-Meta-Temp-Url-Key")
        if not key:
            key = secrets.token_hex(16)
            raise_for(call(store.post, "", headers={"X-Account-Meta-Temp-Url-Key": key}))
        return key

    def signal_url_create(self, name, *, project_id):
        """A container (versioned: each PUT keeps the one before) with one object reading
        "in progress", and a temp URL to PUT it (Heat's get_signal_url)."""
        store = self.conn.object_store
        raise_for(call(store.put, f"/{name}-versions"))
        raise_for(call(store.put, f"/{name}", headers={"X-Versions-Location":
                                                         f"{name}-versions"}))
        raise_for(call(store.put, f"/{name}/signal", data=IN_PROGRESS.encode()))
        url = f"{store.get_endpoint()}/{name}/signal"
        path = urlparse(url).path
        expires = int(time.time()) + 10 * 365 * 86400
        signature = hmac.new(self._temp_url_key().encode(), f"PUT\n{expires}\n{path}".encode(),
                             hashlib.sha256).hexdigest()
        return f"{url}?temp_url_sig={signature}&temp_url_expires={expires}"

    def _signal_container(self, url):
        return urlparse(url).path.split("/")[-2]

    def signal_bodies(self, url):
        """Every version of the signal object, oldest first (the archived ones, then now)."""
        store, name = self.conn.object_store, self._signal_container(url)
        listed = call(store.get, f"/{name}-versions", headers={"Accept": "application/json"})
        archived = [] if listed.status_code == 404 else sorted(
            item["name"] for item in raise_for(listed).json())
        bodies = [raise_for(call(store.get, f"/{name}-versions/{item}")).text
                  for item in archived]
        current = call(store.get, f"/{name}/signal")
        if current.status_code != 404:
            bodies.append(raise_for(current).text)
        return bodies

    def signal_url_delete(self, url):
        name = self._signal_container(url)
        # Without versioning first: deleting a versioned object brings its last version back.
        call(self.conn.object_store.post, f"/{name}", headers={"X-Remove-Versions-Location": "x"})
        for container in (name, f"{name}-versions"):
            self.container_purge(container)
            response = call(self.conn.object_store.delete, f"/{container}")
            if response.status_code != 404:
                raise_for(response)
