"""Cinder's types on the real cloud (Cinder on its fake driver, attachments through Nova):
every effect checked directly in Cinder and Nova with openstacksdk."""
import uuid

import pytest
from openstack import exceptions as os_exceptions

from tests.openstack.conftest import wait_for, wait_stack

pytestmark = pytest.mark.openstack


def template(tag, size):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "data": {"type": "OS::Cinder::Volume", "properties": {
                "name": f"{tag}-data", "size": size, "metadata": {"purpose": "data"}}},
            "kept": {"type": "OS::Cinder::Volume", "deletion_policy": "Retain",
                     "properties": {"name": f"{tag}-kept", "size": 1}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "name": f"{tag}-server", "flavor": "m1.tiny",
                "block_device_mapping_v2": [{"image": "heatweb-tiny", "volume_size": 1,
                                             "delete_on_termination": True}]}},
            "attachment": {"type": "OS::Cinder::VolumeAttachment", "properties": {
                "instance_uuid": {"get_resource": "server"},
                "volume_id": {"get_resource": "data"}}},
        },
        "outputs": {"size": {"value": {"get_attr": ["data", "size"]}},
                    "status": {"value": {"get_attr": ["data", "status"]}},
                    "attachments": {"value": {"get_attr": ["data", "attachments_list"]}}},
    }


def physical(heat, stack_id):
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}


def outputs(heat, stack_id):
    return {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}


def test_boot_from_volume_attach_resize_lock_and_delete_in_cinder_and_nova(member, cloud):
    heat, tag = member.heat, f"vol{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag, 1))["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    server = cloud.compute.get_server(ids["server"])
    assert server.status == "ACTIVE" and not server.image.get("id")  # booted from a volume
    attached = {v["id"] for v in server.attached_volumes}
    assert ids["data"] in attached and len(attached) == 2
    [boot_id] = attached - {ids["data"]}
    boot = cloud.block_storage.get_volume(boot_id)
    assert boot.is_bootable and boot.status == "in-use"
    data = cloud.block_storage.get_volume(ids["data"])
    assert (data.name, data.size, data.status) == (f"{tag}-data", 1, "in-use")
    assert data.metadata == {"purpose": "data"}
    assert [a["server_id"] for a in data.attachments] == [ids["server"]]
    assert ids["attachment"] == f"{ids['server']}/{ids['data']}"

    # resized in place while attached (Cinder extends an in-use volume)
    heat.stacks.update(stack_id, template=template(tag, 2))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id) == ids
    assert cloud.block_storage.get_volume(ids["data"]).size == 2
    out = outputs(heat, stack_id)
    assert out["size"] == "2" and out["status"] == "in-use"
    assert [a["server_id"] for a in out["attachments"]] == [ids["server"]]

    # level all: Nova locks the server, so it refuses to detach the volume; Cinder
    # refuses to delete an attached volume
    member.action(tag, stack_id, {"lock": {"level": "all"}})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    assert cloud.compute.get_server(ids["server"]).is_locked
    with pytest.raises(os_exceptions.ConflictException, match="is locked"):
        cloud.compute.delete_volume_attachment(ids["server"], ids["data"])
    with pytest.raises(os_exceptions.BadRequestException, match="attached"):
        cloud.block_storage.delete_volume(ids["data"])
    member.action(tag, stack_id, {"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")
    assert not cloud.compute.get_server(ids["server"]).is_locked

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert cloud.compute.find_server(ids["server"]) is None or \
        cloud.compute.get_server(ids["server"]).status == "DELETED"
    for volume_id in (ids["data"], boot_id):  # detached and deleted, the boot volume with
        wait_for(lambda v=volume_id: cloud.block_storage.find_volume(v) is None,  # its server
                 f"volume {volume_id} gone")
    kept = cloud.block_storage.get_volume(ids["kept"])  # deletion_policy: Retain
    assert kept.status == "available"
    cloud.block_storage.delete_volume(kept)


def admin_template(tag, iops):
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "vtype": {"type": "OS::Cinder::VolumeType", "properties": {
                "name": f"{tag}-type", "metadata": {"volume_backend_name": "fake"},
                "description": "made by heatweb"}},
            "qos": {"type": "OS::Cinder::QoSSpecs", "properties": {
                "name": f"{tag}-qos", "specs": {"read_iops_sec": iops}}},
            "qos_types": {"type": "OS::Cinder::QoSAssociation", "properties": {
                "qos_specs": {"get_resource": "qos"},
                "volume_types": [{"get_resource": "vtype"}]}},
            "encryption": {"type": "OS::Cinder::EncryptedVolumeType", "properties": {
                "volume_type": {"get_resource": "vtype"}, "cipher": "aes-xts-plain64",
                "key_size": 256, "provider": "luks"}},
            "volume": {"type": "OS::Cinder::Volume", "depends_on": ["encryption"],
                       "properties": {"name": f"{tag}-vol", "size": 1,
                                      "volume_type": {"get_resource": "vtype"}}},
            # get_resource of the encryption names its volume type (Heat's resource id;
            # the public corpus's server_with_encrpyted_volume.yaml)
            "by_encryption": {"type": "OS::Cinder::Volume", "properties": {
                "size": 1, "volume_type": {"get_resource": "encryption"}}},
            "snapped": {"type": "OS::Cinder::Volume", "deletion_policy": "Snapshot",
                        "properties": {"name": f"{tag}-snapped", "size": 1}},
        },
        "outputs": {"encrypted": {"value": {"get_attr": ["volume", "encrypted"]}},
                    "type": {"value": {"get_attr": ["volume", "volume_type"]}}},
    }


