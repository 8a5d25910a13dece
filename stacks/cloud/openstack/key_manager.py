"""Barbican on a real cloud: secrets, orders and secret containers.

Barbican's API is a handful of plain REST calls, made through openstacksdk's
proxy (its session finds the endpoint in the catalog); an object is known by
its href (``secret_ref``, ``order_ref``, ``container_ref``), as Heat's
physical ids are.
"""
from stacks.cloud.driver import CloudNotFound
from stacks.cloud.openstack.calls import call, raise_for

BARBICAN_PATHS = {"secret": "secrets", "order": "orders", "secret_container": "containers"}
SECRET_FIELDS = ("payload", "payload_content_type", "payload_content_encoding", "secret_type",
                 "algorithm", "bit_length", "mode", "expiration")


def _uuid(href):
    return str(href).rstrip("/").rsplit("/", 1)[-1]


class KeyManagerCalls:
    """Mixin of ``OpenStackCloud``: Barbican's ``_os_<verb>_<kind>`` methods, and a
    secret's payload."""

    def _barbican_create(self, kind, body):
        response = call(self.conn.key_manager.post, f"/{BARBICAN_PATHS[kind]}", json=body)
        made = raise_for(response).json()
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
        response = call(self.conn.key_manager.get, f"/{BARBICAN_PATHS[kind]}/{_uuid(href)}")
        if response.status_code == 404:
            return None
        return {**raise_for(response).json(), "id": href}

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
        response = call(self.conn.key_manager.get, f"/secrets/{_uuid(href)}/payload",
                         headers={"Accept": kind})
        raise_for(response)
        return response.text if kind.startswith("text/") else response.content

    def _barbican_delete(self, kind, href):
        response = call(self.conn.key_manager.delete, f"/{BARBICAN_PATHS[kind]}/{_uuid(href)}")
        if response.status_code not in (404,):
            raise_for(response)

    def _os_delete_secret(self, object_id):
        self._barbican_delete("secret", object_id)

    def _os_delete_order(self, object_id):
        self._barbican_delete("order", object_id)

    def _os_delete_secret_container(self, object_id):
        self._barbican_delete("secret_container", object_id)
