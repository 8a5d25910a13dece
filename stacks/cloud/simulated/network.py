"""What Neutron's kinds do in the simulated cloud beyond storing their fields.

Like Neutron: a subnet needs its network; a port gets a fixed IP from its
network's first subnet (or the one it asks for); a router's gateway must be
on an external network (``router:external``) and takes an address there; a
router interface is a port of the router on the subnet's gateway address;
a floating IP takes an address of its external network and reaches a port
only through a router with that gateway and an interface on the port's
subnet; an object in use (a network with ports, a subnet with addresses, a
router with interfaces, a group used by a port) cannot be deleted.
"""
import ipaddress
import uuid

from django.db import transaction

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.models import SimObject
from stacks.cloud.simulated.objects import live, not_found

ROUTER_INTERFACE = "network:router_interface"
ROUTER_GATEWAY = "network:router_gateway"


def _mac():
    return "fa:16:3e:" + ":".join(uuid.uuid4().hex[i:i + 2] for i in (0, 2, 4))


def already_allocated(address, subnet):
    """Neutron's IpAddressAlreadyAllocated (409), for a port or a floating IP."""
    return CloudError(f"IP address {address} already allocated in subnet {subnet.pk}. "
                      f"(HTTP 409)")


def _subnet_of(subnets, address):
    """The subnet whose range holds ``address`` (Neutron's choice for a fixed IP given
    without its subnet); the first subnet when there is no address or none holds it."""
    if address:
        try:
            wanted = ipaddress.ip_address(address)
        except ValueError:
            wanted = None
        for subnet in subnets:
            if wanted is not None and wanted in ipaddress.ip_network(subnet.fields["cidr"]):
                return subnet
    return subnets[0] if subnets else None


def _uses_subnet(port, subnet_id):
    return any(ip.get("subnet_id") == subnet_id for ip in port.fields.get("fixed_ips") or [])


