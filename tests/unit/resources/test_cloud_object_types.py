"""The Nova, Neutron and Keystone types on generic cloud objects: schema, defaults,
Heat's hidden alternatives, and the update-or-replace table (pure, no database).
"""
import pytest

from heatweb.exceptions import NotSupported, ResourceTypeNotFound, ResourceTypeUnavailable, \
    StackValidationFailed
from stacks.cloud.kinds import KINDS, resolve_refs
from stacks.resources import registry
from stacks.resources.base import ResourceFailure
from stacks.resources.cloud_object import CloudObjectResource
from stacks.resources.nova_floating_ip import one_external_network
from stacks.resources.unavailable import check_extension, refuse_unavailable


def validated(type_name, properties):
    return registry.get_plugin(type_name).validate_properties(properties, resource_name="r")


# type, minimal properties, the defaults Heat gives, {property: replaced?}
TABLE = [
    ("OS::Nova::Flavor", {"ram": 512, "vcpus": 1},
     {"disk": 0, "swap": 0, "ephemeral": 0, "rxtx_factor": 1.0, "is_public": True,
      "tenants": []},
     {"extra_specs": False, "tenants": False, "ram": True, "vcpus": True, "disk": True,
      "name": True, "is_public": True, "flavorid": True}),
    ("OS::Nova::KeyPair", {"name": "k"}, {"save_private_key": False},
     {"name": True, "public_key": True, "save_private_key": True}),
    ("OS::Nova::ServerGroup", {}, {"policies": ["anti-affinity"]},
     {"name": True, "policies": True}),
    ("OS::Nova::HostAggregate", {"name": "a"}, {"metadata": {}},
     {"name": False, "hosts": False, "metadata": False, "availability_zone": False}),
    ("OS::Nova::Quota", {"project": "p", "cores": 4}, {},
     {"cores": False, "instances": False, "ram": False, "project": True}),
    ("OS::Nova::FloatingIP", {}, {}, {"pool": True}),
    ("OS::Nova::FloatingIPAssociation", {"server_id": "s", "floating_ip": "f"}, {},
     {"server_id": False, "floating_ip": False}),
    ("OS::Designate::Zone", {"name": "example.com.", "email": "a@example.com"},
     {"type": "PRIMARY"}, {"email": False, "ttl": False, "description": False,
                           "primaries": False, "masters": False, "name": True, "type": True,
                           "attributes": True}),
    ("OS::Designate::RecordSet", {"zone": "z", "type": "A", "records": ["10.0.0.1"]}, {},
     {"records": False, "ttl": False, "description": False, "name": True, "type": True,
      "zone": True}),
    ("OS::Neutron::Router", {}, {"admin_state_up": True, "value_specs": {}},
     {"name": False, "external_gateway_info": False, "admin_state_up": False,
      "distributed": True, "ha": True}),
    ("OS::Neutron::RouterInterface", {"router": "r", "subnet": "s"}, {},
     {"router": True, "subnet": True, "port": True}),
    ("OS::Neutron::FloatingIP", {"floating_network": "public"}, {"value_specs": {}},
     {"port_id": False, "fixed_ip_address": False, "floating_network": True,
      "floating_ip_address": True}),
    ("OS::Neutron::FloatingIPAssociation", {"floatingip_id": "f", "port_id": "p"}, {},
     {"floatingip_id": False, "port_id": False, "fixed_ip_address": False}),
    ("OS::Neutron::SecurityGroupRule", {"security_group": "g"},
     {"direction": "ingress", "ethertype": "IPv4"},
     {"description": False, "protocol": True, "port_range_min": True, "direction": True}),
    ("OS::Neutron::Port", {"network": "n"}, {"admin_state_up": True},
     {"mac_address": False, "name": False, "network": True}),
    ("OS::Neutron::Subnet", {"network_id": "n", "cidr": "10.0.0.0/24"},
     {"ip_version": 4, "enable_dhcp": True}, {"cidr": True, "gateway_ip": False}),
    ("OS::Neutron::Trunk", {"port": "p"}, {"sub_ports": [], "admin_state_up": True},
     {"sub_ports": False, "name": False, "port": True}),
    ("OS::Neutron::ExtraRoute", {"router_id": "r", "destination": "10.1.0.0/24",
                                 "nexthop": "10.0.0.5"}, {},
     {"destination": True, "nexthop": True, "router_id": True}),
    ("OS::Neutron::ExtraRouteSet", {"router": "r", "routes": []}, {},
     {"routes": False, "router": True}),
    ("OS::Neutron::SubnetPool", {"prefixes": ["10.0.0.0/8"]},
     {"is_default": False, "shared": False}, {"prefixes": False, "shared": True}),
    ("OS::Neutron::AddressScope", {}, {"ip_version": 4, "shared": False},
     {"name": False, "ip_version": True}),
    ("OS::Neutron::ProviderNet", {"network_type": "flat"}, {"shared": True},
     {"network_type": False, "router_external": False}),
    ("OS::Neutron::QoSPolicy", {}, {"shared": False}, {"name": False, "description": False}),
    ("OS::Neutron::QoSBandwidthLimitRule", {"policy": "q", "max_kbps": 1000},
     {"max_burst_kbps": 0, "direction": "egress"},
     {"max_kbps": False, "max_burst_kbps": False, "policy": True, "direction": True}),
    ("OS::Neutron::QoSDscpMarkingRule", {"policy": "q", "dscp_mark": 10}, {},
     {"dscp_mark": False, "policy": True}),
    ("OS::Neutron::QoSMinimumBandwidthRule", {"policy": "q", "min_kbps": 10},
     {"direction": "egress"}, {"min_kbps": False, "policy": True}),
    ("OS::Keystone::Project", {}, {"domain": "default", "description": "", "enabled": True},
     {"name": False, "description": False, "enabled": False, "tags": False,
      "parent": True}),
    ("OS::Keystone::User", {}, {"domain": "default", "enabled": True},
     {"name": False, "password": False, "roles": False, "groups": False,
      "default_project": False}),
    ("OS::Keystone::Group", {}, {"domain": "default"}, {"name": False, "roles": False}),
    ("OS::Keystone::Role", {}, {}, {"name": False, "domain": True}),
    ("OS::Keystone::UserRoleAssignment", {"user": "u", "roles": []}, {},
     {"roles": False, "user": True}),
    ("OS::Keystone::GroupRoleAssignment", {"group": "g", "roles": []}, {},
     {"roles": False, "group": True}),
    ("OS::Keystone::Domain", {}, {"enabled": True}, {"name": False, "enabled": False}),
    ("OS::Keystone::Region", {}, {"enabled": True}, {"description": False, "id": True}),
    ("OS::Keystone::Service", {"type": "compute"}, {"enabled": True},
     {"type": False, "name": False}),
    ("OS::Keystone::Endpoint", {"service": "s", "interface": "public", "url": "http://x"},
     {"enabled": True}, {"url": False, "interface": False, "service": False}),
]


