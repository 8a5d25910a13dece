"""Neutron objects (networks, subnets, ports, security groups) of the OpenStack driver.

Requests go straight to Neutron's REST API through openstacksdk's network
adapter, so the fields are Neutron's own names (``network_id``,
``fixed_ips``, ``admin_state_up`` ...), the same ones the simulated cloud
keeps. A security group's ``rules`` become security group rules.
"""
import uuid

from openstack import exceptions as os_exceptions

from stacks.cloud.driver import NETWORK_KINDS, CloudError, CloudNotFound

TAG_PREFIX = "heatweb-key:"
_COLLECTIONS = {"network": "networks", "subnet": "subnets", "port": "ports",
                "security_group": "security-groups"}


class NetworkCalls:
    """Mixin of ``OpenStackCloud``: the ``network_object_*`` methods."""

    def _rest(self, method, url, **kwargs):
        from stacks.cloud.openstack import call  # cycle: stacks.cloud.openstack imports this module

        def request():
            response = self.conn.network.request(url, method, **kwargs)
            os_exceptions.raise_from_response(response)
            return response.json() if response.content else None

        request.__name__ = f"{method} {url}"
        return call(request)

    @staticmethod
    def _kind(kind):
        if kind not in NETWORK_KINDS:
            raise CloudError(f"Unknown network object kind {kind}")
        return _COLLECTIONS[kind]

    def _find_by_key(self, kind, creation_key):
        tag = f"{TAG_PREFIX}{creation_key}"
        found = self._rest("GET", f"/{self._kind(kind)}", params={"tags": tag})
        items = found[self._kind(kind).replace("-", "_")]
        return items[0]["id"] if items else None

    def _id_of(self, kind, name_or_id):
        """The id of the ``kind`` named (or with id) ``name_or_id``: Heat takes either."""
        try:
            uuid.UUID(str(name_or_id))
            return name_or_id
        except ValueError:
            pass
        items = self._rest("GET", f"/{self._kind(kind)}", params={"name": name_or_id})[
            self._kind(kind).replace("-", "_")]
        if len(items) != 1:
            raise (CloudNotFound if not items else CloudError)(
                f"{'No' if not items else 'More than one'} {kind.replace('_', ' ')} "
                f"named {name_or_id} (HTTP {404 if not items else 409})")
        return items[0]["id"]

    def _resolved(self, kind, fields):
        """Names in a subnet's or port's references turned into ids, as Neutron wants them."""
        if kind in ("subnet", "port") and fields.get("network_id"):
            fields["network_id"] = self._id_of("network", fields["network_id"])
        if kind == "port":
            if fields.get("fixed_ips"):
                fields["fixed_ips"] = [
                    {**ip, **({"subnet_id": self._id_of("subnet", ip["subnet_id"])}
                              if ip.get("subnet_id") else {})} for ip in fields["fixed_ips"]]
            if fields.get("security_groups"):
                fields["security_groups"] = [self._id_of("security_group", group)
                                             for group in fields["security_groups"]]
        return fields

    def network_object_create(self, kind, *, project_id, name, creation_key=None,
                              find_first=True, **fields):
        collection = self._kind(kind)
        if creation_key and find_first:
            existing = self._find_by_key(kind, creation_key)
            if existing:
                return existing
        rules = fields.pop("rules", None)
        body = self._resolved(kind, {k: v for k, v in fields.items() if v is not None})
        created = self._rest("POST", f"/{collection}", json={kind: {"name": name, **body}})[kind]
        if creation_key:  # this Neutron takes no tags in a POST: tag right after
            self._rest("PUT", f"/{collection}/{created['id']}/tags/{TAG_PREFIX}{creation_key}")
        if kind == "security_group" and rules is not None:
            self._replace_rules(created, rules)
        return created["id"]

    def _replace_rules(self, group, rules):
        """Heat's way: the group's rules become exactly ``rules`` (egress defaults too)."""
        for rule in group.get("security_group_rules") or []:
            self._rest("DELETE", f"/security-group-rules/{rule['id']}")
        for rule in rules:
            body = {"security_group_id": group["id"], "direction": "ingress",
                    "ethertype": "IPv4", **{k: v for k, v in rule.items() if v is not None}}
            self._rest("POST", "/security-group-rules", json={"security_group_rule": body})

    def network_object_get(self, kind, object_id):
        collection = self._kind(kind)
        try:
            return self._rest("GET", f"/{collection}/{object_id}")[kind]
        except CloudNotFound:
            return None

    def network_object_update(self, kind, object_id, **fields):
        collection = self._kind(kind)
        rules = fields.pop("rules", None)
        if fields:
            self._rest("PUT", f"/{collection}/{object_id}",
                       json={kind: self._resolved(kind, fields)})
        if kind == "security_group" and rules is not None:
            self._replace_rules(self.network_object_get(kind, object_id) or {}, rules)

    def network_object_delete(self, kind, object_id):
        try:
            self._rest("DELETE", f"/{self._kind(kind)}/{object_id}")
        except CloudNotFound:
            return  # gone already: deleting is done
