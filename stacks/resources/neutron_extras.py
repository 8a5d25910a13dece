"""More Neutron types: ``OS::Neutron::Trunk``, ``SubnetPool``, ``AddressScope``,
``QoSPolicy``, ``QoSBandwidthLimitRule``, ``QoSDscpMarkingRule``,
``QoSMinimumBandwidthRule``.

Each is a schema, a cloud kind and a field map; properties as Heat's.
"""
from stacks.resources.cloud_object import attributes, prop
from stacks.resources.neutron import TAGS, NeutronResource
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Property, Range

TENANT = prop("String", "Accepted; the object belongs to the project.")
PREFIXLEN = (Range(0, 128),)


@register
class SubnetPool(NeutronResource):
    """A pool of prefixes subnets take their CIDR from."""

    required_extension = "subnet_allocation"
    type_name = "OS::Neutron::SubnetPool"
    kind = "subnetpool"
    properties_schema = {
        "name": prop("String", "Pool name.", update_allowed=True),
        "prefixes": prop("List", "CIDRs of the pool.", required=True, update_allowed=True),
        "address_scope": prop("String", "Address scope name or id.", update_allowed=True),
        "default_quota": prop("Integer", "Per-project quota of addresses.",
                              constraints=(Range(0, None),), update_allowed=True),
        "default_prefixlen": prop("Integer", "Default prefix length.", constraints=PREFIXLEN,
                                  update_allowed=True),
        "min_prefixlen": prop("Integer", "Smallest prefix length.", constraints=PREFIXLEN,
                              update_allowed=True),
        "max_prefixlen": prop("Integer", "Largest prefix length.", constraints=PREFIXLEN,
                              update_allowed=True),
        "is_default": prop("Boolean", "The default pool.", default=False, update_allowed=True),
        "shared": prop("Boolean", "Shared with every project.", default=False),
        "tenant_id": TENANT,
        "tags": TAGS,
    }
    field_names = {"tags": None, "tenant_id": None, "address_scope": "address_scope_id"}
    attributes_schema = attributes("name", "prefixes", "address_scope_id", "default_quota",
                                   "default_prefixlen", "min_prefixlen", "max_prefixlen",
                                   "is_default", "shared", "tenant_id")


@register
class AddressScope(NeutronResource):
    """An address scope: subnet pools of one scope route between each other without NAT."""

    required_extension = "address-scope"
    type_name = "OS::Neutron::AddressScope"
    kind = "address_scope"
    properties_schema = {
        "name": prop("String", "Scope name.", update_allowed=True),
        "shared": prop("Boolean", "Shared with every project.", default=False,
                       update_allowed=True),
        "tenant_id": TENANT,
        "ip_version": prop("Integer", "4 or 6.", default=4,
                           constraints=(AllowedValues((4, 6)),)),
    }
    field_names = {"tenant_id": None}
    attributes_schema = attributes()


@register
class QoSPolicy(NeutronResource):
    """A QoS policy for networks and ports; its rules are separate resources."""

    required_extension = "qos"
    type_name = "OS::Neutron::QoSPolicy"
    kind = "qos_policy"
    properties_schema = {
        "name": prop("String", "Policy name.", update_allowed=True),
        "description": prop("String", "Description.", update_allowed=True),
        "shared": prop("Boolean", "Shared with every project.", default=False,
                       update_allowed=True),
        "tenant_id": TENANT,
    }
    field_names = {"tenant_id": None}
    attributes_schema = attributes("rules")


POLICY = prop("String", "QoS policy name or id.", required=True)
DIRECTION = prop("String", "Direction of the traffic.", default="egress",
                 constraints=(AllowedValues(("egress", "ingress")),))


class QoSRule(NeutronResource):
    """Base of the QoS rules: their id is ``<policy id>/<rule id>`` on OpenStack."""

    required_extension = "qos"
    named = False
    field_names = {"policy": "qos_policy_id", "tenant_id": None}
    changes_objects = {"policy": "qos_policy"}
    attributes_schema = attributes()


@register
class QoSBandwidthLimitRule(QoSRule):
    """A bandwidth limit of a QoS policy."""

    type_name = "OS::Neutron::QoSBandwidthLimitRule"
    kind = "qos_bandwidth_limit_rule"
    properties_schema = {
        "policy": POLICY,
        "max_kbps": prop("Integer", "Maximum bandwidth in kbps.", required=True,
                         constraints=(Range(0, None),), update_allowed=True),
        "max_burst_kbps": prop("Integer", "Maximum burst in kbps.", default=0,
                               constraints=(Range(0, None),), update_allowed=True),
        "direction": DIRECTION,
        "tenant_id": TENANT,
    }


@register
class QoSDscpMarkingRule(QoSRule):
    """A DSCP mark of a QoS policy's traffic."""

    type_name = "OS::Neutron::QoSDscpMarkingRule"
    kind = "qos_dscp_marking_rule"
    properties_schema = {
        "policy": POLICY,
        "dscp_mark": prop("Integer", "DSCP mark.", required=True, update_allowed=True,
                          constraints=(AllowedValues((0, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                                      26, 28, 30, 32, 34, 36, 38, 40, 46,
                                                      48, 56)),)),
        "tenant_id": TENANT,
    }


@register
class QoSMinimumBandwidthRule(QoSRule):
    """A guaranteed minimum bandwidth of a QoS policy."""

    required_extension = "qos-bw-minimum-ingress"
    type_name = "OS::Neutron::QoSMinimumBandwidthRule"
    kind = "qos_minimum_bandwidth_rule"
    properties_schema = {
        "policy": POLICY,
        "min_kbps": prop("Integer", "Minimum bandwidth in kbps.", required=True,
                         constraints=(Range(0, None),), update_allowed=True),
        "direction": prop("String", "Direction of the traffic.", default="egress",
                          constraints=(AllowedValues(("egress",)),)),
        "tenant_id": TENANT,
    }


SUB_PORT = Property("Map", description="A sub-port.", schema={
    "port": Property("String", description="Port name or id.", required=True),
    "segmentation_type": Property("String", description="vlan or inherit.", required=True,
                                  constraints=(AllowedValues(("vlan", "inherit")),)),
    "segmentation_id": Property("Integer", description="VLAN id.",
                                constraints=(Range(1, 4094),)),
})


@register
class Trunk(NeutronResource):
    """A trunk: a parent port carrying sub-ports (VLANs); sub-ports update in place."""

    required_extension = "trunk"
    type_name = "OS::Neutron::Trunk"
    changes_objects = {"port": "port"}
    kind = "trunk"
    properties_schema = {
        "port": prop("String", "Parent port name or id.", required=True),
        "sub_ports": prop("List", "Sub-ports.", default=[], update_allowed=True,
                          schema=SUB_PORT),
        "name": prop("String", "Trunk name.", update_allowed=True),
        "description": prop("String", "Description.", update_allowed=True),
        "admin_state_up": prop("Boolean", "Administrative state.", default=True,
                               update_allowed=True),
    }
    field_names = {"port": "port_id"}
    attributes_schema = attributes("status", "sub_ports", "port_id")

    def cloud_fields(self, props, names=None):
        fields = super().cloud_fields(props, names)
        if "sub_ports" in fields:
            fields["sub_ports"] = [
                {k: v for k, v in (("port_id", sub.get("port")),
                                   ("segmentation_type", sub.get("segmentation_type")),
                                   ("segmentation_id", sub.get("segmentation_id")))
                 if v is not None}
                for sub in fields["sub_ports"] or []]
        return fields
