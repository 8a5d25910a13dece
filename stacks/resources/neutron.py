"""Neutron networks: ``OS::Neutron::Net``, ``ProviderNet``, ``Subnet``, ``Port``,
``SecurityGroup``, ``SecurityGroupRule``.

Properties and attributes as Heat's; each type is its schema, its cloud
``kind`` and a field map (``stacks.resources.cloud_object``).
"""
from heatweb.exceptions import StackValidationFailed
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.implicit_dependencies import port_waits_for
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Range

VALUE_SPECS = prop("Map", "Extra fields sent to Neutron.", default={}, update_allowed=True)
TAGS = prop("List", "Tags of the object.", update_allowed=True)
NETWORK = prop("String", "Network name or id.")
HIDDEN_NETWORK_ID = prop("String", "Network id (Heat's hidden, deprecated spelling of network).")


class NeutronResource(CloudObjectResource):
    """Base of the Neutron plugins: tags are Heat's, not sent as fields."""

    field_names = {"tags": None}


class NetworkOfSubnetOrPort(NeutronResource):
    """A Subnet or Port: ``network`` or Heat's hidden ``network_id`` names the network."""

    field_names = {"tags": None, "network": "network_id"}
    exactly_one_of = (("network", "network_id"),)


@register
class Net(NeutronResource):
    """A Neutron network."""

    type_name = "OS::Neutron::Net"
    kind = "network"
    properties_schema = {
        "name": prop("String", "Network name.", update_allowed=True),
        "admin_state_up": prop("Boolean", "Administrative state.", default=True,
                               update_allowed=True),
        "shared": prop("Boolean", "Shared with every project.", update_allowed=True),
        "port_security_enabled": prop("Boolean", "Port security by default for its ports.",
                                      update_allowed=True),
        "dns_domain": prop("String", "DNS domain.", update_allowed=True),
        "qos_policy": prop("String", "QoS policy name or id.", update_allowed=True),
        "availability_zone_hints": prop("List", "Availability zones of the network."),
        "dhcp_agent_ids": prop("List", "DHCP agents of the network (admin only).",
                               update_allowed=True),
        "value_specs": VALUE_SPECS,
        "tenant_id": prop("String", "Accepted; the network belongs to the project."),
        "tags": TAGS,
    }
    field_names = {"tags": None, "tenant_id": None, "qos_policy": "qos_policy_id",
                   "dhcp_agent_ids": None}
    attributes_schema = attributes("name", "status", "subnets", "admin_state_up", "tenant_id",
                                   "mtu", "port_security_enabled", "qos_policy_id",
                                   "l2_adjacency", "segments")


@register
class ProviderNet(NeutronResource):
    """A provider network (admin-only in Neutron): its type, physical network and segment."""

    required_extension = "provider"
    type_name = "OS::Neutron::ProviderNet"
    kind = "network"
    properties_schema = {
        "name": prop("String", "Network name.", update_allowed=True),
        "network_type": prop("String", "Network type.", required=True, update_allowed=True,
                             constraints=(AllowedValues(("local", "vlan", "vxlan", "gre",
                                                         "geneve", "flat")),)),
        "physical_network": prop("String", "Physical network.", update_allowed=True),
        "segmentation_id": prop("String", "VLAN or tunnel id.", update_allowed=True),
        "shared": prop("Boolean", "Shared with every project.", default=True,
                       update_allowed=True),
        "admin_state_up": prop("Boolean", "Administrative state.", default=True,
                               update_allowed=True),
        "port_security_enabled": prop("Boolean", "Port security.", update_allowed=True),
        "router_external": prop("Boolean", "An external network (routers' gateways).",
                                update_allowed=True),
        "dns_domain": prop("String", "DNS domain.", update_allowed=True),
        "availability_zone_hints": prop("List", "Availability zones of the network."),
        "tenant_id": prop("String", "Accepted; the network belongs to the project."),
        "tags": TAGS,
    }
    field_names = {"tags": None, "tenant_id": None, "network_type": "provider:network_type",
                   "physical_network": "provider:physical_network",
                   "segmentation_id": "provider:segmentation_id",
                   "router_external": "router:external"}
    attributes_schema = attributes("status", "subnets", "segments")


