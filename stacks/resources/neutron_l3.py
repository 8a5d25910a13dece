"""Neutron routing: ``OS::Neutron::Router``, ``RouterInterface``, ``RouterGateway``,
``FloatingIP``, ``FloatingIPAssociation``, ``ExtraRoute``, ``ExtraRouteSet``.

Properties and attributes as Heat's. Differences from Heat: a
RouterInterface's physical id (``get_resource``) is the interface's port id
(Heat's is ``<router>:subnet_id=<subnet>``); a FloatingIPAssociation's is its
floating IP's id; an ExtraRoute's is ``<router>:<destination>:<nexthop>``
(as Heat's).
"""
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.implicit_dependencies import floating_ip_waits_for, \
    router_gateway_waits_for, router_interfaces_of, router_waits_for
from stacks.resources.neutron import TAGS, VALUE_SPECS, NeutronResource
from stacks.resources.registry import register
from stacks.resources.schema import Property

GATEWAY_SCHEMA = {
    "network": Property("String", description="External network name or id.", required=True),
    "enable_snat": Property("Boolean", description="SNAT on the gateway."),
    "external_fixed_ips": Property("List", description="Maps of subnet and ip_address."),
}


@register
class Router(NeutronResource):
    """A Neutron router, with its gateway on an external network (``external_gateway_info``)."""

    required_extension = "router"
    type_name = "OS::Neutron::Router"
    kind = "router"
    properties_schema = {
        "name": prop("String", "Router name.", update_allowed=True),
        "external_gateway_info": prop("Map", "The gateway: network (required), enable_snat, "
                                             "external_fixed_ips.", update_allowed=True,
                                      schema=GATEWAY_SCHEMA),
        "admin_state_up": prop("Boolean", "Administrative state.", default=True,
                               update_allowed=True),
        "distributed": prop("Boolean", "A distributed router (admin only)."),
        "ha": prop("Boolean", "A highly available router (admin only)."),
        "availability_zone_hints": prop("List", "Availability zones of the router."),
        "l3_agent_ids": prop("List", "L3 agents hosting the router (admin only).",
                             update_allowed=True),
        "l3_agent_id": prop("String", "L3 agent (deprecated spelling of l3_agent_ids).",
                            update_allowed=True),
        "tenant_id": prop("String", "Accepted; the router belongs to the project."),
        "value_specs": VALUE_SPECS,
        "tags": TAGS,
    }
    field_names = {"tags": None, "l3_agent_ids": None, "l3_agent_id": None, "tenant_id": None}
    attributes_schema = attributes("status", "external_gateway_info", "name", "admin_state_up",
                                   "tenant_id")

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return router_waits_for(name, definitions, properties_of)

    def cloud_fields(self, props, names=None):
        fields = super().cloud_fields(props, names)
        info = fields.get("external_gateway_info")
        if info:
            fields["external_gateway_info"] = {k: v for k, v in {
                "network_id": info.get("network"), "enable_snat": info.get("enable_snat"),
                "external_fixed_ips": [
                    {k: v for k, v in (("subnet_id", ip.get("subnet") or ip.get("subnet_id")),
                                       ("ip_address", ip.get("ip_address"))) if v}
                    for ip in info.get("external_fixed_ips") or []] or None,
            }.items() if v is not None}
        return fields

    def handle_update(self, new_properties, changed):
        if "external_gateway_info" in changed and not new_properties.get("external_gateway_info"):
            self.existing()
            _cloud_call(self.cloud.object_update, self.kind, self.physical_id,
                        external_gateway_info={})
            changed = [k for k in changed if k != "external_gateway_info"]
        super().handle_update(new_properties, changed)


