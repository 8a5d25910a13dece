"""What Octavia's kinds do in the simulated cloud beyond storing their fields.

Like Octavia with its noop drivers: every object is ACTIVE at once (operating
status ONLINE here; the real noop cloud leaves it OFFLINE); a load balancer
gets a VIP address from its subnet; a listener, pool, member, monitor or L7
policy needs its parent; an object with children cannot be deleted (Octavia
answers 409 unless cascading); a port is used by one listener of a load
balancer only; a pool has one health monitor.
"""
import uuid

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated.objects import live

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
        subnet = self._resolve("subnet", fields.get("vip_subnet_id", "")) \
            if fields.get("vip_subnet_id") else None
        address = fields.get("vip_address")
        if subnet is not None and not address:
            address = self._port_ips(subnet.fields["network_id"],
                                     [{"subnet_id": subnet.pk}])[0]["ip_address"]
        return {**ACTIVE, "provider": "amphora", "description": "", **fields,
                "vip_address": address, "vip_port_id": str(uuid.uuid4()),
                "vip_network_id": subnet.fields["network_id"] if subnet else
                fields.get("vip_network_id")}

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
