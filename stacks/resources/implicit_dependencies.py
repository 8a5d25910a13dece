"""Heat's implicit dependencies between network objects of one stack.

Heat makes a port, and a server attached to a network, wait for every
subnet of that network created in the same stack: which subnet will give
the address is not known, and a port made before its network has a subnet
comes up without an address (and a delete then fails on "ports are in
use"). Networks are compared as Heat compares them before anything exists:
a ``get_resource`` is the resource's name, a literal is itself. A floating
IP given a port waits for the router interfaces on the port's network: the
external network is reachable from the port only then (Neutron refuses the
association before). As in Heat, a router waits for the subnets of its
gateway's network (Neutron gives the gateway an address from one), and a
floating IP waits for the routers whose gateway is on its floating network
(so for that network's subnets: Neutron refuses a floating IP on a network
with no subnet yet), or for the RouterGateway on it; a RouterGateway waits for
its router's interfaces and its network's subnets.
"""

SUBNET_TYPES = ("OS::Neutron::Subnet",)
ROUTER_TYPES = ("OS::Neutron::Router",)
ROUTER_INTERFACE_TYPES = ("OS::Neutron::RouterInterface",)
ROUTER_GATEWAY_TYPES = ("OS::Neutron::RouterGateway",)


def subnets_of(network, definitions, properties_of, *, unknown_network_too=False):
    """Names of the subnets in ``definitions`` on ``network``.

    ``unknown_network_too``: a subnet whose network is not known counts as well
    (Heat's server is wary of it; its port is not).
    """
    found = []
    for name, definition in definitions.items():
        if definition.type not in SUBNET_TYPES:
            continue
        subnet_network = properties_of(name).get("network") or \
            properties_of(name).get("network_id")
        if (not subnet_network and unknown_network_too) or \
                (subnet_network and subnet_network == network):
            found.append(name)
    return found


def port_waits_for(name, definitions, properties_of):
    network = _network_of(name, properties_of)
    return subnets_of(network, definitions, properties_of) if network else []


def server_waits_for(name, definitions, properties_of):
    networks = properties_of(name).get("networks")
    if not isinstance(networks, list) or not networks:
        return []
    wanted = set()
    for entry in networks:
        if isinstance(entry, dict) and not entry.get("port"):
            network = entry.get("network") or entry.get("uuid")
            if network:
                wanted.update(subnets_of(network, definitions, properties_of))
    return sorted(wanted | set(subnets_of(None, definitions, properties_of,
                                          unknown_network_too=True)))


def _network_of(name, properties_of):
    return properties_of(name).get("network") or properties_of(name).get("network_id")


def _gateway_network(name, properties_of):
    gateway = properties_of(name).get("external_gateway_info")
    return (gateway.get("network") or gateway.get("network_id")) \
        if isinstance(gateway, dict) else None


def router_waits_for(name, definitions, properties_of):
    """The subnets of the router's gateway network."""
    network = _gateway_network(name, properties_of)
    return subnets_of(network, definitions, properties_of) if network else []


def router_gateway_waits_for(name, definitions, properties_of):
    """Heat's RouterGateway: the router's interfaces and the gateway network's subnets."""
    network = _network_of(name, properties_of)
    subnets = subnets_of(network, definitions, properties_of) if network else []
    return sorted(set(subnets) | set(router_interfaces_of(
        properties_of(name).get("router_id"), definitions, properties_of)))


def floating_ip_waits_for(name, definitions, properties_of):
    """The routers with a gateway on the floating network (a FloatingIP's), and the router
    interfaces on the subnets of the network of its port."""
    floating = properties_of(name).get("floating_network") or \
        properties_of(name).get("floating_network_id")
    routers = [n for n, d in definitions.items() if d.type in ROUTER_TYPES
               and floating and _gateway_network(n, properties_of) == floating]
    routers += [n for n, d in definitions.items() if d.type in ROUTER_GATEWAY_TYPES
                and floating and _network_of(n, properties_of) == floating]
    return sorted(set(routers) | set(_interfaces_for_port(name, definitions, properties_of)))


def _interfaces_for_port(name, definitions, properties_of):
    port = properties_of(name).get("port_id")
    if not isinstance(port, str) or port not in definitions:
        return []
    network = _network_of(port, properties_of)
    subnets = set(subnets_of(network, definitions, properties_of)) if network else set()
    return sorted(n for n, d in definitions.items() if d.type in ROUTER_INTERFACE_TYPES
                  and (properties_of(n).get("subnet") or properties_of(n).get("subnet_id"))
                  in subnets)


def router_interfaces_of(router, definitions, properties_of):
    """Names of the router interfaces in ``definitions`` on ``router``: Heat's extra
    routes wait for them (a next hop must be on a subnet the router is attached to)."""
    return sorted(
        name for name, definition in definitions.items()
        if definition.type in ROUTER_INTERFACE_TYPES and router and
        (properties_of(name).get("router") or properties_of(name).get("router_id")) == router)
