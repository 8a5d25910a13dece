"""What Octavia's kinds do in the simulated cloud beyond storing their fields.

Like Octavia with its noop drivers: every object is ACTIVE at once (operating
status ONLINE here; the real noop cloud leaves it OFFLINE); a load balancer
gets a VIP port on its subnet (or takes the ``vip_port_id`` given), a real
Neutron port named ``octavia-lb-<id>`` that goes when the load balancer is
deleted, as Octavia makes and deletes it; a listener, pool, member, monitor or L7
policy needs its parent; an object with children cannot be deleted (Octavia
answers 409 unless cascading); a port is used by one listener of a load
balancer only; a pool has one health monitor.
"""
import uuid

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated.objects import live

VIP_OWNER = "Octavia"
ACTIVE = {"provisioning_status": "ACTIVE", "operating_status": "ONLINE",
          "admin_state_up": True}
CHILDREN = {"loadbalancer": (("listener", "loadbalancer_id"), ("pool", "loadbalancer_id")),
            "listener": (("l7policy", "listener_id"),),
            "pool": (("member", "pool_id"), ("health_monitor", "pool_id")),
            "l7policy": (("l7rule", "l7policy_id"),)}


def _with_children(kind, row):
    for child, field in CHILDREN.get(kind, ()):
        if live(child, **{f"fields__{field}": row.pk}).exists():
            return (f"Cannot delete {kind.replace('_', ' ')} {row.pk} - it has children "
                    f"(HTTP 409)")
    return None


class SimulatedOctavia:
    """Mixin of ``SimulatedCloud``: the Octavia kinds' hooks."""

    def _complete_loadbalancer(self, fields, project_id):
        lb_id = str(uuid.uuid4())
        if fields.get("vip_port_id"):
            port = self._resolve("port", fields["vip_port_id"])
        else:
            port = self._vip_port(lb_id, fields, project_id)
        ips = port.fields.get("fixed_ips") or []
        return {**ACTIVE, "provider": "amphora", "description": "", **fields, "id": lb_id,
                "vip_port_id": port.pk, "vip_network_id": port.fields.get("network_id"),
                "vip_subnet_id": ips[0]["subnet_id"] if ips else None,
                "vip_address": ips[0]["ip_address"] if ips else None}

    def _vip_port(self, lb_id, fields, project_id):
        """Octavia's VIP port: on the VIP subnet (or network), with the address asked for."""
        if fields.get("vip_subnet_id"):
            subnet = self._resolve("subnet", fields["vip_subnet_id"])
            network_id = subnet.fields["network_id"]
            wanted = [{"subnet_id": subnet.pk, "ip_address": fields.get("vip_address")}]
        elif fields.get("vip_network_id"):
            network_id = self._resolve("network", fields["vip_network_id"]).pk
            wanted = [{"ip_address": fields.get("vip_address")}]
        else:
            raise CloudError("Validation failure: VIP must contain one of: vip_port_id, "
                             "vip_network_id, vip_subnet_id. (HTTP 400)")
        return self._new_port(project_id, name=f"octavia-lb-{lb_id}", network_id=network_id,
                              device_owner=VIP_OWNER, device_id=f"lb-{lb_id}",
                              fixed_ips=[{k: v for k, v in ip.items() if v} for ip in wanted])

    def _deleted_loadbalancer(self, row):
        port = live("port", pk=row.fields.get("vip_port_id") or "").first()
        if port is not None and port.fields.get("device_id") == f"lb-{row.pk}":
            self.sim_row_delete(port)

    def _describe_loadbalancer(self, row, out):
        out["listeners"] = [{"id": r.pk} for r in live("listener", fields__loadbalancer_id=row.pk)]
        out["pools"] = [{"id": r.pk} for r in live("pool", fields__loadbalancer_id=row.pk)]

    def _complete_listener(self, fields, project_id):
        lb = self._resolve("loadbalancer", fields.get("loadbalancer_id", ""))
        port = fields.get("protocol_port")
        if live("listener", fields__loadbalancer_id=lb.pk, fields__protocol_port=port).exists():
            raise CloudError(f"Another Listener on this Load Balancer is already using "
                             f"protocol_port {port} (HTTP 409)")
        return {**ACTIVE, "connection_limit": -1, **fields, "loadbalancer_id": lb.pk}

    def _complete_pool(self, fields, project_id):
        lb_id = fields.get("loadbalancer_id")
        if fields.get("listener_id"):
            listener = self._resolve("listener", fields["listener_id"])
            lb_id = listener.fields["loadbalancer_id"]
        if not lb_id:
            raise CloudError("Validation failure: Either loadbalancer_id or listener_id must "
                             "be specified. (HTTP 400)")
        self._resolve("loadbalancer", lb_id)
        return {**ACTIVE, "session_persistence": None, **fields, "loadbalancer_id": lb_id}

    def _describe_pool(self, row, out):
        out["members"] = [{"id": r.pk} for r in live("member", fields__pool_id=row.pk)]
        monitor = live("health_monitor", fields__pool_id=row.pk).first()
        out["healthmonitor_id"] = monitor.pk if monitor else None

    def _complete_member(self, fields, project_id):
        pool = self._resolve("pool", fields.get("pool_id", ""))
        return {**ACTIVE, "weight": 1, "backup": False, **fields, "pool_id": pool.pk,
                "id": f"{pool.pk}/{uuid.uuid4()}"}

    def _complete_health_monitor(self, fields, project_id):
        pool = self._resolve("pool", fields.get("pool_id", ""))
        if live("health_monitor", fields__pool_id=pool.pk).exists():
            raise CloudError(f"Validation failure: Pool {pool.pk} already has a health "
                             f"monitor. (HTTP 409)")
        return {**ACTIVE, "max_retries_down": 3, **fields, "pool_id": pool.pk}

    def _complete_l7policy(self, fields, project_id):
        listener = self._resolve("listener", fields.get("listener_id", ""))
        return {**ACTIVE, "position": 1, **fields, "listener_id": listener.pk}

    def _complete_l7rule(self, fields, project_id):
        policy = self._resolve("l7policy", fields.get("l7policy_id", ""))
        return {**ACTIVE, "invert": False, **fields, "l7policy_id": policy.pk,
                "id": f"{policy.pk}/{uuid.uuid4()}"}

    def _in_use_loadbalancer(self, row):
        return _with_children("loadbalancer", row)

    def _in_use_listener(self, row):
        return _with_children("listener", row)

    def _in_use_pool(self, row):
        return _with_children("pool", row)

    def _in_use_l7policy(self, row):
        return _with_children("l7policy", row)