def test_an_admins_volume_type_qos_and_encryption_in_cinder(request, tmp_path_factory,
                                                              admin_cloud):
    from tests.openstack.keystone_support import Cloud as KeystoneCloud, keystone_service
    from tests.openstack.test_openstack_admin_stack import Admin

    heat, tag = Admin(keystone_service(request.config, tmp_path_factory),
                      KeystoneCloud()).heat, f"vt{uuid.uuid4().hex[:6]}"
    storage = admin_cloud.block_storage
    stack_id = heat.stacks.create(stack_name=tag, template=admin_template(tag, "100"))[
        "stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)
    vtype = storage.get_type(ids["vtype"])
    assert (vtype.name, vtype.extra_specs) == (f"{tag}-type", {"volume_backend_name": "fake"})
    assert storage.get_qos_spec(ids["qos"]).specs == {"read_iops_sec": "100"}
    associations = storage.get(f"/qos-specs/{ids['qos']}/associations").json()
    assert [a["id"] for a in associations["qos_associations"]] == [ids["vtype"]]
    # the encryption's physical id is its volume type's, as Heat's (cinderclient's
    # volume_encryption_types.get(physical id), heat-tempest-plugin's EncryptionVolTypeTest)
    assert ids["encryption"] == ids["vtype"]
    encryption = storage.get_type_encryption(ids["vtype"])
    assert (encryption.cipher, encryption.key_size, encryption.provider) == \
        ("aes-xts-plain64", 256, "luks")
    volume = storage.get_volume(ids["volume"])
    assert volume.volume_type == f"{tag}-type" and volume.is_encrypted
    assert storage.get_volume(ids["by_encryption"]).volume_type == f"{tag}-type"
    assert outputs(heat, stack_id) == {"encrypted": "True", "type": f"{tag}-type"}

    heat.stacks.update(stack_id, template=admin_template(tag, "200"))  # specs in place
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert physical(heat, stack_id) == ids
    assert storage.get_qos_spec(ids["qos"]).specs == {"read_iops_sec": "200"}

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert storage.find_qos_spec(ids["qos"]) is None
    assert storage.find_type(ids["vtype"]) is None
    wait_for(lambda: storage.find_volume(ids["volume"]) is None, "volume gone")
    # deletion_policy Snapshot: as Heat, a Cinder backup (cinder-backup, POSIX driver),
    # then the volume deleted
    wait_for(lambda: storage.find_volume(ids["snapped"], all_projects=True) is None,
             "snapped volume gone")
    [backup] = list(storage.backups(volume_id=ids["snapped"], all_projects=True))
    assert (backup.status, backup.size) == ("available", 1)

    # a volume from it: Cinder's restore (the backup's size), then its name and description
    restored = {"heat_template_version": "2018-08-31", "resources": {"restored": {
        "type": "OS::Cinder::Volume", "properties": {
            "backup_id": backup.id, "name": f"{tag}-restored", "description": "restored"}}},
        "outputs": {"size": {"value": {"get_attr": ["restored", "size"]}}}}
    restored_id = heat.stacks.create(stack_name=f"{tag}-r", template=restored)["stack"]["id"]
    wait_stack(heat, restored_id, "CREATE_COMPLETE")
    volume = storage.get_volume(physical(heat, restored_id)["restored"])
    assert (volume.name, volume.description, volume.size, volume.status) == \
        (f"{tag}-restored", "restored", 1, "available")
    assert outputs(heat, restored_id) == {"size": "1"}
    heat.stacks.delete(restored_id)
    wait_stack(heat, restored_id, "DELETE_COMPLETE")
    wait_for(lambda: storage.find_volume(volume.id, all_projects=True) is None, "volume gone")
    storage.delete_backup(backup)
    wait_for(lambda: storage.find_backup(backup.id) is None,
             "backup gone")
