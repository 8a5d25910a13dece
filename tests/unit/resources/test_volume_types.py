"""Cinder's, Swift's and Barbican's types and a server's block devices: schema, defaults,
update-or-replace, Heat's refusals, the mapping Nova gets, deletion policies (pure).
"""
from types import SimpleNamespace

import pytest

from heatweb.exceptions import ResourceTypeUnavailable, StackValidationFailed
from stacks.resources import registry
from stacks.resources.block_devices import block_devices, check_bootable
from stacks.resources.deletion_policy import deletion_policy, template_policies, with_policy
from stacks.resources.unavailable import check_extension, refuse_unavailable, \
    type_available

CINDER_TYPES = ("OS::Cinder::Volume", "OS::Cinder::VolumeAttachment", "OS::Cinder::VolumeType",
                "OS::Cinder::QoSSpecs", "OS::Cinder::EncryptedVolumeType",
                "OS::Cinder::QoSAssociation")


def validated(type_name, properties):
    return registry.get_plugin(type_name).validate_properties(properties, resource_name="r")


@pytest.mark.parametrize("type_name,props,defaults,replaces", [
    ("OS::Cinder::Volume", {"size": 1}, {"metadata": {}, "multiattach": False},
     {"size": False, "name": False, "description": False, "metadata": False,
      "volume_type": False, "read_only": False, "image": True, "snapshot_id": True,
      "source_volid": True, "availability_zone": True}),
    ("OS::Cinder::VolumeAttachment", {"instance_uuid": "s", "volume_id": "v"}, {},
     {"instance_uuid": False, "volume_id": False, "mountpoint": False}),
    ("OS::Cinder::VolumeType", {"name": "t"}, {"is_public": True, "projects": []},
     {"name": False, "metadata": False, "is_public": False, "description": False}),
    ("OS::Cinder::QoSSpecs", {"specs": {"read_iops_sec": "100"}}, {},
     {"specs": False, "name": True}),
    ("OS::Cinder::QoSAssociation", {"qos_specs": "q", "volume_types": ["t"]}, {},
     {"volume_types": False, "qos_specs": True}),
    ("OS::Cinder::EncryptedVolumeType", {"provider": "luks", "volume_type": "t"},
     {"control_location": "front-end"},
     {"provider": False, "cipher": False, "key_size": False, "control_location": False,
      "volume_type": True}),
])
def test_schema_defaults_and_what_replaces(type_name, props, defaults, replaces):
    plugin = registry.get_plugin(type_name)
    got = validated(type_name, props)
    assert {k: got[k] for k in defaults} == defaults
    assert {k: plugin.needs_replacement({k}) for k in replaces} == replaces
    assert plugin.required_service == ("cinder", "volumev3")


def test_volume_refusals_as_heat():
    with pytest.raises(StackValidationFailed, match="size must be given"):
        validated("OS::Cinder::Volume", {"name": "v"})
    assert validated("OS::Cinder::Volume", {"snapshot_id": "s"})["snapshot_id"] == "s"
    # from a backup: no size (Cinder's restore takes the backup's), only the name and
    # description go with it, as Heat's restores.restore then volumes.update
    restored = validated("OS::Cinder::Volume", {"backup_id": "b", "description": "d",
                                                "metadata": {"k": "v"}})
    volume = registry.get_plugin("OS::Cinder::Volume")(name="v", properties=restored,
                                                        context=None)
    assert volume.cloud_fields(restored) == {"backup_id": "b", "description": "d"}
    with pytest.raises(Exception, match="out of range"):
        validated("OS::Cinder::Volume", {"size": 0})
    with pytest.raises(Exception, match="allowed value"):
        validated("OS::Cinder::EncryptedVolumeType",
                  {"provider": "p", "volume_type": "t", "key_size": 100})