@register
class Subnet(NetworkOfSubnetOrPort):
    """A subnet of a Neutron network (its CIDR, gateway, DHCP, allocation pools)."""

    type_name = "OS::Neutron::Subnet"
    shown_in = {"network": "network"}  # the network's ``subnets``
    kind = "subnet"
    properties_schema = {
        "network": NETWORK,
        "network_id": HIDDEN_NETWORK_ID,
        "cidr": prop("String", "CIDR of the subnet."),
        "subnetpool": prop("String", "Subnet pool name or id the CIDR is taken from."),
        "prefixlen": prop("Integer", "Prefix length from the subnet pool.",
                          constraints=(Range(0, None),)),
        "ip_version": prop("Integer", "4 or 6.", default=4,
                           constraints=(AllowedValues((4, 6)),)),
        "name": prop("String", "Subnet name.", update_allowed=True),
        "enable_dhcp": prop("Boolean", "DHCP on the subnet.", default=True,
                            update_allowed=True),
        "gateway_ip": prop("String", "Gateway IP.", update_allowed=True),
        "allocation_pools": prop("List", "Maps of start and end.", update_allowed=True),
        "dns_nameservers": prop("List", "DNS servers.", update_allowed=True),
        "host_routes": prop("List", "Maps of destination and nexthop.", update_allowed=True),
        "ipv6_address_mode": prop("String", "IPv6 address mode.", constraints=(
            AllowedValues(("dhcpv6-stateful", "dhcpv6-stateless", "slaac")),)),
        "ipv6_ra_mode": prop("String", "IPv6 RA mode.", constraints=(
            AllowedValues(("dhcpv6-stateful", "dhcpv6-stateless", "slaac")),)),
        "segment": prop("String", "Network segment name or id of the subnet."),
        "value_specs": prop("Map", "Extra fields sent to Neutron.", default={}),
        "tenant_id": prop("String", "Accepted; the subnet belongs to the project."),
        "tags": TAGS,
    }
    field_names = {"tags": None, "network": "network_id", "subnetpool": "subnetpool_id",
                   "tenant_id": None, "segment": "segment_id"}
    attributes_schema = attributes("name", "network_id", "tenant_id", "allocation_pools",
                                   "gateway_ip", "host_routes", "ip_version", "cidr",
                                   "dns_nameservers", "enable_dhcp", "subnetpool_id")

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        if all(props.get(key) in (None, "") for key in ("cidr", "subnetpool")):
            raise StackValidationFailed(
                f"Property error: resources.{resource_name}.properties: At least one of the "
                f"following properties must be specified: cidr, subnetpool.")
        return props


