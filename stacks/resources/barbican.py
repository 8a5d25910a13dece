"""Barbican's types: ``OS::Barbican::Secret``, ``Order``, ``GenericContainer``,
``CertificateContainer``, ``RSAContainer``, as Heat's.

Each is known by its Barbican href (``secret_ref``, ``order_ref``,
``container_ref``), which is its physical id; none updates in place (every
change replaces it). A secret's ``decrypted`` attribute is its payload;
an order waits until Barbican has fulfilled it (``ACTIVE``), and its
attributes give the secret or container it made. Deleting an order leaves
what it made, as in Barbican. On a cloud without Barbican in its catalog
these types answer ResourceTypeUnavailable.
"""
from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Property

BARBICAN = ("barbican", "key-manager")
CONTENT_TYPES = (AllowedValues(("text/plain", "application/octet-stream")),)


class BarbicanResource(CloudObjectResource):
    required_service = BARBICAN

    def check_create_complete(self, cookie):
        found = self.existing()
        if found.get("status") == "ERROR":
            reason = found.get("error_reason") or found.get("sub_status_message") or "Unknown"
            raise ResourceFailure(f"{self.type_name.rsplit('::', 1)[-1]} in ERROR: {reason}")
        return found.get("status") in (None, "ACTIVE")

    def _payload(self, href):
        return _cloud_call(self.cloud.secret_payload, href) if href else None


@register
class Secret(BarbicanResource):
    """A Barbican secret: a payload kept encrypted (or only its metadata)."""

    type_name = "OS::Barbican::Secret"
    kind = "secret"
    properties_schema = {
        "name": prop("String", "Human readable name for the secret."),
        "payload": prop("String", "The unencrypted plain text of the secret."),
        "payload_content_type": prop("String", "The type/format the secret data is provided "
                                     "in.", constraints=CONTENT_TYPES),
        "payload_content_encoding": prop("String", "The encoding format used to provide the "
                                         "payload data.",
                                         constraints=(AllowedValues(("base64",)),)),
        "mode": prop("String", "The type/mode of the algorithm associated with the secret "
                     "information."),
        "expiration": prop("String", "The expiration date for the secret in ISO-8601 format."),
        "algorithm": prop("String", "The algorithm type used to generate the secret."),
        "bit_length": prop("Integer", "The bit-length of the secret."),
        "secret_type": prop("String", "The type of the secret.", default="opaque",
                            constraints=(AllowedValues(("symmetric", "public", "private",
                                                        "certificate", "passphrase",
                                                        "opaque")),)),
    }
    attributes_schema = attributes(status="The status of the secret.",
                                   decrypted="The decrypted secret payload.")

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        if props.get("payload_content_type") and not props.get("payload"):
            raise StackValidationFailed("payload needs to be specified if "
                                        "payload_content_type is specified.")
        if props.get("payload") and not props.get("payload_content_type"):
            raise StackValidationFailed("payload_content_type must be provided if payload is "
                                        "specified.")
        if props.get("payload_content_encoding") == "base64" and \
                props.get("payload_content_type") != "application/octet-stream":
            raise StackValidationFailed("payload_content_type must be application/octet-stream "
                                        "if payload_content_encoding is base64.")
        return props

    def attribute_value(self, found, name):
        if name == "decrypted":
            payload = self._payload(self.physical_id)
            return _text(payload)
        return super().attribute_value(found, name)


def _text(payload):
    """A payload as an attribute's text: bytes decoded, what is not UTF-8 replaced (a NUL
    is replaced where attributes are stored: ``stacks.models.resource.CloudJSONEncoder``)."""
    return payload.decode(errors="replace") if isinstance(payload, bytes) else payload