def test_volume_attributes_are_shown_as_heat_shows_them():
    plugin = registry.get_plugin("OS::Cinder::Volume")
    found = {"size": 2, "name": "v", "description": "d", "metadata": {"a": "b"},
             "bootable": "true", "encrypted": False, "status": "in-use", "multiattach": False,
             "attachments": [{"server_id": "s1", "device": "/dev/vdb"}]}
    value = lambda name: plugin.attribute_value(plugin.__new__(plugin), found, name)  # noqa: E731
    assert value("size") == "2" and value("bootable") == "true"
    assert value("encrypted") == "False" and value("status") == "in-use"
    assert value("metadata") == '{"a": "b"}' and value("metadata_values") == {"a": "b"}
    assert value("display_name") == "v" and value("display_description") == "d"
    assert value("attachments_list") == found["attachments"]
    assert value("multiattach") is False and value("show") is found


def test_block_device_mapping_v2_boots_from_an_image_volume_and_attaches_more():
    props = validated("OS::Nova::Server", {"flavor": "m1", "block_device_mapping_v2": [
        {"image": "cirros", "volume_size": 1, "delete_on_termination": True},
        {"volume_id": "v2", "device_name": "vdb"}, {"swap_size": 2048}]})
    assert block_devices(props) == [
        {"source_type": "image", "destination_type": "volume", "uuid": "cirros",
         "volume_size": 1, "delete_on_termination": True, "boot_index": 0},
        {"source_type": "volume", "destination_type": "volume", "uuid": "v2",
         "device_name": "vdb", "delete_on_termination": False, "boot_index": -1},
        {"source_type": "blank", "destination_type": "local", "guest_format": "swap",
         "volume_size": 2, "delete_on_termination": False, "boot_index": -1}]


def test_block_device_mapping_v1_boots_from_vda():
    props = validated("OS::Nova::Server", {"flavor": "m1", "block_device_mapping": [
        {"device_name": "vda", "volume_id": "v1", "delete_on_termination": True}]})
    assert block_devices(props)[0] == {
        "device_name": "vda", "source_type": "volume", "destination_type": "volume",
        "uuid": "v1", "volume_size": None, "delete_on_termination": True, "boot_index": 0}
    with pytest.raises(Exception, match="device_name not assigned"):
        validated("OS::Nova::Server", {"flavor": "m1", "image": "i",
                                       "block_device_mapping": [{"volume_id": "v"}]})


def test_a_server_needs_an_image_or_a_bootable_volume():
    with pytest.raises(StackValidationFailed) as raised:
        validated("OS::Nova::Server", {"flavor": "m1"})
    assert str(raised.value.message) == \
        "Neither image nor bootable volume is specified for instance r"
    with pytest.raises(StackValidationFailed):
        validated("OS::Nova::Server", {"flavor": "m1", "block_device_mapping_v2": [
            {"volume_id": "v", "boot_index": -1}]})
    assert validated("OS::Nova::Server", {"flavor": "m1", "image": "i"})["image"] == "i"
    check_bootable({"block_device_mapping_v2": object()}, resource_name="r")  # unresolved


def test_deletion_policy_of_the_template_that_made_the_resource():
    assert template_policies({"resources": {"vol": {"deletion_policy": "Retain"},
                                            "other": {}}}) == {"vol": "Retain"}
    assert template_policies({"resources": {"vol": {"deletion_policy": "snapshot"}}}) == \
        {"vol": "Snapshot"}
    assert template_policies({"Resources": {"vol": {"DeletionPolicy": "Retain"}}}) == \
        {"vol": "Retain"}
    assert template_policies({"resources": {"vol": {"deletion_policy": "Delete"}}}) == {}
    assert template_policies(None) == {}
    assert deletion_policy(SimpleNamespace(template_id=None, name="vol")) == "Delete"


def test_retain_and_snapshot_change_what_delete_does():
    volume = registry.get_plugin("OS::Cinder::Volume")
    retained = with_policy(volume, "Retain")(name="v", properties={}, context=None,
                                             physical_id="x")
    assert retained.handle_delete() is None and retained.check_delete_complete(None) is True
    assert with_policy(volume, "Snapshot").handle_delete is not volume.handle_delete
    # Heat's handle_snapshot_delete(state): a backup, unless the create or update failed
    snapped = [with_policy(volume, "Snapshot", state)(name="v", properties={}, context=None,
                                                      physical_id="x").handle_delete()
               for state in (("CREATE", "COMPLETE"), ("UPDATE", "FAILED"), None)]
    assert snapped == [{"backup": "wanted"}, {"backup": "done"}, {"backup": "wanted"}]
    server = registry.get_plugin("OS::Nova::Server")
    assert with_policy(server, "Snapshot") is server  # no snapshot: deleted as Delete
    assert with_policy(volume, "Delete") is volume