@register
class Port(NetworkOfSubnetOrPort):
    """A Neutron port: a network attachment with fixed IPs, for a server's ``networks``.

    ``mac_address`` updates in place, as in Heat (Neutron lets an admin change it).
    """

    type_name = "OS::Neutron::Port"
    kind = "port"
    properties_schema = {
        "network": NETWORK,
        "network_id": HIDDEN_NETWORK_ID,
        "name": prop("String", "Port name.", update_allowed=True),
        "fixed_ips": prop("List", "Maps of subnet (or subnet_id) and ip_address.",
                          update_allowed=True),
        "security_groups": prop("List", "Security group names or ids.", update_allowed=True),
        "mac_address": prop("String", "MAC address.", update_allowed=True),
        "admin_state_up": prop("Boolean", "Administrative state.", default=True,
                               update_allowed=True),
        "device_id": prop("String", "Device using the port.", update_allowed=True),
        "device_owner": prop("String", "Owner of that device.", update_allowed=True),
        "port_security_enabled": prop("Boolean", "Port security.", update_allowed=True),
        "allowed_address_pairs": prop("List", "Maps of ip_address and mac_address.",
                                      update_allowed=True),
        "qos_policy": prop("String", "QoS policy name or id.", update_allowed=True),
        "dns_name": prop("String", "DNS name of the port.", update_allowed=True),
        "replacement_policy": prop("String", "Deprecated; ignored as in Heat.",
                                   default="AUTO", update_allowed=True,
                                   constraints=(AllowedValues(("REPLACE_ALWAYS", "AUTO")),)),
        "binding:vnic_type": prop("String", "VNIC type.", update_allowed=True,
                                  constraints=(AllowedValues(("normal", "direct", "macvtap",
                                                              "direct-physical", "baremetal",
                                                              "virtio-forwarder", "smart-nic",
                                                              "remote-managed", "vdpa")),)),
        "extra_dhcp_opts": prop("List", "Maps of opt_name, opt_value and ip_version.",
                                update_allowed=True),
        "value_specs": VALUE_SPECS,
        "tags": TAGS,
    }
    field_names = {"tags": None, "network": "network_id", "qos_policy": "qos_policy_id",
                   "replacement_policy": None}
    attributes_schema = attributes("name", "fixed_ips", "mac_address", "network_id",
                                   "device_id", "device_owner", "status", "security_groups",
                                   "tenant_id", "admin_state_up", "allowed_address_pairs",
                                   "qos_policy_id", "port_security_enabled", "dns_assignment",
                                   "propagate_uplink_status",
                                   subnets="Subnet ids of the port's fixed IPs.",
                                   network="Everything the cloud says of the port's network.")

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        return port_waits_for(name, definitions, properties_of)

    def cloud_fields(self, props, names=None):
        fields = super().cloud_fields(props, names)
        if fields.get("fixed_ips"):
            fields["fixed_ips"] = [
                {k: v for k, v in (("subnet_id", ip.get("subnet_id") or ip.get("subnet")),
                                   ("ip_address", ip.get("ip_address"))) if v}
                for ip in fields["fixed_ips"]]
        return fields

    def attribute_value(self, found, name):
        if name == "subnets":
            return [ip["subnet_id"] for ip in found.get("fixed_ips") or []]
        if name == "network":
            network_id = found.get("network_id")
            return self.context.shared_read(
                ("network", network_id), lambda: self.cloud.object_get("network", network_id))
        return super().attribute_value(found, name)


@register
class SecurityGroup(NeutronResource):
    """A Neutron security group with its rules, as Heat makes them: Neutron's default egress
    rules stay unless the template has an egress rule; an update makes the group's rules
    the template's (the default egress rules kept where it has none)."""

    required_extension = "security-group"
    type_name = "OS::Neutron::SecurityGroup"
    kind = "security_group"
    properties_schema = {
        "name": prop("String", "Group name.", update_allowed=True),
        "description": prop("String", "Description.", update_allowed=True),
        "stateful": prop("Boolean", "A stateful group (else stateless).", update_allowed=True),
        "rules": prop("List", "Maps of direction, ethertype, protocol, port_range_min, "
                              "port_range_max, remote_ip_prefix, remote_group_id.",
                      update_allowed=True),
    }
    attributes_schema = attributes()



PORT_NUMBER = (Range(0, 65535),)


@register
class SecurityGroupRule(NeutronResource):
    """One rule of a security group (Heat's ``OS::Neutron::SecurityGroupRule``).

    Only ``description`` updates in place; any other change replaces the rule.
    """

    required_extension = "security-group"
    type_name = "OS::Neutron::SecurityGroupRule"
    kind = "security_group_rule"
    named = False
    changes_objects = {"security_group": "security_group"}
    properties_schema = {
        "security_group": prop("String", "Security group name or id.", required=True),
        "description": prop("String", "Description.", update_allowed=True),
        "direction": prop("String", "Direction of traffic.", default="ingress",
                          constraints=(AllowedValues(("ingress", "egress")),)),
        "ethertype": prop("String", "Ethertype.", default="IPv4",
                          constraints=(AllowedValues(("IPv4", "IPv6")),)),
        "port_range_min": prop("Integer", "Lowest port.", constraints=PORT_NUMBER),
        "port_range_max": prop("Integer", "Highest port.", constraints=PORT_NUMBER),
        "protocol": prop("String", "Protocol: a name (tcp, udp, icmp ...) or number."),
        "remote_group": prop("String", "Security group name or id the traffic comes from."),
        "remote_ip_prefix": prop("String", "CIDR the traffic comes from."),
    }
    field_names = {"security_group": "security_group_id", "remote_group": "remote_group_id"}
    attributes_schema = attributes()