@pytest.mark.parametrize("type_name,minimal,defaults,replaces", TABLE,
                         ids=[row[0] for row in TABLE])
def test_schema_defaults_and_update_or_replace(type_name, minimal, defaults, replaces):
    props = validated(type_name, minimal)
    for key, value in defaults.items():
        assert props[key] == value, key
    plugin = registry.get_plugin(type_name)
    for key, replaced in replaces.items():
        assert plugin.needs_replacement([key]) is replaced, key
    doc = plugin.schema_doc()
    assert doc["resource_type"] == type_name and doc["description"]
    assert set(doc["properties"]) == set(plugin.properties_schema)


@pytest.mark.parametrize("type_name", sorted({row[0] for row in TABLE}))
def test_each_type_names_a_declared_kind(type_name):
    plugin = registry.get_plugin(type_name)
    assert issubclass(plugin, CloudObjectResource)
    assert plugin.kind in KINDS


@pytest.mark.parametrize("type_name,properties,message", [
    ("OS::Nova::Flavor", {"vcpus": 1}, "Property ram not assigned"),
    ("OS::Nova::Flavor", {"ram": 0, "vcpus": 1}, "ram: 0 is out of range"),
    ("OS::Nova::KeyPair", {"name": ""}, "length (0) is out of range"),
    ("OS::Nova::ServerGroup", {"policies": ["spread"]}, "not an allowed value"),
    ("OS::Nova::Quota", {"project": "p", "cores": -2}, "-2 is out of range"),
    ("OS::Nova::Quota", {"project": "p"},
     "At least one of the following properties must be specified: cores, fixed_ips"),
    ("OS::Nova::FloatingIPAssociation", {"server_id": "s"}, "Property floating_ip not assigned"),
    ("OS::Designate::Zone", {"name": "example.com."},
     "Property email is required for zone type PRIMARY"),
    ("OS::Designate::Zone", {"name": "example.com.", "type": "SECONDARY"},
     "Property masters is required for zone type SECONDARY"),
    ("OS::Designate::RecordSet", {"zone": "z", "type": "B", "records": []},
     "not an allowed value"),
    ("OS::Neutron::RouterInterface", {"router": "r"},
     "At least one of the following properties must be specified: subnet, subnet_id, port"),
    ("OS::Neutron::RouterInterface", {"router": "r", "subnet": "s", "port": "p"},
     "Cannot define the following properties at the same time: subnet, port"),
    ("OS::Neutron::Router", {"external_gateway_info": {"enable_snat": True}},
     "Property network not assigned"),
    ("OS::Neutron::Port", {}, "network, network_id"),
    ("OS::Neutron::Subnet", {"network": "n"}, "cidr, subnetpool"),
    ("OS::Neutron::SecurityGroupRule", {"security_group": "g", "port_range_min": 70000},
     "70000 is out of range"),
    ("OS::Neutron::QoSDscpMarkingRule", {"policy": "q", "dscp_mark": 3}, "not an allowed"),
    ("OS::Keystone::Endpoint", {"service": "s", "interface": "private", "url": "u"},
     "not an allowed value"),
    ("OS::Keystone::UserRoleAssignment", {"user": "u", "roles": [{"project": "p"}]},
     "Property role not assigned"),
])
def test_bad_properties_are_refused_in_heats_words(type_name, properties, message):
    with pytest.raises(StackValidationFailed, match=message.replace("(", r"\(")
                       .replace(")", r"\)")):
        validated(type_name, properties)


