"""The child environment a nested stack or group gets, and Heat's implicit dependencies."""
import pytest

from heatweb.exceptions import ResourceTypeNotFound
from stacks.definitions import build_definition, normalize_environment
from stacks.hot.environment import child_environment


def test_child_environment_keeps_all_but_the_parents_parameters():
    parent = {"parameters": {"p": 1}, "parameter_defaults": {"flavor": "m1.small"},
              "resource_registry": {"My::Server": "server.yaml", "My::Other": "OS::Heat::None",
                                    "resources": {"web": {"hooks": "pre-create"},
                                                  "db": {"hooks": "pre-delete"}}},
              "event_sinks": []}
    child = child_environment(parent, resource_name="web")
    assert child == {"parameter_defaults": {"flavor": "m1.small"}, "event_sinks": [],
                     "resource_registry": {"My::Server": "server.yaml",
                                           "My::Other": "OS::Heat::None",
                                           "resources": {}}}
    # A nested stack's own entries (``resources: {owner: {inner: {hooks: ...}}}``) are
    # what its child's ``resources`` section holds, as Heat's remove_resources_except.
    nested = {"resource_registry": {"resources": {"web": {"inner": {"hooks": "pre-create"}},
                                                  "w*": {"other": {"hooks": "pre-update"}}}}}
    assert child_environment(nested, resource_name="web")["resource_registry"] == {
        "resources": {"inner": {"hooks": "pre-create"}, "other": {"hooks": "pre-update"}}}
    # A template resource's child does not map its own type to itself again.
    own = child_environment(parent, resource_name="x", template_file="server.yaml")
    assert own["resource_registry"] == {"My::Other": "OS::Heat::None", "resources": {}}
    assert child_environment(None, resource_name="x") == {}


MEMBER = """heat_template_version: 2016-10-14
parameters:
  flavor: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: flavor}}}
"""


@pytest.mark.parametrize("group", [
    {"type": "OS::Heat::ResourceGroup",
     "properties": {"count": 2, "resource_def": {"type": "My::Member"}}},
    {"type": "OS::Heat::AutoScalingGroup",
     "properties": {"min_size": 1, "max_size": 2, "resource": {"type": "My::Member"}}},
    {"type": "OS::Heat::ResourceChain", "properties": {"resources": ["My::Member"]}},
])
def test_a_group_whose_member_type_is_mapped_validates(group):
    template = {"heat_template_version": "2016-10-14", "resources": {"g": group}}
    env = normalize_environment({"resource_registry": {"My::Member": "member.yaml"},
                                 "parameter_defaults": {"flavor": "m1.tiny"}})
    build_definition(template, environment=env, files={"member.yaml": MEMBER})
    with pytest.raises(ResourceTypeNotFound, match="My::Member"):
        build_definition(template, environment=normalize_environment({}),
                         files={"member.yaml": MEMBER})


NETWORK = {
    "net": {"type": "OS::Neutron::Net"},
    "subnet_a": {"type": "OS::Neutron::Subnet",
                 "properties": {"network": {"get_resource": "net"}, "cidr": "10.0.0.0/24"}},
    "subnet_b": {"type": "OS::Neutron::Subnet",
                 "properties": {"network": {"get_resource": "net"}, "cidr": "10.0.1.0/24"}},
    "other_subnet": {"type": "OS::Neutron::Subnet",
                     "properties": {"network": "public", "cidr": "10.1.0.0/24"}},
    "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
    "server": {"type": "OS::Nova::Server", "properties": {
        "image": "cirros", "flavor": "m1.tiny", "networks": [{"network": {"get_resource": "net"}}]}},
    "server_on_port": {"type": "OS::Nova::Server", "properties": {
        "image": "cirros", "flavor": "m1.tiny", "networks": [{"port": {"get_resource": "port"}}]}},
}


def test_ports_and_servers_wait_for_their_networks_subnets():
    definition = build_definition({"heat_template_version": "2016-10-14", "resources": NETWORK},
                                  environment=normalize_environment({}))
    deps = {name: d.depends_on for name, d in definition.resources.items()}
    assert deps["port"] == ("net", "subnet_a", "subnet_b")
    assert deps["server"] == ("net", "subnet_a", "subnet_b")
    assert deps["server_on_port"] == ("port",)
    assert deps["subnet_a"] == ("net",)


def test_an_implicit_dependency_that_would_close_a_cycle_is_left_out():
    resources = {**NETWORK, "subnet_a": {"type": "OS::Neutron::Subnet", "properties": {
        "network": {"get_resource": "net"}, "cidr": "10.0.0.0/24"},
        "depends_on": "port"}}
    definition = build_definition({"heat_template_version": "2016-10-14",
                                   "resources": resources}, environment=normalize_environment({}))
    assert "subnet_a" not in definition.resources["port"].depends_on
    assert "subnet_b" in definition.resources["port"].depends_on


def test_a_floating_ip_of_a_port_waits_for_the_router_interfaces_of_its_network():
    resources = {
        **NETWORK,
        "router": {"type": "OS::Neutron::Router"},
        "interface_a": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet_a"}}},
        "interface_other": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "other_subnet"}}},
        "fip": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network": "public", "port_id": {"get_resource": "port"}}},
        "fip_alone": {"type": "OS::Neutron::FloatingIP", "properties": {
            "floating_network": "public"}},
        "association": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {
            "floatingip_id": {"get_resource": "fip_alone"},
            "port_id": {"get_resource": "port"}}},
    }
    definition = build_definition({"heat_template_version": "2016-10-14",
                                   "resources": resources}, environment=normalize_environment({}))
    deps = {name: d.depends_on for name, d in definition.resources.items()}
    assert deps["fip"] == ("interface_a", "port")
    assert deps["fip_alone"] == ()
    assert deps["association"] == ("fip_alone", "interface_a", "port")


def test_extra_routes_wait_for_their_routers_interfaces():
    """Heat's ExtraRoute(Set) add_dependencies: a next hop must be on a subnet the router
    is attached to, so the routes wait for that router's interfaces (not another's)."""
    resources = {
        **NETWORK,
        "router": {"type": "OS::Neutron::Router"},
        "other_router": {"type": "OS::Neutron::Router"},
        "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet_a"}}},
        "other_interface": {"type": "OS::Neutron::RouterInterface", "properties": {
            "router_id": {"get_resource": "other_router"},
            "subnet": {"get_resource": "subnet_b"}}},
        "routes": {"type": "OS::Neutron::ExtraRouteSet", "properties": {
            "router": {"get_resource": "router"},
            "routes": [{"destination": "10.9.0.0/24", "nexthop": "10.0.0.10"}]}},
        "route": {"type": "OS::Neutron::ExtraRoute", "properties": {
            "router_id": {"get_resource": "other_router"}, "destination": "10.9.0.0/24",
            "nexthop": "10.0.1.10"}},
    }
    definition = build_definition({"heat_template_version": "2016-10-14",
                                   "resources": resources}, environment=normalize_environment({}))
    deps = {name: d.depends_on for name, d in definition.resources.items()}
    assert deps["routes"] == ("interface", "router")
    assert deps["route"] == ("other_interface", "other_router")