@register
class RouterInterface(CloudObjectResource):
    """A router's interface on a subnet (or on a given port); any change replaces it."""

    required_extension = "router"
    type_name = "OS::Neutron::RouterInterface"
    kind = "router_interface"
    named = False
    changes_objects = {"router": "router", "router_id": "router"}
    properties_schema = {
        "router": prop("String", "Router name or id."),
        "router_id": prop("String", "Router id (Heat's hidden, deprecated spelling)."),
        "subnet": prop("String", "Subnet name or id."),
        "subnet_id": prop("String", "Subnet id (deprecated spelling)."),
        "port": prop("String", "Port name or id."),
        "port_id": prop("String", "Port id (deprecated spelling)."),
    }
    field_names = {"router": "router_id", "subnet": "subnet_id", "port": "port_id"}
    attributes_schema = attributes()

    exactly_one_of = (("router", "router_id"), ("subnet", "subnet_id", "port", "port_id"))


@register
class FloatingIP(NeutronResource):
    """A floating IP of an external network, optionally associated with a port."""

    type_name = "OS::Neutron::FloatingIP"
    kind = "floating_ip"
    named = False
    properties_schema = {
        "floating_network": prop("String", "External network name or id."),
        "floating_network_id": prop("String", "External network id (deprecated spelling)."),
        "floating_subnet": prop("String", "Subnet of the external network to take it from."),
        "floating_ip_address": prop("String", "The address wanted."),
        "port_id": prop("String", "Port to associate it with.", update_allowed=True),
        "fixed_ip_address": prop("String", "The port's address to map to.",
                                 update_allowed=True),
        "dns_name": prop("String", "DNS name."),
        "dns_domain": prop("String", "DNS domain."),
        "value_specs": prop("Map", "Extra fields sent to Neutron.", default={}),
    }
    field_names = {"floating_network": "floating_network_id",
                   "floating_subnet": "subnet_id"}
    attributes_schema = attributes("router_id", "tenant_id", "floating_network_id",
                                   "fixed_ip_address", "floating_ip_address", "port_id")

    exactly_one_of = (("floating_network", "floating_network_id"),)

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return floating_ip_waits_for(name, definitions, properties_of)


@register
class FloatingIPAssociation(CloudObjectResource):
    """Associates a floating IP with a port; a change moves the association in place."""

    type_name = "OS::Neutron::FloatingIPAssociation"
    kind = "floating_ip_association"
    named = False
    changes_objects = {"floatingip_id": "floating_ip", "port_id": "port"}
    properties_schema = {
        "floatingip_id": prop("String", "Floating IP id.", required=True, update_allowed=True),
        "port_id": prop("String", "Port id.", required=True, update_allowed=True),
        "fixed_ip_address": prop("String", "The port's address to map to.",
                                 update_allowed=True),
    }
    attributes_schema = attributes()

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return floating_ip_waits_for(name, definitions, properties_of)

    def handle_update(self, new_properties, changed):
        _cloud_call(self.cloud.object_delete, self.kind, self.physical_id)
        self.properties = new_properties
        self.handle_create()


class RouterRoutes(CloudObjectResource):
    """Base of the routes added to a router: its ``routes`` field gains and loses them."""

    kind = "router"
    router_property = "router"  # the property naming the router
    held_kind = None  # its id names the router (or a route of it): the router's resource holds it
    changes_objects = {"router": "router"}

    def router_id(self, props):
        return props[self.router_property]

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return router_interfaces_of(properties_of(name).get(cls.router_property),
                                    definitions, properties_of)

    def wanted_routes(self, props):
        raise NotImplementedError

    def _router(self, router_id):
        router = _cloud_call(self.cloud.object_get, "router",
                             _cloud_call(self.cloud.object_find, "router", router_id))
        if router is None:
            raise ResourceFailure(f"The router {router_id} could not be found")
        return router

    def _change_routes(self, router_id, *, add=(), remove=()):
        router = self._router(router_id)
        _cloud_call(self.cloud.router_routes_change, router["id"], add=add, remove=remove)
        return router["id"]

    def handle_update(self, new_properties, changed):
        router_id = self.router_id(self.properties)
        self._change_routes(router_id, remove=self.wanted_routes(self.properties),
                            add=self.wanted_routes(new_properties))
        self.properties = new_properties

    def handle_delete(self):
        if not self.physical_id:
            return
        try:
            router = self._router(self.router_id(self.properties))
        except ResourceFailure:
            return  # the router is gone, and what this resource gave it with it
        self._take_back(router["id"])

    def _take_back(self, router_id):
        """Delete: the router loses what this resource gave it."""
        self._change_routes(router_id, remove=self.wanted_routes(self.properties))

    def check_delete_complete(self, cookie):
        return True

    def existing(self):
        return self._router(self.router_id(self.properties))

    def _described(self):
        if not self.physical_id or not self.context:
            return None
        try:
            return self._router(self.router_id(self.properties))
        except ResourceFailure:
            return None