def test_port_and_subnet_accept_heats_hidden_network_id():
    assert validated("OS::Neutron::Port", {"network_id": "n"})["network_id"] == "n"
    with pytest.raises(StackValidationFailed, match="at the same time: network, network_id"):
        validated("OS::Neutron::Port", {"network": "n", "network_id": "n"})


def test_a_router_gateway_becomes_neutrons_external_gateway_info():
    plugin = registry.get_plugin("OS::Neutron::Router")
    props = validated("OS::Neutron::Router", {"external_gateway_info": {
        "network": "public", "enable_snat": False,
        "external_fixed_ips": [{"subnet": "pub-sub", "ip_address": "172.24.4.9"}]}})
    fields = plugin(name="r", properties=props, context=None).cloud_fields(props)
    assert fields["external_gateway_info"] == {
        "network_id": "public", "enable_snat": False,
        "external_fixed_ips": [{"subnet_id": "pub-sub", "ip_address": "172.24.4.9"}]}


def test_refs_name_other_objects_at_any_depth():
    looked = []

    def lookup(kind, name):
        looked.append((kind, name))
        return f"{kind}-id"

    fields = resolve_refs("port", {"network_id": "private", "fixed_ips": [
        {"subnet_id": "sub", "ip_address": "10.0.0.5"}, {"ip_address": "10.0.0.6"}],
        "security_groups": ["web", "default"]}, lookup)
    assert fields == {"network_id": "network-id", "fixed_ips": [
        {"subnet_id": "subnet-id", "ip_address": "10.0.0.5"}, {"ip_address": "10.0.0.6"}],
        "security_groups": ["security_group-id", "security_group-id"]}
    router = resolve_refs("router", {"external_gateway_info": {"network_id": "public"}},
                          lookup)
    assert router == {"external_gateway_info": {"network_id": "network-id"}}