@pytest.mark.parametrize("type_name,service,service_type", [
    *((name, "cinder", "volumev3") for name in CINDER_TYPES),
    ("OS::Swift::Container", "swift", "object-store"),
    ("OS::Heat::SwiftSignal", "swift", "object-store"),
    *((f"OS::Octavia::{name}", "octavia", "load-balancer") for name in (
        "LoadBalancer", "Listener", "Pool", "PoolMember", "HealthMonitor", "L7Policy",
        "L7Rule")),
    *((f"OS::Barbican::{name}", "barbican", "key-manager") for name in (
        "Secret", "Order", "GenericContainer", "CertificateContainer", "RSAContainer")),
])
def test_types_are_unavailable_without_their_service_in_the_catalog(
        type_name, service, service_type, monkeypatch):
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: False)
    message = (f"HEAT-E99001 Service {service} is not available for resource type "
               f"{type_name}, reason: {service} {service_type} endpoint is not in service "
               f"catalog.")
    with pytest.raises(ResourceTypeUnavailable) as raised:
        check_extension(registry.get_plugin(type_name), type_name)
    assert str(raised.value) == message
    with pytest.raises(ResourceTypeUnavailable):
        refuse_unavailable(type_name)
    assert not type_available(type_name)
    monkeypatch.setattr("stacks.resources.unavailable._in_catalog", lambda st: True)
    check_extension(registry.get_plugin(type_name), type_name)
    assert type_available(type_name)


def test_barbican_refusals_and_container_fields_as_heat():
    with pytest.raises(StackValidationFailed, match="payload_content_type must be provided"):
        validated("OS::Barbican::Secret", {"payload": "x"})
    with pytest.raises(StackValidationFailed, match="payload needs to be specified"):
        validated("OS::Barbican::Secret", {"payload_content_type": "text/plain"})
    with pytest.raises(StackValidationFailed, match="application/octet-stream"):
        validated("OS::Barbican::Secret", {"payload": "eA==", "payload_content_type":
                                           "text/plain", "payload_content_encoding": "base64"})
    assert validated("OS::Barbican::Secret", {})["secret_type"] == "opaque"
    with pytest.raises(Exception, match="type"):
        validated("OS::Barbican::Order", {})
    rsa = registry.get_plugin("OS::Barbican::RSAContainer")
    fields = rsa.cloud_fields(rsa.__new__(rsa), {"private_key_ref": "p", "public_key_ref": "q"})
    assert fields == {"type": "rsa", "secret_refs": [
        {"name": "private_key", "secret_ref": "p"}, {"name": "public_key", "secret_ref": "q"}]}
    generic = registry.get_plugin("OS::Barbican::GenericContainer")
    props = validated("OS::Barbican::GenericContainer", {"secrets": [{"name": "a", "ref": "r"}]})
    assert generic.cloud_fields(generic.__new__(generic), props) == {
        "type": "generic", "secret_refs": [{"name": "a", "secret_ref": "r"}]}
    for type_name in ("OS::Barbican::Secret", "OS::Barbican::Order", "OS::Swift::Container"):
        plugin = registry.get_plugin(type_name)
        assert all(plugin.needs_replacement({key}) for key in plugin.properties_schema)


def test_swift_container_defaults_and_attributes():
    props = validated("OS::Swift::Container", {"X-Container-Read": ".r:*"})
    assert props["PurgeOnDelete"] is False and props["X-Container-Meta"] == {}
    plugin = registry.get_plugin("OS::Swift::Container")
    found = {"url": "http://127.0.0.1:8080/v1/AUTH_p/c", "endpoint": "http://127.0.0.1:8080/"
             "v1/AUTH_p", "object_count": 0, "bytes_used": 0, "headers": {"X-A": "b"}}
    value = lambda name: plugin.attribute_value(plugin.__new__(plugin), found, name)  # noqa: E731
    assert value("DomainName") == "127.0.0.1"
    assert value("WebsiteURL") == found["url"] and value("RootURL") == found["endpoint"]
    assert (value("ObjectCount"), value("BytesUsed")) == (0, 0)
    assert value("HeadContainer") == {"X-A": "b"}


