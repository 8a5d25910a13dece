"""Designate's types as Heat 27 has them: ``OS::Designate::Zone`` and ``RecordSet``
(its v1 ``Domain`` and ``Record`` are Heat 27's hidden placeholders, ``unavailable``).

Each is one object of the ``dns`` service: a ``dns_zone`` or a ``dns_recordset`` (in
its zone), with Heat's properties, attributes and update-or-replace rules. A zone's
``primaries`` is Designate's ``masters`` (Heat's translation); a recordset given no
name is named after the stack and the resource, in its zone, as Heat names it. On a
cloud whose catalog has no ``dns`` service, validation answers Heat's
ResourceTypeUnavailable. As Heat, a create or update waits until Designate's status of
the object is no longer PENDING (ERROR fails it: ``Went to status ERROR due to "Error
in zone"``), and an update sends only the changed properties that are given (one
removed from the template is left as it is in Designate). The simulated cloud keeps
them as generic objects, as strict as Designate's API and ACTIVE at once
(``stacks/cloud/simulated/dns.py``); the OpenStack driver calls Designate's v2 API
(``stacks/cloud/openstack/dns.py``).
"""
from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import ResourceFailure
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Length, Range

DESIGNATE = ("designate", "dns")
TTL = (Range(1, 2147483647),)
DESCRIPTION = (Length(None, 160),)
NAME = (Length(None, 255),)
RECORD_TYPES = ("A", "AAAA", "CNAME", "MX", "SRV", "TXT", "SPF", "NS", "PTR", "SSHFP",
                "SOA", "CAA", "CERT", "NAPTR")


class DesignateResource(CloudObjectResource):
    """What Heat's two Designate types share: waiting for the status, Heat's updates."""

    required_service = DESIGNATE
    error_label = ""

    def _status_complete(self):
        status = self.existing().get("status")
        if status == "ERROR":
            raise ResourceFailure(f'Went to status ERROR due to "Error in {self.error_label}"')
        return status != "PENDING"

    def check_create_complete(self, cookie):
        return self._status_complete()

    def handle_update(self, new_properties, changed):
        # Heat's handle_update: only the changed properties with a value are sent.
        super().handle_update(new_properties, {k for k in changed if new_properties.get(k)})

    def check_update_complete(self, cookie):
        return self._status_complete()


@register
class DesignateZone(DesignateResource):
    """A DNS zone (``name``: fully qualified, ending in a dot). ``email``, ``ttl``,
    ``description`` and the primaries update in place; a new name or type replaces it.
    Attribute ``serial``: the zone's serial number."""

    type_name = "OS::Designate::Zone"
    kind = "dns_zone"
    error_label = "zone"
    properties_schema = {
        "name": prop("String", "DNS Name for the zone.", required=True, constraints=NAME),
        "ttl": prop("Integer", "Time To Live (Seconds) for the zone.", update_allowed=True,
                    constraints=TTL),
        "description": prop("String", "Description of zone.", update_allowed=True,
                            constraints=DESCRIPTION),
        "email": prop("String", "E-mail for the zone. Used in SOA records for the zone. It "
                                "is required for PRIMARY Type, otherwise ignored.",
                      update_allowed=True),
        "type": prop("String", "Type of zone. PRIMARY is controlled by Designate, SECONDARY "
                               "zones are transferred from another DNS Server.",
                     default="PRIMARY", constraints=(AllowedValues(("PRIMARY", "SECONDARY")),)),
        "masters": prop("List", "The primary servers to transfer DNS zone information from "
                                "(deprecated spelling of primaries).", update_allowed=True),
        "primaries": prop("List", "The primary servers to transfer DNS zone information "
                                  "from. Mandatory for zone type SECONDARY, otherwise "
                                  "ignored.", update_allowed=True),
        "attributes": prop("Map", "Key:Value pairs of information about this zone, and the "
                                  "pool the user would like to place the zone in."),
    }
    field_names = {"primaries": "masters"}
    attributes_schema = {
        "serial": Attribute("DNS zone serial number.", type="string"),
        "show": Attribute("Detailed information about resource.", type="map"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        for zone_type, needed, given in (("PRIMARY", "email", ("email",)),
                                         ("SECONDARY", "masters", ("masters", "primaries"))):
            if props.get("type") == zone_type and all(props.get(k) is None for k in given):
                raise StackValidationFailed(f"Property {needed} is required for zone type "
                                            f"{zone_type}")
        return props


@register
class DesignateRecordSet(DesignateResource):
    """A set of DNS records of one name and type in a zone (``zone``: its id or name).
    ``records``, ``ttl`` and ``description`` update in place; a new name, type or zone
    replaces it. A relative ``name`` (``www``) is taken as in its zone."""

    type_name = "OS::Designate::RecordSet"
    kind = "dns_recordset"
    error_label = "RecordSet"
    changes_objects = {"zone": "dns_zone"}
    properties_schema = {
        "name": prop("String", "RecordSet name.", constraints=NAME),
        "ttl": prop("Integer", "Time To Live (Seconds).", update_allowed=True,
                    constraints=TTL),
        "description": prop("String", "Description of RecordSet.", update_allowed=True,
                            constraints=DESCRIPTION),
        "type": prop("String", "DNS RecordSet type.", required=True,
                     constraints=(AllowedValues(RECORD_TYPES),)),
        "records": prop("List", "A list of data for this RecordSet. Each item will be a "
                                "separate record in Designate. These items should conform "
                                "to the DNS spec for the record type.", required=True,
                        update_allowed=True),
        "zone": prop("String", "DNS Zone id or name.", required=True),
    }
    field_names = {"zone": "zone_id"}
    attributes_schema = attributes()
