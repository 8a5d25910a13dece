"""Neutron objects of the cloud: ``OS::Neutron::Net``, ``Subnet``, ``Port``, ``SecurityGroup``.

Properties and attributes as Heat's. The cloud driver keeps Neutron's own
field names; each plugin maps its properties to them. Objects are created
and deleted synchronously (as Neutron does), found again by their creation
key after a crash, and reported by ``check`` when deleted outside heatweb.
"""
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property


def _prop(kind, description, **kwargs):
    return Property(kind, description=description, **kwargs)


class NeutronResource(ResourcePlugin):
    cloud_calls_only = True
    """Base of the Neutron plugins: create, update in place, delete, check, attributes."""

    kind = ""
    # property name -> Neutron field name (a property not listed keeps its name)
    field_names = {}
    # attribute name -> Neutron field name
    attribute_fields = {}

    @property
    def cloud(self):
        return self.context.cloud

    def _fields(self, props, names=None):
        wanted = names if names is not None else props.keys()
        out = {}
        for key in wanted:
            if key in ("name", "value_specs") or props.get(key) is None:
                continue
            out[self.field_names.get(key, key)] = props[key]
        out.update(props.get("value_specs") or {})
        return out

    def _name(self, props):
        return props.get("name") or f"{self.context.stack_name}-{self.name}"

    def handle_create(self):
        self.physical_id = _cloud_call(
            self.cloud.network_object_create, self.kind, project_id=self.context.project_id,
            name=self._name(self.properties), creation_key=self.creation_key,
            find_first=self.creation_key_reused,
            **self._fields(self.properties))

    def _existing(self):
        found = _cloud_call(self.cloud.network_object_get, self.kind, self.physical_id)
        if found is None:
            raise ResourceFailure(f"The {self.kind.replace('_', ' ')} {self.physical_id} could "
                                  f"not be found (deleted outside heatweb)")
        return found

    def handle_update(self, new_properties, changed):
        self._existing()
        fields = self._fields(new_properties, names=[k for k in changed if k != "name"])
        for key in changed:  # a property removed is reset in the cloud
            if new_properties.get(key) is None and key not in ("name", "value_specs"):
                fields[self.field_names.get(key, key)] = None
        if "name" in changed:
            fields["name"] = self._name(new_properties)
        if fields:
            _cloud_call(self.cloud.network_object_update, self.kind, self.physical_id, **fields)
        self.properties = new_properties

    def handle_delete(self):
        if self.physical_id:
            _cloud_call(self.cloud.network_object_delete, self.kind, self.physical_id)

    def check_delete_complete(self, cookie):
        return not self.physical_id or \
            _cloud_call(self.cloud.network_object_get, self.kind, self.physical_id) is None

    def handle_check(self):
        self._existing()

    def get_attribute(self, name, *path):
        if not self.physical_id or not self.context:
            return None
        found = self.cloud.network_object_get(self.kind, self.physical_id)
        if found is None:
            return None
        if name == "show":
            return found
        return found.get(self.attribute_fields.get(name, name))


def _attributes(*names, **described):
    out = {name: Attribute(f"The object's {name.replace('_', ' ')}.") for name in names}
    out.update({k: Attribute(v) for k, v in described.items()})
    out["show"] = Attribute("Everything the cloud says of the object.")
    return out


@register
class Net(NeutronResource):
    """A Neutron network."""

    type_name = "OS::Neutron::Net"
    kind = "network"
    properties_schema = {
        "name": _prop("String", "Network name.", update_allowed=True),
        "admin_state_up": _prop("Boolean", "Administrative state.", default=True,
                                update_allowed=True),
        "shared": _prop("Boolean", "Shared with every project.", update_allowed=True),
        "port_security_enabled": _prop("Boolean", "Port security by default for its ports.",
                                       update_allowed=True),
        "dns_domain": _prop("String", "DNS domain.", update_allowed=True),
        "value_specs": _prop("Map", "Extra fields sent to Neutron.", default={},
                             update_allowed=True),
        "tenant_id": _prop("String", "Accepted; the network belongs to the project."),
        "tags": _prop("List", "Accepted; ignored.", update_allowed=True),
    }
    field_names = {"tenant_id": "project_id"}
    attributes_schema = _attributes("name", "status", "subnets", "admin_state_up", "tenant_id",
                                    "mtu", "port_security_enabled")

    def _fields(self, props, names=None):
        fields = super()._fields(props, names)
        fields.pop("tags", None)
        fields.pop("project_id", None)
        return fields