@register
class ExtraRoute(RouterRoutes):
    """One extra route of a router (a destination CIDR through a next hop); any change
    replaces it."""

    required_extension = "extraroute"
    type_name = "OS::Neutron::ExtraRoute"
    properties_schema = {
        "router_id": prop("String", "Router name or id.", required=True),
        "destination": prop("String", "Destination CIDR.", required=True),
        "nexthop": prop("String", "Next hop address.", required=True),
    }
    attributes_schema = attributes()
    router_property = "router_id"
    changes_objects = {"router_id": "router"}

    def wanted_routes(self, props):
        return [{"destination": props["destination"], "nexthop": props["nexthop"]}]

    def handle_create(self):
        router_id = self._change_routes(self.router_id(self.properties),
                                        add=self.wanted_routes(self.properties))
        self.physical_id = (f"{router_id}:{self.properties['destination']}:"
                            f"{self.properties['nexthop']}")


@register
class ExtraRouteSet(RouterRoutes):
    """A set of extra routes of a router; the set updates in place (other routes stay)."""

    required_extension = "extraroute-atomic"
    type_name = "OS::Neutron::ExtraRouteSet"
    properties_schema = {
        "router": prop("String", "Router name or id.", required=True),
        "routes": prop("List", "Maps of destination and nexthop.", required=True,
                       update_allowed=True),
    }
    attributes_schema = attributes()

    def wanted_routes(self, props):
        return [{"destination": r["destination"], "nexthop": r["nexthop"]}
                for r in props.get("routes") or []]

    def handle_create(self):
        self.physical_id = self._change_routes(self.router_id(self.properties),
                                               add=self.wanted_routes(self.properties))


@register
class RouterGateway(RouterRoutes):
    """A router's gateway on an external network: Heat's hidden, deprecated type (use the
    router's ``external_gateway_info``), still run for the templates that have it. Any
    change replaces it; its physical id is ``<router>:<network>`` (Heat's)."""

    required_extension = "router"
    type_name = "OS::Neutron::RouterGateway"
    hidden = True  # Heat's support status: HIDDEN since 5.0.0
    properties_schema = {
        "router_id": prop("String", "Router name or id.", required=True),
        "network": prop("String", "External network name or id."),
        "network_id": prop("String", "External network id (deprecated spelling)."),
    }
    attributes_schema = attributes()
    router_property = "router_id"
    changes_objects = {"router_id": "router"}
    exactly_one_of = (("network", "network_id"),)

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return router_gateway_waits_for(name, definitions, properties_of)

    def handle_create(self):
        router = self._router(self.router_id(self.properties))
        network = _cloud_call(self.cloud.object_find, "network",
                              self.properties.get("network") or self.properties["network_id"])
        _cloud_call(self.cloud.object_update, "router", router["id"],
                    external_gateway_info={"network_id": network})
        self.physical_id = f"{router['id']}:{network}"

    def _take_back(self, router_id):
        _cloud_call(self.cloud.object_update, "router", router_id, external_gateway_info={})
