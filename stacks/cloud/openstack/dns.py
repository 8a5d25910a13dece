"""Designate on a real cloud: zones and recordsets, through the ``dns`` proxy's REST calls.

A zone is ``POST /zones`` (what is given and not empty, as Heat sends it), read by
``GET /zones/{id}``, changed by ``PATCH`` and removed by ``DELETE``, which answers
at once while Designate deletes it (the zone reads ``PENDING``/``DELETE`` until it is
gone). A recordset's physical id is its own id, as Heat's: it is read through
``GET /recordsets/{id}``, which Designate answers with a redirect to its zone's
recordset (the session follows it), and changed or deleted in its zone. A relative
recordset name (``www``) is made absolute in its zone, as python-designateclient
(Heat's client) does. Designate's refusals carry its ``message`` and the HTTP status.
"""
from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.openstack.calls import call

# What Designate answers about an object but takes in no body.
READ_ONLY = ("id", "status", "action", "serial", "version", "created_at", "updated_at",
             "links", "pool_id", "project_id", "zone_id", "zone_name", "transferred_at",
             "shared")


def _refusal(response):
    """Designate's words for a failed call (its ``message``), with the HTTP status."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    text = (body.get("message") if isinstance(body, dict) else None) or response.text or ""
    text = f"{text.strip()} (HTTP {response.status_code})"
    return CloudNotFound(text) if response.status_code == 404 else CloudError(text)


def _checked(response):
    if response.status_code >= 400:
        raise _refusal(response)
    return response


def _body(fields):
    """Heat's way: what is given and not empty (``masters: []`` is not sent)."""
    return {k: v for k, v in fields.items() if v not in (None, "", [], {})
            and k not in READ_ONLY}


class DnsCalls:
    """Mixin of ``OpenStackCloud``: Designate's ``_os_<verb>_dns_zone`` and
    ``_os_<verb>_dns_recordset`` methods."""

    def _dns_read(self, path):
        response = call(self.conn.dns.get, path)
        if response.status_code == 404:
            return None
        return _checked(response).json()

    # Zones --------------------------------------------------------------------------

    def _os_create_dns_zone(self, *, name, fields, creation_key, find_first):
        body = _body({**fields, "name": name})
        return _checked(call(self.conn.dns.post, "/zones", json=body)).json()["id"]

    def _os_get_dns_zone(self, object_id):
        return self._dns_read(f"/zones/{object_id}")

    def _os_update_dns_zone(self, object_id, fields):
        body = {k: v for k, v in fields.items() if k not in READ_ONLY}
        if body:
            _checked(call(self.conn.dns.patch, f"/zones/{object_id}", json=body))

    def _os_delete_dns_zone(self, object_id):
        response = call(self.conn.dns.delete, f"/zones/{object_id}")
        if response.status_code != 404:
            _checked(response)
        return response.status_code == 404  # else gone once Designate's worker is done

    # Recordsets ----------------------------------------------------------------------

    def _os_create_dns_recordset(self, *, name, fields, creation_key, find_first):
        zone_id = fields.get("zone_id")
        zone = self._os_get_dns_zone(zone_id) if zone_id else None
        if zone is None:
            raise CloudNotFound(f"Could not find Zone {zone_id} (HTTP 404)")
        if name and not name.endswith("."):
            name = f"{name}.{zone['name']}"
        body = _body({**fields, "name": name})
        made = _checked(call(self.conn.dns.post, f"/zones/{zone['id']}/recordsets",
                             json=body)).json()
        return made["id"]

    def _os_get_dns_recordset(self, object_id):
        return self._dns_read(f"/recordsets/{object_id}")

    def _recordset_path(self, object_id):
        found = self._os_get_dns_recordset(object_id)
        if found is None:
            raise CloudNotFound(f"Could not find RecordSet {object_id} (HTTP 404)")
        return f"/zones/{found['zone_id']}/recordsets/{object_id}"

    def _os_update_dns_recordset(self, object_id, fields):
        body = {k: v for k, v in fields.items() if k not in READ_ONLY and k != "name"}
        if body:
            _checked(call(self.conn.dns.put, self._recordset_path(object_id), json=body))

    def _os_delete_dns_recordset(self, object_id):
        try:
            path = self._recordset_path(object_id)
        except CloudNotFound:
            return True
        response = call(self.conn.dns.delete, path)
        if response.status_code != 404:
            _checked(response)
        return response.status_code == 404
