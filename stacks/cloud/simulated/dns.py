"""What Designate's kinds do in the simulated cloud beyond storing their fields.

Like Designate's v2 API: a zone's name is a fully qualified name (ending in a
dot) no other zone has; a PRIMARY zone has an email, an address whose domain has no
final dot (Designate's EmailField); its serial grows with each
change of it or its recordsets. A recordset's name given relative (``www``) is
made fully qualified in its zone (as python-designateclient does); one outside
its zone, a second of one name and type in a zone, or a CNAME beside another
recordset of its name, is refused; A and AAAA
records are addresses of their version. Deleting a zone deletes its recordsets.
Everything is ACTIVE at once (no DNS server behind it).
"""
import ipaddress
import re
import time

from django.db import transaction

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated.objects import live

ADDRESS_VERSIONS = {"A": 4, "AAAA": 6}
LABEL = re.compile(r"^(?!-)[A-Za-z0-9_*-]{1,63}(?<!-)$")


def _serial():
    return int(time.time())


def _check_records(record_type, records):
    version = ADDRESS_VERSIONS.get(record_type)
    for record in records or []:
        try:
            ok = version is None or ipaddress.ip_address(str(record)).version == version
        except ValueError:
            ok = False
        if not ok:
            raise CloudError(f"Invalid input for field/attribute records. Value: {records}. "
                             f"'{record}' is not a 'ipv{version}' (HTTP 400)")


def _check_email(email):
    """Designate's EmailField: one ``@``, and the address read as a domain is one."""
    if email is None:
        return
    if str(email).count("@") != 1:
        raise CloudError(f"Provided object is not valid. Got a ValueError error with message "
                         f"{email} is not an email (HTTP 400)")
    labels = str(email).replace("@", ".").split(".")
    if len(labels) < 2 or not all(LABEL.match(label) for label in labels):
        raise CloudError(f"Provided object is not valid. Got a ValueError error with message "
                         f"Email {email} is invalid (HTTP 400)")


class SimulatedDesignate:
    """Mixin of ``SimulatedCloud``: Designate's zone and recordset hooks (see ``objects``)."""

    def _complete_dns_zone(self, fields, project_id):
        name = fields.get("name") or ""
        if not name.endswith(".") or ".." in name or name == ".":
            raise CloudError(f"Invalid input for field/attribute name. Value: {name}. "
                             f"'{name}' is not a 'zonename' (HTTP 400)")
        zone_type = fields.get("type") or "PRIMARY"
        if zone_type == "PRIMARY" and not fields.get("email"):
            raise CloudError("Invalid input for field/attribute email. Value: None. "
                             "email is required for PRIMARY zones (HTTP 400)")
        _check_email(fields.get("email"))
        if live("dns_zone", name=name).exists():
            raise CloudError("Duplicate Zone (HTTP 409)")
        return {"ttl": 3600, "description": None, "masters": [], "attributes": {},
                **fields, "type": zone_type, "status": "ACTIVE", "action": "NONE",
                "serial": _serial(), "version": 1, "project_id": project_id}

    def _update_dns_zone(self, row, fields):
        _check_email(fields.get("email"))
        return {**fields, "serial": max(_serial(), row.fields.get("serial", 0) + 1),
                "version": row.fields.get("version", 1) + 1}

    def _deleted_dns_zone(self, row):
        for recordset in live("dns_recordset", fields__zone_id=row.pk):
            self.sim_row_delete(recordset)

    def _zone_changed(self, zone_id):
        zone = live("dns_zone", pk=zone_id).first()
        if zone is not None:
            self.object_update("dns_zone", zone.pk)

    def _create_dns_recordset(self, *, project_id, name, fields, creation_key):
        zone = self._object_row("dns_zone", fields.get("zone_id", ""))
        zone_name = zone.name
        name = name if name.endswith(".") else f"{name}.{zone_name}"
        if name != zone_name and not name.endswith(f".{zone_name}"):
            raise CloudError("RecordSet is not contained within it's parent zone (HTTP 400)")
        record_type = fields.get("type")
        _check_records(record_type, fields.get("records"))
        with transaction.atomic():
            if live("dns_recordset", name=name, fields__zone_id=zone.pk,
                    fields__type=record_type).exists():
                raise CloudError("Duplicate RecordSet (HTTP 409)")
            named = live("dns_recordset", name=name, fields__zone_id=zone.pk)
            if named.exists() and (record_type == "CNAME" or
                                   named.filter(fields__type="CNAME").exists()):
                raise CloudError("CNAME recordsets may not share a name with any other "
                                 "records (HTTP 400)")
            row = self.sim_row_create("dns_recordset", project_id=project_id, name=name,
                                      creation_key=creation_key, fields={
                                          "ttl": None, "description": None, **fields,
                                          "zone_id": zone.pk, "zone_name": zone_name,
                                          "status": "ACTIVE", "action": "NONE",
                                          "project_id": project_id})
            self._zone_changed(zone.pk)
        return row.pk

    def _update_dns_recordset(self, row, fields):
        if "records" in fields:
            _check_records(row.fields.get("type"), fields["records"])
        self._zone_changed(row.fields.get("zone_id"))
        return fields

    def _deleted_dns_recordset(self, row):
        self._zone_changed(row.fields.get("zone_id"))