def test_a_volume_or_image_not_resolved_yet_counts_as_given():
    from stacks.hot.values import UNRESOLVED

    props = validated("OS::Nova::Server", {"flavor": "m1", "block_device_mapping_v2": [
        {"volume_id": UNRESOLVED}]})
    assert block_devices(props)[0]["source_type"] == "volume"
    assert validated("OS::Nova::Server", {"flavor": "m1", "image": UNRESOLVED})["flavor"] == "m1"


@pytest.mark.parametrize("type_name,props,replaces", [
    ("OS::Octavia::LoadBalancer", {"vip_subnet": "s"},
     {"name": False, "description": False, "admin_state_up": False, "vip_subnet": True,
      "vip_address": True, "provider": True}),
    ("OS::Octavia::Listener", {"loadbalancer": "lb", "protocol": "HTTP", "protocol_port": 80},
     {"default_pool": False, "connection_limit": False, "protocol": True,
      "protocol_port": True, "loadbalancer": True}),
    ("OS::Octavia::Pool", {"listener": "l", "lb_algorithm": "ROUND_ROBIN", "protocol": "HTTP"},
     {"lb_algorithm": False, "session_persistence": False, "protocol": True,
      "listener": True}),
    ("OS::Octavia::PoolMember", {"pool": "p", "address": "10.0.0.5", "protocol_port": 80},
     {"weight": False, "address": True, "pool": True, "protocol_port": True}),
    ("OS::Octavia::HealthMonitor", {"pool": "p", "type": "HTTP", "delay": 5, "timeout": 3,
                                    "max_retries": 3},
     {"delay": False, "timeout": False, "url_path": False, "type": True, "pool": True}),
    ("OS::Octavia::L7Policy", {"listener": "l", "action": "REJECT"},
     {"action": False, "redirect_url": False, "listener": True}),
    ("OS::Octavia::L7Rule", {"l7policy": "p", "type": "PATH", "compare_type": "STARTS_WITH",
                             "value": "/api"},
     {"value": False, "compare_type": False, "l7policy": True}),
])
def test_octavia_types_what_replaces(type_name, props, replaces):
    plugin = registry.get_plugin(type_name)
    validated(type_name, props)
    assert {k: plugin.needs_replacement({k}) for k in replaces} == replaces


def test_octavia_refusals_as_heat():
    with pytest.raises(StackValidationFailed, match="vip_subnet, vip_network"):
        validated("OS::Octavia::LoadBalancer", {})
    with pytest.raises(Exception, match="out of range"):
        validated("OS::Octavia::Listener", {"protocol": "HTTP", "protocol_port": 0})
    with pytest.raises(Exception, match="allowed value"):
        validated("OS::Octavia::Pool", {"lb_algorithm": "RANDOM", "protocol": "HTTP"})


def test_a_type_whose_neutron_extension_is_absent_is_unavailable_as_in_heat(monkeypatch):
    """Heat's ``is_service_available``: not listed, described with Heat's refusal."""
    monkeypatch.setattr("stacks.resources.unavailable._has_extension",
                        lambda extension: extension != "trunk")
    assert not type_available("OS::Neutron::Trunk")
    with pytest.raises(ResourceTypeUnavailable) as raised:
        refuse_unavailable("OS::Neutron::Trunk")
    assert str(raised.value) == (
        "HEAT-E99001 Service neutron is not available for resource type OS::Neutron::Trunk, "
        "reason: Required extension trunk in neutron service is not available.")
    assert type_available("OS::Neutron::Net")
    assert type_available("OS::Neutron::ExtraRouteSet")
    refuse_unavailable("OS::Neutron::ExtraRouteSet")
