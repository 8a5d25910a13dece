"""resource_registry entries as Heat reads them: exact names first, then glob prefixes."""
from stacks.definitions import registry_mapping

REGISTRY = {"OS::Networking::*": "OS::Neutron::*", "Corp::Password": "OS::Heat::RandomString",
            "Corp::Net::Special": "special.yaml", "resources": {"web": {"hooks": "pre-create"}}}


def test_exact_entries_win_over_globs():
    assert registry_mapping(REGISTRY, "Corp::Password") == "OS::Heat::RandomString"
    assert registry_mapping({**REGISTRY, "OS::Networking::Net": "net.yaml"},
                            "OS::Networking::Net") == "net.yaml"


def test_a_glob_maps_the_rest_of_the_name():
    assert registry_mapping(REGISTRY, "OS::Networking::Net") == "OS::Neutron::Net"
    assert registry_mapping(REGISTRY, "OS::Networking::Sub::Thing") == "OS::Neutron::Sub::Thing"


def test_unmapped_names():
    assert registry_mapping(REGISTRY, "OS::Nova::Server") is None
    assert registry_mapping({"OS::*": "not-a-glob.yaml"}, "OS::Nova::Server") is None