@register
class Subnet(NeutronResource):
    """A subnet of a Neutron network (its CIDR, gateway, DHCP, allocation pools)."""

    type_name = "OS::Neutron::Subnet"
    kind = "subnet"
    properties_schema = {
        "network": _prop("String", "Network name or id.", required=True),
        "cidr": _prop("String", "CIDR of the subnet.", required=True),
        "ip_version": _prop("Integer", "4 or 6.", default=4,
                            constraints=(AllowedValues((4, 6)),)),
        "name": _prop("String", "Subnet name.", update_allowed=True),
        "enable_dhcp": _prop("Boolean", "DHCP on the subnet.", default=True,
                             update_allowed=True),
        "gateway_ip": _prop("String", "Gateway IP.", update_allowed=True),
        "allocation_pools": _prop("List", "Maps of start and end.", update_allowed=True),
        "dns_nameservers": _prop("List", "DNS servers.", update_allowed=True),
        "host_routes": _prop("List", "Maps of destination and nexthop.", update_allowed=True),
        "value_specs": _prop("Map", "Extra fields sent to Neutron.", default={}),
        "tags": _prop("List", "Accepted; ignored.", update_allowed=True),
    }
    field_names = {"network": "network_id"}
    attributes_schema = _attributes("name", "network_id", "tenant_id", "allocation_pools",
                                    "gateway_ip", "host_routes", "ip_version", "cidr",
                                    "dns_nameservers", "enable_dhcp")

    def _fields(self, props, names=None):
        fields = super()._fields(props, names)
        fields.pop("tags", None)
        return fields


@register
class Port(NeutronResource):
    """A Neutron port: a network attachment with fixed IPs, for a server's ``networks``."""

    type_name = "OS::Neutron::Port"
    kind = "port"
    properties_schema = {
        "network": _prop("String", "Network name or id.", required=True),
        "name": _prop("String", "Port name.", update_allowed=True),
        "fixed_ips": _prop("List", "Maps of subnet (or subnet_id) and ip_address.",
                           update_allowed=True),
        "security_groups": _prop("List", "Security group names or ids.",
                                   update_allowed=True),
        "mac_address": _prop("String", "MAC address."),
        "admin_state_up": _prop("Boolean", "Administrative state.", default=True,
                                update_allowed=True),
        "device_id": _prop("String", "Device using the port.", update_allowed=True),
        "device_owner": _prop("String", "Owner of that device.", update_allowed=True),
        "port_security_enabled": _prop("Boolean", "Port security.", update_allowed=True),
        "allowed_address_pairs": _prop("List", "Maps of ip_address and mac_address.",
                                       update_allowed=True),
        "value_specs": _prop("Map", "Extra fields sent to Neutron.", default={},
                             update_allowed=True),
        "tags": _prop("List", "Accepted; ignored.", update_allowed=True),
    }
    field_names = {"network": "network_id"}
    attributes_schema = _attributes("name", "fixed_ips", "mac_address", "network_id",
                                    "device_id", "device_owner", "status", "security_groups",
                                    "tenant_id", "admin_state_up", "allowed_address_pairs",
                                    subnets="Subnet ids of the port's fixed IPs.")

    def _fields(self, props, names=None):
        fields = super()._fields(props, names)
        fields.pop("tags", None)
        if fields.get("fixed_ips"):
            fields["fixed_ips"] = [
                {k: v for k, v in (("subnet_id", ip.get("subnet_id") or ip.get("subnet")),
                                   ("ip_address", ip.get("ip_address"))) if v}
                for ip in fields["fixed_ips"]]
        return fields

    def get_attribute(self, name, *path):
        if name == "subnets":
            ips = super().get_attribute("fixed_ips") or []
            return [ip["subnet_id"] for ip in ips]
        return super().get_attribute(name, *path)


@register
class SecurityGroup(NeutronResource):
    """A Neutron security group with its rules (the rules given replace the group's rules)."""

    type_name = "OS::Neutron::SecurityGroup"
    kind = "security_group"
    properties_schema = {
        "name": _prop("String", "Group name.", update_allowed=True),
        "description": _prop("String", "Description.", update_allowed=True),
        "rules": _prop("List", "Maps of direction, ethertype, protocol, port_range_min, "
                               "port_range_max, remote_ip_prefix, remote_group_id.",
                       update_allowed=True),
    }
    attributes_schema = _attributes()

    def _fields(self, props, names=None):
        fields = super()._fields(props, names)
        if fields.get("rules") is not None:
            fields["rules"] = [{k: v for k, v in rule.items() if k != "remote_mode"}
                               for rule in fields["rules"]]
        return fields
