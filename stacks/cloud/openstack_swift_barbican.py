"""Swift containers and Barbican secrets, orders and containers on a real cloud.

Both services' APIs are a handful of plain REST calls, made through
openstacksdk's proxies (their sessions find the endpoints in the catalog):
a Swift container is known by its name (headers carry its ACLs and
metadata); a Barbican object by its href (``secret_ref``, ``order_ref``,
``container_ref``), as Heat's physical ids are.
"""
import hashlib
import hmac
import secrets
import time
from urllib.parse import urlparse

from stacks.cloud.driver import CloudNotFound
from stacks.cloud.simulated_swift_barbican import IN_PROGRESS
from stacks.cloud.openstack_cinder import _raise_for

META = "X-Container-Meta-"
BARBICAN_PATHS = {"secret": "secrets", "order": "orders", "secret_container": "containers"}
SECRET_FIELDS = ("payload", "payload_content_type", "payload_content_encoding", "secret_type",
                 "algorithm", "bit_length", "mode", "expiration")


def _call(function, *args, **kwargs):
    from stacks.cloud.openstack import call  # cycle: that module imports this one

    return call(function, *args, **kwargs)


def _uuid(href):
    return str(href).rstrip("/").rsplit("/", 1)[-1]


class SwiftBarbicanCalls:
    """Mixin of ``OpenStackCloud``: ``_os_<verb>_<kind>`` of Swift's and Barbican's kinds."""

    # Swift ------------------------------------------------------------------------------------

    def _os_create_container(self, *, name, fields, creation_key, find_first):
        headers = {f"{META}{k}": str(v) for k, v in (fields.get("metadata") or {}).items()}
        for field, header in (("read_acl", "X-Container-Read"),
                              ("write_acl", "X-Container-Write")):
            if fields.get(field):
                headers[header] = fields[field]
        _raise_for(_call(self.conn.object_store.put, f"/{name}", headers=headers))
        return name

    def _os_get_container(self, object_id):
        response = _call(self.conn.object_store.head, f"/{object_id}")
        if response.status_code == 404:
            return None
        headers = _raise_for(response).headers
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
        response = _call(self.conn.object_store.delete, f"/{object_id}")
        if response.status_code == 404:
            return None
        _raise_for(response)
        return None

    def container_purge(self, name):
        """Delete every object of the container (Heat's ``PurgeOnDelete``)."""
        store = self.conn.object_store
        response = _call(store.get, f"/{name}", headers={"Accept": "application/json"})
        if response.status_code == 404:
            return
        for item in _raise_for(response).json():
            _call(store.delete, f"/{name}/{item['name']}")

    # Signals through temp URLs (OS::Heat::SwiftSignalHandle) ------------------------------------

    def _temp_url_key(self):
        store = self.conn.object_store
        headers = _raise_for(_call(store.head, "")).headers
        key = headers.get("X-Account-Meta-Temp-Url-Key")
        if not key:
            key = secrets.token_hex(16)
            _raise_for(_call(store.post, "", headers={"X-Account-Meta-Temp-Url-Key": key}))
        return key

    def signal_url_create(self, name, *, project_id):
        """A container (versioned: each PUT keeps the one before) with one object reading
        "in progress", and a temp URL to PUT it (Heat's get_signal_url)."""
        store = self.conn.object_store
        _raise_for(_call(store.put, f"/{name}-versions"))
        _raise_for(_call(store.put, f"/{name}", headers={"X-Versions-Location":
                                                         f"{name}-versions"}))
        _raise_for(_call(store.put, f"/{name}/signal", data=IN_PROGRESS.encode()))
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
        listed = _call(store.get, f"/{name}-versions", headers={"Accept": "application/json"})
        archived = [] if listed.status_code == 404 else sorted(
            item["name"] for item in _raise_for(listed).json())
        bodies = [_raise_for(_call(store.get, f"/{name}-versions/{item}")).text
                  for item in archived]
        current = _call(store.get, f"/{name}/signal")
        if current.status_code != 404:
            bodies.append(_raise_for(current).text)
        return bodies

    def signal_url_delete(self, url):
        name = self._signal_container(url)
        # Without versioning first: deleting a versioned object brings its last version back.
        _call(self.conn.object_store.post, f"/{name}", headers={"X-Remove-Versions-Location": "x"})
        for container in (name, f"{name}-versions"):
            self.container_purge(container)
            response = _call(self.conn.object_store.delete, f"/{container}")
            if response.status_code != 404:
                _raise_for(response)

    # Barbican -----------------------------------------------------------------------------------

    def _barbican_create(self, kind, body):
        response = _call(self.conn.key_manager.post, f"/{BARBICAN_PATHS[kind]}", json=body)
        made = _raise_for(response).json()
        return made.get("secret_ref") or made.get("order_ref") or made["container_ref"]

    def _os_create_secret(self, *, name, fields, creation_key, find_first):
        body = {k: fields[k] for k in SECRET_FIELDS if fields.get(k) is not None}
        return self._barbican_create("secret", {"name": name, **body})

    def _os_create_order(self, *, name, fields, creation_key, find_first):
        meta = {k: v for k, v in fields.items() if k != "type" and v is not None}
        return self._barbican_create("order", {"type": fields.get("type"),
                                               "meta": {"name": name, **meta}})

    def _os_create_secret_container(self, *, name, fields, creation_key, find_first):
        return self._barbican_create("secret_container", {
            "name": name, "type": fields.get("type", "generic"),
            "secret_refs": fields.get("secret_refs") or []})

    def _barbican_get(self, kind, href):
        response = _call(self.conn.key_manager.get, f"/{BARBICAN_PATHS[kind]}/{_uuid(href)}")
        if response.status_code == 404:
            return None
        return {**_raise_for(response).json(), "id": href}

    def _os_get_secret(self, object_id):
        return self._barbican_get("secret", object_id)

    def _os_get_order(self, object_id):
        return self._barbican_get("order", object_id)

    def _os_get_secret_container(self, object_id):
        return self._barbican_get("secret_container", object_id)

    def secret_payload(self, href):
        """The secret's decrypted payload (text when it is text)."""
        secret = self._barbican_get("secret", href)
        if secret is None:
            raise CloudNotFound(f"Secret {href} could not be found. (HTTP 404)")
        kind = (secret.get("content_types") or {}).get("default", "text/plain")
        response = _call(self.conn.key_manager.get, f"/secrets/{_uuid(href)}/payload",
                         headers={"Accept": kind})
        _raise_for(response)
        return response.text if kind.startswith("text/") else response.content

    def _barbican_delete(self, kind, href):
        response = _call(self.conn.key_manager.delete, f"/{BARBICAN_PATHS[kind]}/{_uuid(href)}")
        if response.status_code not in (404,):
            _raise_for(response)

    def _os_delete_secret(self, object_id):
        self._barbican_delete("secret", object_id)

    def _os_delete_order(self, object_id):
        self._barbican_delete("order", object_id)

    def _os_delete_secret_container(self, object_id):
        self._barbican_delete("secret_container", object_id)
