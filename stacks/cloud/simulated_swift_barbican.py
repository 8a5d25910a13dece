"""What Swift's and Barbican's kinds do in the simulated cloud beyond storing their fields.

Like Swift: a container is known by its name, and making one that exists
changes nothing. Like Barbican: secrets, orders and containers are known by
their hrefs; a secret's payload is kept (and never shown in its
description); an order is fulfilled at once (a key order makes a secret, an
asymmetric one a container of a private key, a public key and, when asked,
a passphrase); a container's secrets must exist.
"""
import base64
import hashlib
import hmac
import os
import time
import uuid
from urllib.parse import urlparse

from django.conf import settings

from stacks.cloud.driver import IN_PROGRESS, CloudError, CloudNotFound
from stacks.cloud.simulated_objects import live

BARBICAN = "https://key-manager.simulated/v1"
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
    from stacks.cloud.simulated_objects import SimulatedObjects

    SimulatedObjects.sim_row_create("swift_object", project_id=row.project_id, name=name,
                                    fields={"container": container, "body": body})


def _href(collection):
    return f"{BARBICAN}/{collection}/{uuid.uuid4()}"


def _check_write_acl(acl):
    """Swift's refusal: a referrer (``.r:``) may read a container, never write to it."""
    referrers = [item for item in str(acl or "").split(",") if item.strip().startswith(".r")]
    if referrers:
        raise CloudError(f"Referrers not allowed in write ACL: '{referrers[0].strip()}' "
                         f"(HTTP 400)")


class SimulatedSwiftBarbican:
    """Mixin of ``SimulatedCloud``: the Swift and Barbican kinds' hooks."""

    # Swift ------------------------------------------------------------------------------------

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

    # Barbican -----------------------------------------------------------------------------------

    def _complete_secret(self, fields, project_id):
        if fields.get("payload") is not None and not fields.get("payload_content_type"):
            raise CloudError("Provided object does not match schema 'Secret': If 'payload' "
                             "specified, must be non empty (HTTP 400)")
        return {"status": "ACTIVE", "secret_type": "opaque", "algorithm": None,
                "bit_length": None, "mode": None, "expiration": None, **fields,
                "id": _href("secrets"),
                "content_types": {"default": fields.get("payload_content_type")
                                  or "application/octet-stream"}}

    def _describe_secret(self, row, out):
        out.pop("payload", None)
        out["secret_ref"] = row.pk

    def secret_payload(self, href):
        row = live("secret", pk=href).first()
        if row is None:
            raise CloudNotFound(f"Secret {href} could not be found. (HTTP 404)")
        payload = row.fields.get("payload")
        if row.fields.get("payload_content_encoding") == "base64" and payload is not None:
            return base64.b64decode(payload)
        return payload

    def _made_secret(self, project_id, name, **fields):
        return self.object_create("secret", project_id=project_id, name=name,
                                  payload_content_type="application/octet-stream",
                                  payload_content_encoding="base64", **fields)

    def _complete_order(self, fields, project_id):
        kind = fields.get("type")
        name = fields.get("name") or ""
        bits = int(fields.get("bit_length") or 256)
        out = {"status": "ACTIVE", **fields, "id": _href("orders"), "secret_ref": None,
               "container_ref": None}
        if kind == "key":
            out["secret_ref"] = self._made_secret(
                project_id, name, secret_type="symmetric",
                payload=base64.b64encode(os.urandom(bits // 8)).decode(),
                algorithm=fields.get("algorithm"), bit_length=bits)
        elif kind == "asymmetric":
            refs = [{"name": part, "secret_ref": self._made_secret(
                project_id, name, secret_type=part.replace("_key", ""),
                payload=base64.b64encode(pem).decode())}
                for part, pem in zip(("private_key", "public_key"), _rsa_pair(bits))]
            if fields.get("pass_phrase"):
                refs.append({"name": "private_key_passphrase", "secret_ref": self.object_create(
                    "secret", project_id=project_id, name=name, secret_type="passphrase",
                    payload=fields["pass_phrase"], payload_content_type="text/plain")})
            out["container_ref"] = self.object_create(
                "secret_container", project_id=project_id, name=name, type="rsa",
                secret_refs=refs)
        else:
            raise CloudError(f"Invalid order type: {kind} (HTTP 400)")
        out.pop("pass_phrase", None)
        return out

    def _describe_order(self, row, out):
        out["order_ref"] = row.pk

    def _complete_secret_container(self, fields, project_id):
        for ref in fields.get("secret_refs") or []:
            if not live("secret", pk=ref.get("secret_ref")).exists():
                raise CloudError(f"Secret provided for '{ref.get('name')}' doesn't exist. "
                                 f"(HTTP 404)")
        return {"status": "ACTIVE", "type": "generic", "secret_refs": [], "consumers": [],
                **fields, "id": _href("containers")}

    def _describe_secret_container(self, row, out):
        out["container_ref"] = row.pk


def _rsa_pair(bits):
    """(private, public) PEM of a new RSA key, as Barbican's asymmetric order makes them."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=max(1024, bits))
    return (key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()),
            key.public_key().public_bytes(serialization.Encoding.PEM,
                                          serialization.PublicFormat.SubjectPublicKeyInfo))
