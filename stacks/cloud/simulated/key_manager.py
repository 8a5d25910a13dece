"""What Barbican's kinds do in the simulated cloud beyond storing their fields.

Secrets, orders and containers are known by their hrefs; a secret's payload
is kept (and never shown in its description); an order is fulfilled at
once (a key order makes a secret, an asymmetric one a container of a
private key, a public key and, when asked, a passphrase); a container's
secrets must exist.
"""
import base64
import os
import uuid

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.simulated.objects import live

BARBICAN = "https://key-manager.simulated/v1"


def _href(collection):
    return f"{BARBICAN}/{collection}/{uuid.uuid4()}"


class SimulatedBarbican:
    """Mixin of ``SimulatedCloud``: the Barbican kinds' hooks, and a secret's payload."""

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
        if "://" not in str(href):  # a secret's id (or ``secrets/<id>``), as Barbican takes
            href = f"{BARBICAN}/secrets/{str(href).rsplit('/', 1)[-1]}"
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
