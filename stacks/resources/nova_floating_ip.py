"""Nova's floating IP types, ``OS::Nova::FloatingIP`` and ``FloatingIPAssociation``:
Heat's hidden, deprecated types (use ``OS::Neutron::FloatingIP`` and
``FloatingIPAssociation``), still run for the templates that have them.

As in Heat 27 (``heat/engine/resources/openstack/nova/floatingip.py``) they are
Neutron floating IPs underneath, so they are the ``floating_ip`` and
``floating_ip_association`` kinds the Neutron types use, on either cloud. Hidden:
not listed, and describing one is 400 ``NotSupported``, as in Heat; templates
naming them validate, create, update and delete. Differences from Heat: the
association's physical id (and ``get_resource``) is its floating IP's id, as
heatweb's Neutron association (Heat's is the resource's database id and its
physical resource name); ``server_id`` is looked up at create, not at validate
(heatweb checks no property's custom constraint); ``show`` is the floating IP
as Neutron describes it (Heat's is null for these types).
"""
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, prop
from stacks.resources.registry import register
from stacks.resources.schema import Attribute

SHOW = Attribute("Detailed information about resource.", type="map")


def one_external_network(cloud):
    """The cloud's external network when it has exactly one (Heat's choice for a floating
    IP given no network); the resource fails otherwise, in Heat's words."""
    found = _cloud_call(cloud.object_search, "network", **{"router:external": True})
    if len(found) != 1:
        raise ResourceFailure(f"Expected 1 external network, found {len(found)}")
    return found[0]


def first_interface(cloud, server_id):
    """(port id, first IPv4 address) of the server's first interface: where Heat's Nova
    client plugin associates a floating IP."""
    if _cloud_call(cloud.server_get, server_id) is None:
        raise ResourceFailure(f"The server ({server_id}) could not be found.")
    interfaces = _cloud_call(cloud.server_interfaces, server_id)
    if not interfaces:
        raise ResourceFailure(f"No network interface found for server {server_id}.")
    first = interfaces[0]
    address = next((ip for ip in first.get("fixed_ips") or [] if ":" not in ip), None)
    return first["port"], address


@register
class NovaFloatingIP(CloudObjectResource):
    """A floating IP of an external network (``pool``: its name or id; without it, the
    cloud's one external network). Any change replaces it. Attributes: ``pool`` (the
    network's id) and ``ip`` (the address)."""

    type_name = "OS::Nova::FloatingIP"
    hidden = True  # Heat's support status: HIDDEN since 11.0.0
    kind = "floating_ip"
    named = False
    properties_schema = {
        "pool": prop("String", "Allocate a floating IP from a given floating IP pool. Now "
                               "that nova-network is not supported this represents the "
                               "external network."),
    }
    field_names = {"pool": "floating_network_id"}
    attributes_schema = {
        "pool": Attribute("Pool from which floating IP is allocated.", type="string"),
        "ip": Attribute("Allocated floating IP address.", type="string"),
        "show": SHOW,
    }
    attribute_fields = {"pool": "floating_network_id", "ip": "floating_ip_address"}

    def cloud_fields(self, props, names=None):
        fields = super().cloud_fields(props, names)
        if names is None and not props.get("pool"):
            fields["floating_network_id"] = one_external_network(self.cloud)
        return fields


@register
class NovaFloatingIPAssociation(CloudObjectResource):
    """Associates a floating IP (``floating_ip``: its id) with the first port of a server
    (``server_id``), at that port's first IPv4 address. Either changes in place: a new
    floating IP lets go of the old one first; a new server takes the floating IP over."""

    type_name = "OS::Nova::FloatingIPAssociation"
    hidden = True  # Heat's support status: HIDDEN since 11.0.0
    kind = "floating_ip_association"
    named = False
    changes_objects = {"server_id": "server", "floating_ip": "floating_ip"}
    properties_schema = {
        "server_id": prop("String", "Server to assign floating IP to.", required=True,
                          update_allowed=True),
        "floating_ip": prop("String", "ID of the floating IP to assign to the server.",
                            required=True, update_allowed=True),
    }
    attributes_schema = {"show": SHOW}

    def _associate(self, props):
        port, address = first_interface(self.cloud, props["server_id"])
        return _cloud_call(self.cloud.object_create, self.kind,
                           project_id=self.context.project_id, name=None,
                           floatingip_id=props["floating_ip"], port_id=port,
                           fixed_ip_address=address)

    def handle_create(self):
        self.physical_id = self._associate(self.properties)

    def handle_update(self, new_properties, changed):
        if "floating_ip" in changed and self.physical_id:
            _cloud_call(self.cloud.object_delete, self.kind, self.physical_id)
        self.physical_id = self._associate(new_properties)
        self.properties = new_properties
