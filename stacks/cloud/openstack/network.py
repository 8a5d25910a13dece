"""Neutron on a real cloud: the kinds that are more than one sdk resource's CRUD.

A security group's ``rules`` replace its rules; a trunk's sub-ports are
added and removed by Neutron's own calls; a router's extra routes change
atomically where Neutron can (``extraroute-atomic``); a router interface is
the router's ``add_router_interface`` (its id: the interface's port; Heat's id,
``<router>:subnet_id=<subnet>``, of a stack imported from Heat, is read too); a
floating IP association is the floating IP's ``port_id``.
"""
from stacks.cloud.driver import CloudNotFound
from stacks.cloud.openstack.calls import call, gone

ROUTER_INTERFACE = "network:router_interface"


class NetworkCalls:
    """Mixin of ``OpenStackCloud``: Neutron's ``_os_<verb>_<kind>`` methods for
    ``ObjectCalls``, and the routes of a router."""

    # Security groups: their rules ---------------------------------------------------------

    def _os_create_security_group(self, *, name, fields, creation_key, find_first):
        rules = fields.pop("rules", None)
        group_id = self._generic_create("security_group", name=name, fields=fields,
                                        creation_key=creation_key, find_first=find_first)
        if rules:
            self._create_rules(group_id, rules)
        return group_id

    def _create_rules(self, group_id, rules):
        """Heat's create: Neutron's default egress rules go only when ``rules`` has an egress
        rule of its own; the rules in one request."""
        wanted = [_rule(group_id, rule) for rule in rules]
        if any(rule["direction"] == "egress" for rule in wanted):
            self._delete_rules(group_id, lambda rule: rule["direction"] == "egress")
        list(call(self.conn.network.create_security_group_rules, wanted))

    def _delete_rules(self, group_id, which):
        for rule in call(self.conn.network.get_security_group, group_id).security_group_rules or []:
            if which(rule):
                gone(self.conn.network.delete_security_group_rule, rule["id"],
                     ignore_missing=True)

    def _os_update_security_group(self, object_id, fields):
        rules = fields.pop("rules", None)
        if fields:
            call(self.conn.network.update_security_group, object_id, **fields)
        if rules is not None:
            self._update_rules(object_id, rules)

    def _update_rules(self, group_id, rules):
        """Heat's update: the group's rules become ``rules``, with Neutron's default egress
        rules when ``rules`` has no egress rule; rules already there stay."""
        wanted = [_rule(group_id, rule) for rule in rules]
        if not any(rule["direction"] == "egress" for rule in wanted):
            wanted += [_rule(group_id, rule) for rule in DEFAULT_EGRESS_RULES]
        keys = {_rule_key(rule) for rule in wanted}
        current = call(self.conn.network.get_security_group, group_id).security_group_rules or []
        have = {_rule_key(rule) for rule in current}
        for rule in current:
            if _rule_key(rule) not in keys:
                gone(self.conn.network.delete_security_group_rule, rule["id"],
                     ignore_missing=True)
        missing = [rule for rule in wanted if _rule_key(rule) not in have]
        if missing:
            list(call(self.conn.network.create_security_group_rules, missing))

    def _os_update_trunk(self, trunk_id, fields):
        """Sub-ports are added and removed by Neutron's own calls, not a PUT; one whose
        segmentation changed is removed, then added again (as Heat)."""
        if "sub_ports" in fields:
            net = self.conn.network
            wanted = {sub["port_id"]: sub for sub in fields.pop("sub_ports") or []}
            current = {sub["port_id"]: sub for sub in
                       call(net.get_trunk, trunk_id).sub_ports or []}

            def same(port_id):
                return port_id in wanted and port_id in current and all(
                    str(wanted[port_id].get(key)) == str(current[port_id].get(key))
                    for key in ("segmentation_type", "segmentation_id"))

            removed = [{"port_id": p} for p in current if not same(p)]
            if removed:
                call(net.delete_trunk_subports, trunk_id, removed)
            added = [sub for p, sub in wanted.items() if not same(p)]
            if added:
                call(net.add_trunk_subports, trunk_id, added)
        if fields:
            self._generic_update("trunk", trunk_id, fields)

    # Routers' extra routes --------------------------------------------------------------------

    def router_routes_change(self, router_id, *, add=(), remove=()):
        """With ``extraroute-atomic``, Neutron's own add and remove calls (as Heat's
        ExtraRouteSet): a route another resource adds to the router meanwhile is kept."""
        if not self.has_network_extension("extraroute-atomic"):
            return super().router_routes_change(router_id, add=add, remove=remove)
        net = self.conn.network
        if remove:
            call(net.remove_extra_routes_from_router, router_id,
                  body={"router": {"routes": list(remove)}})
        if add:
            call(net.add_extra_routes_to_router, router_id, body={"router": {"routes": list(add)}})
        return None

    # Router interfaces and floating IP associations ------------------------------------------

    def _os_create_router_interface(self, *, name, fields, creation_key, find_first):
        answer = call(self.conn.network.add_interface_to_router, fields["router_id"],
                       subnet=fields.get("subnet_id"), port=fields.get("port_id"))
        return answer["port_id"]

    def _heat_interface_port(self, object_id):
        """The port of a router interface Heat made, by Heat's physical id:
        ``<router>:subnet_id=<subnet>`` or ``<router>:port_id=<port>`` (a stack
        imported from Heat keeps it); None when the router has no such interface.
        Any other id is heatweb's own: the interface's port."""
        router_id, sep, rest = str(object_id).partition(":")
        key, _, value = rest.partition("=")
        if not sep or key not in ("subnet_id", "port_id"):
            return object_id
        if key == "port_id":
            return value
        for port in self.conn.network.ports(device_id=router_id):
            if (port.device_owner or "").startswith(ROUTER_INTERFACE) and \
                    any(ip.get("subnet_id") == value for ip in port.fixed_ips or []):
                return port.id
        return None

    def _os_get_router_interface(self, port_id):
        port_id = self._heat_interface_port(port_id)
        if port_id is None:
            return None
        port = gone(self.conn.network.get_port, port_id)
        if port is None or not (port.device_owner or "").startswith(ROUTER_INTERFACE):
            return None
        ips = port.fixed_ips or []
        return {"id": port.id, "port_id": port.id, "router_id": port.device_id,
                "subnet_id": ips[0]["subnet_id"] if ips else None}

    def _os_delete_router_interface(self, port_id):
        interface = self._os_get_router_interface(port_id)
        if interface is not None:
            try:
                call(self.conn.network.remove_interface_from_router, interface["router_id"],
                      port=interface["port_id"])
            except CloudNotFound:
                pass

    def _os_create_floating_ip_association(self, *, name, fields, creation_key, find_first):
        call(self.conn.network.update_ip, fields["floatingip_id"], port_id=fields["port_id"],
              **({"fixed_ip_address": fields["fixed_ip_address"]}
                 if fields.get("fixed_ip_address") else {}))
        return fields["floatingip_id"]

    def _os_get_floating_ip_association(self, fip_id):
        fip = gone(self.conn.network.get_ip, fip_id)
        if fip is None or not fip.port_id:
            return None
        return {"id": fip.id, "floatingip_id": fip.id, "port_id": fip.port_id,
                "fixed_ip_address": fip.fixed_ip_address}

    def _os_update_floating_ip_association(self, fip_id, fields):
        call(self.conn.network.update_ip, fip_id, **fields)

    def _os_delete_floating_ip_association(self, fip_id):
        if gone(self.conn.network.get_ip, fip_id) is not None:
            call(self.conn.network.update_ip, fip_id, port_id=None)


# Neutron gives a new group these; Heat keeps them unless the template has an egress rule.
DEFAULT_EGRESS_RULES = ({"direction": "egress", "ethertype": "IPv4"},
                        {"direction": "egress", "ethertype": "IPv6"})
RULE_KEYS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max",
             "remote_group_id", "remote_ip_prefix")


def _rule(group_id, rule):
    """A template's rule as Neutron takes it (Heat's defaults: ingress, IPv4). Its
    ``remote_mode`` as Heat's: ``remote_group_id`` without a group names the group itself
    (a rule for its own members), ``remote_ip_prefix`` drops a group."""
    rule = {key: value for key, value in rule.items() if value is not None}
    mode = rule.pop("remote_mode", None)
    if mode == "remote_group_id":
        rule.pop("remote_ip_prefix", None)
        rule.setdefault("remote_group_id", group_id)
    elif mode == "remote_ip_prefix":
        rule.pop("remote_group_id", None)
    return {"direction": "ingress", "ethertype": "IPv4", **rule, "security_group_id": group_id}


def _rule_key(rule):
    """What makes two rules the same (Heat's ``_rule_key``)."""
    return tuple(None if rule.get(key) is None else str(rule.get(key)) for key in RULE_KEYS)