class SimulatedNeutron:
    """Mixin of ``SimulatedCloud``: the Neutron kinds' hooks (see ``objects``)."""

    def _lookup_id(self, kind, name_or_id, project_id=None):
        if kind == "security_group" and name_or_id == "default":
            return self._default_group(project_id)
        return super()._lookup_id(kind, name_or_id)

    def _default_group(self, project_id):
        """The project's ``default`` security group, made on first use as Neutron makes it."""
        row = live("security_group", name="default", project_id=project_id).first()
        if row is None:
            row = self.sim_row_create("security_group", project_id=project_id, name="default",
                                      fields=self._complete_security_group(
                                          {"description": "Default security group",
                                           "project_id": project_id}, project_id))
        return row.pk

    @staticmethod
    def _base(fields, project_id):
        return {"tenant_id": project_id, "project_id": project_id, "status": "ACTIVE",
                "admin_state_up": True, **fields}

    # Addresses -------------------------------------------------------------------------

    def _external_network(self, network_id, what):
        network = self._resolve("network", network_id)
        if not network.fields.get("router:external"):
            raise CloudError(f"Bad {what} request: Network {network.pk} is not a valid "
                             f"external network. (HTTP 400)")
        return network

    def _port_ips(self, network_id, fixed_ips):
        subnets = list(live("subnet", fields__network_id=network_id).order_by("created_at"))
        out = []
        for wanted in fixed_ips or [{}]:
            address = wanted.get("ip_address")
            subnet = next((s for s in subnets if s.pk == wanted.get("subnet_id")), None) or \
                _subnet_of(subnets, address)
            if subnet is None:
                continue
            taken = self._taken_addresses(subnet) | {ip["ip_address"] for ip in out}
            if address in taken:
                raise already_allocated(address, subnet)
            out.append({"subnet_id": subnet.pk,
                        "ip_address": address or self._next_address(subnet, taken)})
        return out

    @staticmethod
    def _taken_addresses(subnet):
        """The addresses of ``subnet`` in use: its ports' and the floating IPs'. The
        subnet's row is locked first (PostgreSQL; SQLite's IMMEDIATE transactions hold
        the database) until the caller's transaction stores its port or floating IP, so
        two made at once never get one address, as in Neutron."""
        live("subnet", pk=subnet.pk).select_for_update().first()
        used = {ip["ip_address"] for port in live("port")
                for ip in port.fields.get("fixed_ips", []) if ip["subnet_id"] == subnet.pk}
        used |= {fip.fields.get("floating_ip_address") for fip in live("floating_ip")}
        return used

    def _next_address(self, subnet, taken=None):
        used = self._taken_addresses(subnet) if taken is None else taken
        hosts = ipaddress.ip_network(subnet.fields["cidr"]).hosts()
        next(hosts, None)  # the gateway's
        for host in hosts:  # lazily: an IPv6 /64 has 2**64 hosts
            if str(host) not in used:
                return str(host)
        raise CloudError(f"No more IP addresses available on subnet {subnet.pk}. (HTTP 409)")

    def _new_port(self, project_id, *, name="", **fields):
        with transaction.atomic():  # its address taken before another port looks
            return self.sim_row_create("port", project_id=project_id, name=name,
                                       fields=self._complete_port(fields, project_id))

    # Networks, subnets, ports ---------------------------------------------------------

    def _complete_network(self, fields, project_id):
        return self._base({"shared": False, "router:external": False, "mtu": 1500,
                           "port_security_enabled": True, **fields}, project_id)

    def _describe_network(self, row, out):
        out["subnets"] = [s.pk for s in live("subnet", fields__network_id=row.pk)]

    def _in_use_network(self, row):
        if live("port", fields__network_id=row.pk).exists() or \
                live("floating_ip", fields__floating_network_id=row.pk).exists():
            return (f"Unable to complete operation on network {row.pk}. There are one or more "
                    f"ports still in use on the network. (HTTP 409)")
        return None

    def _deleted_network(self, row):
        for subnet in live("subnet", fields__network_id=row.pk):
            self.sim_row_delete(subnet)

    def _complete_subnet(self, fields, project_id):
        self._resolve("network", fields.get("network_id", ""))
        if not fields.get("cidr") and fields.get("subnetpool_id"):
            fields = {**fields, "cidr": self._pool_cidr(fields["subnetpool_id"],
                                                        fields.pop("prefixlen", None))}
        try:
            net = ipaddress.ip_network(fields.get("cidr", ""), strict=False)
        except ValueError:
            raise CloudError(f"Invalid input for cidr: '{fields.get('cidr')}' is not a valid "
                             f"IP subnet. (HTTP 400)") from None
        fields = self._base({"enable_dhcp": True, "dns_nameservers": [], "host_routes": [],
                             **fields, "cidr": str(net), "ip_version": net.version},
                            project_id)
        fields.pop("status")
        hosts = net.hosts()  # lazily, as above
        fields.setdefault("gateway_ip", str(next(hosts)))
        last = net[-1] if net.version == 6 or net.prefixlen >= 31 else net[-2]
        fields.setdefault("allocation_pools", [{"start": str(next(hosts, last)),
                                                "end": str(last)}])
        return fields

    @staticmethod
    def _pool_cidr(pool_id, prefixlen):
        """The first free prefix of the pool's, as Neutron's subnet allocation gives it."""
        # The pool's row locked (PostgreSQL; SQLite's IMMEDIATE transactions hold the
        # database) until the caller's transaction stores the subnet, so two subnets made
        # from one pool at once never get the same prefix.
        pool = live("subnetpool", pk=pool_id).select_for_update().first()
        if pool is None:
            raise not_found("subnetpool", pool_id)
        length = int(prefixlen or pool.fields.get("default_prefixlen") or 24)
        taken = [ipaddress.ip_network(s.fields["cidr"])
                 for s in live("subnet", fields__subnetpool_id=pool.pk)]
        for prefix in pool.fields.get("prefixes") or []:
            network = ipaddress.ip_network(prefix, strict=False)
            if length < network.prefixlen:
                continue
            for candidate in network.subnets(new_prefix=length):
                if not any(candidate.overlaps(other) for other in taken):
                    return str(candidate)
        raise CloudError(f"Insufficient prefix space to allocate subnet size /{length}. "
                         f"(HTTP 409)")

    def _in_use_subnet(self, row):
        if any(_uses_subnet(port, row.pk) for port in live("port")):
            return (f"Unable to complete operation on subnet {row.pk}: One or more ports have "
                    f"an IP allocation from this subnet. (HTTP 409)")
        return None

    def _complete_port(self, fields, project_id):
        network = self._resolve("network", fields.get("network_id", ""))
        fields = self._base({"device_id": "", "device_owner": "", "mac_address": _mac(),
                             "allowed_address_pairs": [], **fields}, project_id)
        fields["network_id"] = network.pk
        fields["fixed_ips"] = self._port_ips(network.pk, fields.get("fixed_ips"))
        return fields

    def _in_use_port(self, row):
        if row.fields.get("device_owner") == ROUTER_INTERFACE:
            return (f"Port {row.pk} cannot be deleted directly via the port API: has device "
                    f"owner {ROUTER_INTERFACE}. (HTTP 409)")
        return None

    def _deleted_port(self, row):
        for fip in live("floating_ip", fields__port_id=row.pk):
            SimObject.objects.filter(pk=fip.pk).update(fields={
                **fip.fields, "port_id": None, "fixed_ip_address": None, "router_id": None})

    # Security groups --------------------------------------------------------------------

    def _complete_security_group(self, fields, project_id):
        rules = _rules(fields.pop("rules", None))
        return {"tenant_id": project_id, "project_id": project_id, "description": "",
                **fields, "security_group_rules": rules}

    def _update_security_group(self, row, fields):
        if "rules" in fields:
            fields["security_group_rules"] = _rules(fields.pop("rules"))
        return fields

    def _describe_security_group(self, row, out):
        out["security_group_rules"] = [*out.get("security_group_rules", []), *(
            {**rule.fields, "id": rule.pk}
            for rule in live("security_group_rule", fields__security_group_id=row.pk))]

    def _in_use_security_group(self, row):
        if any(row.pk in (port.fields.get("security_groups") or []) for port in live("port")):
            return f"Security Group {row.pk} in use. (HTTP 409)"
        return None

    def _deleted_security_group(self, row):
        for rule in live("security_group_rule", fields__security_group_id=row.pk):
            self.sim_row_delete(rule)

    def _complete_security_group_rule(self, fields, project_id):
        self._resolve("security_group", fields.get("security_group_id", ""))
        return {"direction": "ingress", "ethertype": "IPv4", "protocol": None,
                "port_range_min": None, "port_range_max": None, "remote_ip_prefix": None,
                "remote_group_id": None, "project_id": project_id, **fields}

    # Routers -----------------------------------------------------------------------------

    def _gateway(self, router_id, info, project_id):
        """``external_gateway_info`` with its port made on the external network."""
        if not info or not info.get("network_id"):
            return None
        network = self._external_network(info["network_id"], "router")
        port = self._new_port(project_id, network_id=network.pk, device_id=router_id,
                              device_owner=ROUTER_GATEWAY,
                              fixed_ips=info.get("external_fixed_ips"))
        return {"network_id": network.pk, "enable_snat": info.get("enable_snat", True),
                "external_fixed_ips": port.fields["fixed_ips"]}

    def _complete_router(self, fields, project_id):
        router_id = str(uuid.uuid4())
        fields = self._base({"routes": [], **fields, "id": router_id}, project_id)
        fields["external_gateway_info"] = self._gateway(
            router_id, fields.get("external_gateway_info"), project_id)
        return fields

    def _update_router(self, row, fields):
        for route in fields.get("routes") or []:
            self._check_nexthop(row.pk, route)
        if "external_gateway_info" in fields:
            self._drop_gateway(row.pk)
            fields["external_gateway_info"] = self._gateway(
                row.pk, fields["external_gateway_info"], row.project_id)
        return fields

    @staticmethod
    def _check_nexthop(router_id, route):
        """Neutron's rule: a route's next hop is on a subnet the router is connected to."""
        try:
            nexthop = ipaddress.ip_address(route.get("nexthop", ""))
            ipaddress.ip_network(route.get("destination", ""), strict=False)
        except ValueError:
            raise CloudError(f"Invalid format for routes: {route} is not a valid route. "
                             f"(HTTP 400)") from None
        for port in live("port", fields__device_id=router_id):
            for ip in port.fields.get("fixed_ips") or []:
                subnet = live("subnet", pk=ip["subnet_id"]).first()
                if subnet and nexthop in ipaddress.ip_network(subnet.fields["cidr"]):
                    return
        raise CloudError(f"Invalid format for routes: [{route}], the nexthop is not connected "
                         f"with router. (HTTP 400)")

    def _drop_gateway(self, router_id):
        for port in live("port", fields__device_id=router_id,
                         fields__device_owner=ROUTER_GATEWAY):
            self.sim_row_delete(port)

    def _in_use_router(self, row):
        if live("port", fields__device_id=row.pk, fields__device_owner=ROUTER_INTERFACE).exists():
            return f"Router {row.pk} still has ports. (HTTP 409)"
        return None

    def _deleted_router(self, row):
        self._drop_gateway(row.pk)

    def _create_router_interface(self, *, project_id, name, fields, creation_key):
        router = self._resolve("router", fields.get("router_id", ""))
        if fields.get("port_id"):
            port = self._resolve("port", fields["port_id"])
            if port.fields.get("device_id"):
                raise CloudError(f"Port {port.pk} is in use. (HTTP 409)")
            SimObject.objects.filter(pk=port.pk).update(fields={
                **port.fields, "device_id": router.pk, "device_owner": ROUTER_INTERFACE})
            return port.pk
        subnet = self._resolve("subnet", fields.get("subnet_id", ""))
        for port in live("port", fields__device_id=router.pk,
                         fields__device_owner=ROUTER_INTERFACE):
            if _uses_subnet(port, subnet.pk):
                raise CloudError(f"Router already has a port on subnet {subnet.pk}. (HTTP 400)")
        if not subnet.fields.get("gateway_ip"):
            raise CloudError(f"Bad router request: Subnet {subnet.pk} does not have a gateway "
                             f"IP. (HTTP 400)")
        port = self._new_port(project_id, network_id=subnet.fields["network_id"],
                              device_id=router.pk, device_owner=ROUTER_INTERFACE,
                              fixed_ips=[{"subnet_id": subnet.pk,
                                          "ip_address": subnet.fields["gateway_ip"]}])
        SimObject.objects.filter(pk=port.pk).update(creation_key=creation_key)
        return port.pk

    def _interface_port(self, port_id):
        return live("port", pk=port_id, fields__device_owner=ROUTER_INTERFACE).first()

    def _get_router_interface(self, port_id):
        port = self._interface_port(port_id)
        if port is None:
            return None
        ips = port.fields.get("fixed_ips") or []
        return {"id": port.pk, "port_id": port.pk, "router_id": port.fields["device_id"],
                "subnet_id": ips[0]["subnet_id"] if ips else None}

    def _delete_router_interface(self, port_id):
        port = self._interface_port(port_id)
        if port is None:
            return
        self._fault("router_interface_delete", port.project_id)
        router_id = port.fields["device_id"]
        for fip in live("floating_ip", fields__router_id=router_id):
            fip_port = live("port", pk=fip.fields.get("port_id")).first()
            if fip_port and any(_uses_subnet(fip_port, ip["subnet_id"])
                                for ip in port.fields.get("fixed_ips") or []):
                raise CloudError(f"Router interface for subnet on router {router_id} cannot be "
                                 f"deleted, as it is required by one or more floating IPs. "
                                 f"(HTTP 409)")
        self.sim_row_delete(port)

    # Floating IPs ------------------------------------------------------------------------

    def _reach(self, network_id, port_id):
        """(router id, fixed address) by which the floating network reaches the port."""
        port = self._resolve("port", port_id)
        ips = port.fields.get("fixed_ips") or []
        for router in live("router", fields__external_gateway_info__network_id=network_id):
            for interface in live("port", fields__device_id=router.pk,
                                  fields__device_owner=ROUTER_INTERFACE):
                for ip in ips:
                    if _uses_subnet(interface, ip["subnet_id"]):
                        return router.pk, ip["ip_address"]
        subnet = ips[0]["subnet_id"] if ips else "(none)"
        raise CloudNotFound(f"External network {network_id} is not reachable from subnet "
                            f"{subnet}. Therefore, cannot associate Port {port.pk} with a "
                            f"Floating IP. (HTTP 404)")

    def _association(self, network_id, port_id, fixed_ip=None):
        if not port_id:
            return {"port_id": None, "fixed_ip_address": None, "router_id": None,
                    "status": "DOWN"}
        router_id, address = self._reach(network_id, port_id)
        return {"port_id": port_id, "fixed_ip_address": fixed_ip or address,
                "router_id": router_id, "status": "ACTIVE"}

    def _complete_floating_ip(self, fields, project_id):
        network = self._external_network(fields.get("floating_network_id", ""), "floatingip")
        subnets = list(live("subnet", fields__network_id=network.pk).order_by("created_at"))
        if not subnets:
            raise CloudError(f"No more IP addresses available on network {network.pk}. "
                             f"(HTTP 409)")
        address = fields.get("floating_ip_address")
        subnet = _subnet_of(subnets, address)
        if address and address in self._taken_addresses(subnet):
            raise already_allocated(address, subnet)
        address = address or self._next_address(subnet)
        return {"tenant_id": project_id, "project_id": project_id, "description": "",
                **fields, "floating_network_id": network.pk, "floating_ip_address": address,
                **self._association(network.pk, fields.get("port_id"),
                                    fields.get("fixed_ip_address"))}

    def _update_floating_ip(self, row, fields):
        if "port_id" in fields:
            fields.update(self._association(row.fields["floating_network_id"],
                                            fields["port_id"], fields.get("fixed_ip_address")))
        return fields

    def _create_floating_ip_association(self, *, project_id, name, fields, creation_key):
        fip = self._object_row("floating_ip", fields.get("floatingip_id", ""))
        self.object_update("floating_ip", fip.pk, port_id=fields.get("port_id"),
                           fixed_ip_address=fields.get("fixed_ip_address"))
        return fip.pk

    def _get_floating_ip_association(self, fip_id):
        fip = live("floating_ip", pk=fip_id).first()
        if fip is None or not fip.fields.get("port_id"):
            return None
        return {"id": fip.pk, "floatingip_id": fip.pk, "port_id": fip.fields["port_id"],
                "fixed_ip_address": fip.fields.get("fixed_ip_address")}

    def _delete_floating_ip_association(self, fip_id):
        if live("floating_ip", pk=fip_id).exists():
            self.object_update("floating_ip", fip_id, port_id=None)

    # Trunks, pools, scopes, QoS ----------------------------------------------------------

    def _complete_trunk(self, fields, project_id):
        port = self._resolve("port", fields.get("port_id", ""))
        if live("trunk", fields__port_id=port.pk).exists():
            raise CloudError(f"Port {port.pk} is currently a parent port for trunk. (HTTP 409)")
        return self._base({"sub_ports": [], "description": "", **fields}, project_id)

    def _complete_subnetpool(self, fields, project_id):
        fields = self._base({"shared": False, "is_default": False, "min_prefixlen": 8,
                             "max_prefixlen": 32, **fields}, project_id)
        fields.setdefault("default_prefixlen", fields["min_prefixlen"])
        return fields

    def _in_use_subnetpool(self, row):
        if live("subnet", fields__subnetpool_id=row.pk).exists():
            return f"Subnet pool {row.pk} could not be deleted: it is in use. (HTTP 409)"
        return None

    def _complete_qos_policy(self, fields, project_id):
        return {"shared": False, "is_default": False, "description": "",
                "project_id": project_id, **fields}

    def _describe_qos_policy(self, row, out):
        out["rules"] = [{**rule.fields, "id": rule.pk, "type": rule.kind[4:-5]}
                        for rule in live(fields__qos_policy_id=row.pk,
                                         kind__startswith="qos_")]

    def _in_use_qos_policy(self, row):
        for other in live("port", fields__qos_policy_id=row.pk):
            return f"QoS Policy {row.pk} is used by port {other.pk}. (HTTP 409)"
        return None

    def _deleted_qos_policy(self, row):
        for rule in live(fields__qos_policy_id=row.pk, kind__startswith="qos_"):
            self.sim_row_delete(rule)

    def _qos_rule(self, fields):
        policy = live("qos_policy", pk=fields.get("qos_policy_id")).first()
        if policy is None:
            raise not_found("qos_policy", fields.get("qos_policy_id"))
        return fields

    def _complete_qos_bandwidth_limit_rule(self, fields, project_id):
        return self._qos_rule({"direction": "egress", "max_burst_kbps": 0, **fields})

    def _complete_qos_dscp_marking_rule(self, fields, project_id):
        return self._qos_rule(fields)

    def _complete_qos_minimum_bandwidth_rule(self, fields, project_id):
        return self._qos_rule({"direction": "egress", **fields})

    def port_address(self, port_id):
        """(network name, first fixed IP) of a simulated port, for its server's addresses."""
        port = self._resolve("port", port_id)
        network = live("network", pk=port.fields.get("network_id")).first()
        ips = port.fields.get("fixed_ips") or []
        return (network.name if network else "private"), (ips[0]["ip_address"] if ips else None)


def _rules(rules):
    """A group's rules as stored: without the template's ``remote_mode`` (the simulated
    cloud keeps rules, it does not filter traffic)."""
    return [{key: value for key, value in rule.items() if key != "remote_mode"}
            for rule in rules or []]