@pytest.mark.parametrize("type_name,service,service_type", [
    ("OS::Magnum::ClusterTemplate", "magnum", "container-infra"),
    ("OS::Zun::Container", "zun", "container"),
    ("OS::Manila::Share", "manila", "sharev2"),
    ("OS::Trove::Instance", "trove", "database"),
    ("OS::Octavia::AvailabilityZone", "octavia", "load-balancer"),
    ("OS::Blazar::Lease", "blazar", "reservation"),
])
def test_a_type_of_a_missing_service_is_unavailable_not_unknown(type_name, service,
                                                                service_type, monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    with pytest.raises(ResourceTypeUnavailable) as raised:
        registry.get_plugin(type_name)
    assert str(raised.value) == (
        f"HEAT-E99001 Service {service} is not available for resource type {type_name}, "
        f"reason: {service} {service_type} endpoint is not in service catalog.")
    assert type_name not in registry.list_types()
    with pytest.raises(ResourceTypeNotFound):
        registry.get_plugin("OS::Mistral::NoSuchThing")


def test_mistral_types_are_unavailable_on_a_cloud_without_workflowv2(monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    for type_name, service, service_type in (
            ("OS::Mistral::Workflow", "mistral", "workflowv2"),
            ("OS::Mistral::CronTrigger", "mistral", "workflowv2"),
            ("OS::Mistral::ExternalResource", "mistral", "workflowv2"),
            ("OS::Zaqar::MistralTrigger", "zaqar", "messaging")):
        with pytest.raises(ResourceTypeUnavailable) as raised:
            check_extension(registry.get_plugin(type_name), type_name)
        assert str(raised.value) == (
            f"HEAT-E99001 Service {service} is not available for resource type {type_name}, "
            f"reason: {service} {service_type} endpoint is not in service catalog.")


def test_designate_types_are_unavailable_on_a_cloud_without_dns(monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    for type_name in ("OS::Designate::Zone", "OS::Designate::RecordSet"):
        with pytest.raises(ResourceTypeUnavailable) as raised:
            check_extension(registry.get_plugin(type_name), type_name)
        assert str(raised.value) == (
            f"HEAT-E99001 Service designate is not available for resource type {type_name}, "
            f"reason: designate dns endpoint is not in service catalog.")


def test_zaqar_types_are_unavailable_on_a_cloud_without_messaging(monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    for type_name in ("OS::Zaqar::Queue", "OS::Zaqar::SignedQueueURL",
                      "OS::Zaqar::Subscription"):
        with pytest.raises(ResourceTypeUnavailable) as raised:
            check_extension(registry.get_plugin(type_name), type_name)
        assert str(raised.value) == (
            f"HEAT-E99001 Service zaqar is not available for resource type {type_name}, "
            f"reason: zaqar messaging endpoint is not in service catalog.")


def test_aodh_types_are_unavailable_on_a_cloud_without_alarming(monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    for type_name in ("OS::Aodh::GnocchiAggregationByResourcesAlarm", "OS::Aodh::Alarm",
                      "OS::Aodh::CombinationAlarm"):
        with pytest.raises(ResourceTypeUnavailable) as raised:
            check_extension(registry.get_plugin(type_name), type_name)
        assert str(raised.value) == (
            f"HEAT-E99001 Service aodh is not available for resource type {type_name}, "
            f"reason: aodh alarming endpoint is not in service catalog.")


def test_an_alarm_waits_for_the_resources_its_actions_name():
    """Heat's actions_to_urls: an action that is a resource's name is its AlarmUrl; the
    alarm waits for it. URLs, other values and unknown names are not resources."""
    definitions = {"up": None, "down": None, "alarm": None, "group": None}
    properties = {"alarm_actions": ["up", "https://example.com/x", {"up": 1}, "nothing"],
                  "ok_actions": ["down", "up"], "insufficient_data_actions": None,
                  "description": "group"}
    for type_name in ("OS::Aodh::EventAlarm", "OS::Aodh::CompositeAlarm"):
        plugin = registry.get_plugin(type_name)
        assert plugin.implicit_depends_on("alarm", definitions, lambda n: properties) == \
            ["down", "up"]
        assert set(plugin.named_resource_attributes.values()) == {"AlarmUrl"}
    assert registry.get_plugin("OS::Heat::None").implicit_depends_on(
        "alarm", definitions, lambda n: properties) == ()


def test_retired_types_are_hidden_none_resources_as_in_heat():
    plugin = registry.get_plugin("OS::Sahara::Cluster")
    assert plugin.validate_properties({"anything": 1}, resource_name="c") == {"anything": 1}
    assert "OS::Senlin::Cluster" not in registry.list_types()
    with pytest.raises(NotSupported, match="OS::Senlin::Cluster is not supported"):
        refuse_unavailable("OS::Senlin::Cluster")


def test_novas_floating_ip_types_are_heats_hidden_ones_with_heats_schema():
    for type_name in ("OS::Nova::FloatingIP", "OS::Nova::FloatingIPAssociation"):
        assert type_name not in registry.list_types()
        with pytest.raises(NotSupported, match=f"{type_name} is not supported"):
            refuse_unavailable(type_name)
    fip = registry.get_plugin("OS::Nova::FloatingIP").schema_doc()
    assert {k: (p["type"], p["required"], p["update_allowed"])
            for k, p in fip["properties"].items()} == {"pool": ("string", False, False)}
    assert {k: a["type"] for k, a in fip["attributes"].items()} == \
        {"pool": "string", "ip": "string", "show": "map"}
    association = registry.get_plugin("OS::Nova::FloatingIPAssociation").schema_doc()
    assert {k: (p["type"], p["required"], p["update_allowed"])
            for k, p in association["properties"].items()} == \
        {"server_id": ("string", True, True), "floating_ip": ("string", True, True)}
    assert set(association["attributes"]) == {"show"}


class ExternalNetworks:
    """A cloud that answers only the search for external networks."""

    def __init__(self, ids):
        self.ids = ids

    def object_search(self, kind, **fields):
        assert (kind, fields) == ("network", {"router:external": True})
        return self.ids


def test_a_nova_floating_ip_without_a_pool_takes_the_clouds_one_external_network():
    plugin = registry.get_plugin("OS::Nova::FloatingIP")
    with_pool = plugin(name="f", properties={"pool": "public"}, context=None)
    assert with_pool.cloud_fields({"pool": "public"}) == {"floating_network_id": "public"}
    assert one_external_network(ExternalNetworks(["n1"])) == "n1"
    for ids in ([], ["n1", "n2"]):
        with pytest.raises(ResourceFailure, match=f"Expected 1 external network, found "
                                                  f"{len(ids)}$"):
            one_external_network(ExternalNetworks(ids))