@register
class Order(BarbicanResource):
    """A Barbican order: Barbican makes a key (a secret) or an RSA key pair (a container)."""

    type_name = "OS::Barbican::Order"
    kind = "order"
    properties_schema = {
        "name": prop("String", "Human readable name for the secret."),
        "payload_content_type": prop("String", "The type/format the secret data is provided "
                                     "in.", constraints=CONTENT_TYPES),
        "expiration": prop("String", "The expiration date for the secret in ISO-8601 format."),
        "algorithm": prop("String", "The algorithm type used to generate the secret."),
        "bit_length": prop("Integer", "The bit-length of the secret."),
        "mode": prop("String", "The type/mode of the algorithm associated with the secret "
                     "information."),
        "type": prop("String", "The type of the order.", required=True,
                     constraints=(AllowedValues(("key", "asymmetric", "certificate")),)),
        "request_type": prop("String", "The type of the certificate request."),
        "subject_dn": prop("String", "The subject of the certificate request."),
        "source_container_ref": prop("String", "The source of certificate request."),
        "ca_id": prop("String", "The identifier of the CA to use."),
        "profile": prop("String", "The profile of certificate to use."),
        "request_data": prop("String", "The content of the CSR."),
        "pass_phrase": prop("String", "The passphrase of the created key."),
    }
    attributes_schema = attributes(
        status="The status of the order.", order_ref="The URI to the order.",
        secret_ref="The URI to the created secret.",
        container_ref="The URI to the created container.",
        public_key="The payload of the created public key, if available.",
        private_key="The payload of the created private key, if available.",
        certificate="The payload of the created certificate, if available.",
        intermediates="The payload of the created intermediates, if available.")

    def attribute_value(self, found, name):
        if name in ("public_key", "private_key", "certificate", "intermediates"):
            container = found.get("container_ref")
            if not container:
                return None
            refs = {r.get("name"): r.get("secret_ref") for r in (_cloud_call(
                self.cloud.object_get, "secret_container", container) or {}).get(
                "secret_refs") or []}
            payload = self._payload(refs.get(name))
            return _text(payload)
        return super().attribute_value(found, name)


class ContainerResource(BarbicanResource):
    kind = "secret_container"
    container_type = "generic"
    # property -> the secret's name in the container
    ref_names = {}
    attributes_schema = attributes(
        status="The status of the container.", container_ref="The URI to the container.",
        secret_refs="The URIs to secrets in the container.",
        consumers="The URIs to container consumers.")

    def cloud_fields(self, props, names=None):
        refs = [{"name": secret, "secret_ref": props[prop_name]}
                for prop_name, secret in self.ref_names.items() if props.get(prop_name)]
        return {"type": self.container_type, "secret_refs": refs}

    def attribute_value(self, found, name):
        if name == "secret_refs":
            return {r.get("name"): r.get("secret_ref") for r in found.get("secret_refs") or []}
        return super().attribute_value(found, name)


def _ref(description):
    return prop("String", description)


@register
class GenericContainer(ContainerResource):
    """A Barbican container of any secrets, each under a name."""

    type_name = "OS::Barbican::GenericContainer"
    properties_schema = {
        "name": prop("String", "Human-readable name for the container."),
        "secrets": Property("List", description="References to secrets that will be stored "
                            "in container.", schema=Property("Map", schema={
                                "name": prop("String", "Name of the secret.", required=True),
                                "ref": prop("String", "Reference to the secret.",
                                            required=True)})),
    }

    def cloud_fields(self, props, names=None):
        return {"type": "generic", "secret_refs": [
            {"name": s["name"], "secret_ref": s["ref"]} for s in props.get("secrets") or []]}


@register
class CertificateContainer(ContainerResource):
    """A Barbican certificate container: a certificate, its key, passphrase, intermediates."""

    type_name = "OS::Barbican::CertificateContainer"
    container_type = "certificate"
    ref_names = {"certificate_ref": "certificate", "private_key_ref": "private_key",
                 "private_key_passphrase_ref": "private_key_passphrase",
                 "intermediates_ref": "intermediates"}
    properties_schema = {
        "name": prop("String", "Human-readable name for the container."),
        "certificate_ref": _ref("Reference to certificate."),
        "private_key_ref": _ref("Reference to private key."),
        "private_key_passphrase_ref": _ref("Reference to private key passphrase."),
        "intermediates_ref": _ref("Reference to intermediates."),
    }


@register
class RSAContainer(ContainerResource):
    """A Barbican RSA container: a private key, its passphrase and the public key."""

    type_name = "OS::Barbican::RSAContainer"
    container_type = "rsa"
    ref_names = {"private_key_ref": "private_key",
                 "private_key_passphrase_ref": "private_key_passphrase",
                 "public_key_ref": "public_key"}
    properties_schema = {
        "name": prop("String", "Human-readable name for the container."),
        "private_key_ref": _ref("Reference to private key."),
        "private_key_passphrase_ref": _ref("Reference to private key passphrase."),
        "public_key_ref": _ref("Reference to public key."),
    }
