"""Neutron objects of the simulated cloud: networks, subnets, ports, security groups.

Rows of ``SimNetworkObject`` hold Neutron's own fields. Like Neutron, a
subnet needs its network, a port gets a fixed IP from its network's first
subnet (or the one it asks for), and an object in use (a network with
subnets or ports, a subnet with ports) cannot be deleted.
"""
import ipaddress
import uuid

from django.utils import timezone

from stacks.cloud.driver import NETWORK_KINDS, CloudError, CloudNotFound
from stacks.cloud.models import SimNetworkObject

_IN_USE = {"network": (("subnet", "network_id"), ("port", "network_id")),
           "subnet": (("port", "fixed_ips"),)}


def _live(**filters):
    return SimNetworkObject.objects.filter(deleted_at__isnull=True, **filters)


class SimulatedNetworks:
    """Mixin of ``SimulatedCloud``: the ``network_object_*`` methods."""

    def _network_row(self, kind, object_id):
        row = _live(kind=kind, pk=object_id).first()
        if row is None:
            raise CloudNotFound(f"{kind.replace('_', ' ').title()} {object_id} could not be "
                                f"found. (HTTP 404)")
        return row

    def _resolve(self, kind, name_or_id):
        row = _live(kind=kind, pk=name_or_id).first() or \
            _live(kind=kind, name=name_or_id).order_by("created_at").first()
        if row is None:
            raise CloudNotFound(f"No {kind} found for {name_or_id} (HTTP 404)")
        return row

    def _port_ips(self, network_id, fixed_ips):
        subnets = list(_live(kind="subnet", fields__network_id=network_id).order_by("created_at"))
        out = []
        for wanted in fixed_ips or [{}]:
            subnet = next((s for s in subnets if s.pk == wanted.get("subnet_id")),
                          subnets[0] if subnets else None)
            if subnet is None:
                continue
            address = wanted.get("ip_address") or self._next_address(subnet)
            out.append({"subnet_id": subnet.pk, "ip_address": address})
        return out

    @staticmethod
    def _next_address(subnet):
        used = {ip["ip_address"] for port in _live(kind="port")
                for ip in port.fields.get("fixed_ips", []) if ip["subnet_id"] == subnet.pk}
        for host in list(ipaddress.ip_network(subnet.fields["cidr"]).hosts())[1:]:
            if str(host) not in used:
                return str(host)
        raise CloudError(f"No more IP addresses available on subnet {subnet.pk} (HTTP 409)")

    def _complete(self, kind, row_fields, project_id):
        fields = {"tenant_id": project_id, "project_id": project_id, "status": "ACTIVE",
                  "admin_state_up": True, **row_fields}
        if kind == "subnet":
            network = self._resolve("network", fields.get("network_id", ""))
            net = ipaddress.ip_network(fields.get("cidr", ""), strict=False)
            fields.update(network_id=network.pk, cidr=str(net), ip_version=net.version)
            fields.setdefault("gateway_ip", str(next(net.hosts())))
            fields.setdefault("enable_dhcp", True)
        elif kind == "port":
            network = self._resolve("network", fields.get("network_id", ""))
            fields["network_id"] = network.pk
            fields["fixed_ips"] = self._port_ips(network.pk, fields.get("fixed_ips"))
            fields.setdefault("mac_address", "fa:16:3e:" + ":".join(
                uuid.uuid4().hex[i:i + 2] for i in (0, 2, 4)))
            if fields.get("security_groups"):
                fields["security_groups"] = self._group_ids(fields["security_groups"],
                                                            project_id)
        elif kind == "security_group":
            fields["security_group_rules"] = fields.pop("rules", None) or []
        return fields

    def _group_ids(self, groups, project_id):
        """Security group names or ids as ids; a project's ``default`` group is made on first
        use, as Neutron makes it."""
        ids = []
        for group in groups:
            row = _live(kind="security_group", pk=group).first() or _live(
                kind="security_group", name=group, project_id=project_id).first()
            if row is None and group == "default":
                row = SimNetworkObject.objects.create(
                    kind="security_group", project_id=project_id, name="default",
                    id=str(uuid.uuid4()), fields=self._complete("security_group", {
                        "description": "Default security group"}, project_id))
            if row is None:
                raise CloudNotFound(f"Security group {group} could not be found. (HTTP 404)")
            ids.append(row.pk)
        return ids

    def network_object_create(self, kind, *, project_id, name, creation_key=None,
                              find_first=True, **fields):
        if kind not in NETWORK_KINDS:
            raise CloudError(f"Unknown network object kind {kind}")
        self._fault(f"{kind}_create", project_id)
        if creation_key and find_first:
            found = _live(kind=kind, creation_key=creation_key).first()
            if found is not None:
                return found.pk
        values = self._complete(kind, {k: v for k, v in fields.items() if v is not None},
                                project_id)
        row = SimNetworkObject.objects.create(kind=kind, project_id=project_id, name=name or "",
                                              fields=values, creation_key=creation_key or "",
                                              id=str(uuid.uuid4()))
        return row.pk

    def network_object_get(self, kind, object_id):
        row = _live(kind=kind, pk=object_id).first()
        if row is None:
            return None
        subnets = [s.pk for s in _live(kind="subnet", fields__network_id=row.pk)] \
            if kind == "network" else None
        return {**row.fields, "id": row.pk, "name": row.name,
                **({"subnets": subnets} if subnets is not None else {})}

    def network_object_update(self, kind, object_id, **fields):
        row = self._network_row(kind, object_id)
        self._fault(f"{kind}_update", row.project_id)
        if "rules" in fields:
            fields["security_group_rules"] = fields.pop("rules") or []
        name = fields.pop("name", row.name)
        if kind == "port" and fields.get("security_groups"):
            fields["security_groups"] = self._group_ids(fields["security_groups"], row.project_id)
        SimNetworkObject.objects.filter(pk=row.pk).update(name=name or "",
                                                          fields={**row.fields, **fields})

    def network_object_delete(self, kind, object_id):
        row = _live(kind=kind, pk=object_id).first()
        if row is None:
            return  # gone already: deleting is done
        self._fault(f"{kind}_delete", row.project_id)
        for other_kind, field in _IN_USE.get(kind, ()):
            for other in _live(kind=other_kind):
                value = other.fields.get(field)
                used = value == row.pk if isinstance(value, str) else \
                    any(ip.get("subnet_id") == row.pk for ip in value or [])
                if used:
                    raise CloudError(f"Unable to complete operation on {kind} {row.pk}: one or "
                                     f"more {other_kind}s are in use on it. (HTTP 409)")
        SimNetworkObject.objects.filter(pk=row.pk).update(deleted_at=timezone.now())

    def port_address(self, port_id):
        """(network name, first fixed IP) of a simulated port, for its server's addresses."""
        port = self._resolve("port", port_id)
        network = _live(kind="network", pk=port.fields.get("network_id")).first()
        ips = port.fields.get("fixed_ips") or []
        return (network.name if network else "private"), (ips[0]["ip_address"] if ips else None)
