"""Cinder's types through python-heatclient against the live service on the simulated
cloud: a server booted from a volume with a second volume attached, the volume resized,
the stack locked at level all and unlocked, deletion policies, Cinder's refusals.
"""
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

BOOT_FROM_VOLUME = """
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 1}
resources:
  vtype:
    type: OS::Cinder::VolumeType
    properties: {name: {list_join: ['-', [{get_param: 'OS::stack_name'}, fast]]},
                 metadata: {volume_backend_name: fake}}
  qos:
    type: OS::Cinder::QoSSpecs
    properties: {specs: {read_iops_sec: "100"}}
  qos_types:
    type: OS::Cinder::QoSAssociation
    properties: {qos_specs: {get_resource: qos}, volume_types: [{get_resource: vtype}]}
  encrypted:
    type: OS::Cinder::EncryptedVolumeType
    properties: {volume_type: {get_resource: vtype}, provider: luks,
                 cipher: aes-xts-plain64, key_size: 256}
  data:
    type: OS::Cinder::Volume
    depends_on: encrypted
    properties: {size: {get_param: size}, volume_type: {get_resource: vtype},
                 metadata: {purpose: data}}
  server:
    type: OS::Nova::Server
    properties:
      flavor: m1.small
      block_device_mapping_v2:
        - {image: cirros, volume_size: 1, delete_on_termination: true}
  attachment:
    type: OS::Cinder::VolumeAttachment
    properties: {instance_uuid: {get_resource: server}, volume_id: {get_resource: data},
                 mountpoint: /dev/vdb}
outputs:
  size: {value: {get_attr: [data, size]}}
  status: {value: {get_attr: [data, status]}}
  metadata: {value: {get_attr: [data, metadata]}}
  metadata_values: {value: {get_attr: [data, metadata_values]}}
  encrypted: {value: {get_attr: [data, encrypted]}}
  bootable: {value: {get_attr: [data, bootable]}}
  attachments: {value: {get_attr: [data, attachments_list]}}
  volume_type: {value: {get_attr: [data, volume_type]}}
  server_volumes: {value: {get_attr: [server, show, volumes_attached]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"volumes-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def outputs(hc, stack_id):
    return {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}


def physical_ids(hc, stack_id):
    return {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}


def test_boot_from_volume_attach_resize_lock_and_delete(hc, live_service):
    name, stack_id = create(hc, BOOT_FROM_VOLUME)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = physical_ids(hc, stack_id)
    # attributes as the volume was when made (before its attachment), as Heat shows them
    out = outputs(hc, stack_id)
    assert out["size"] == "1" and out["status"] == "available"
    assert out["metadata"] == '{"purpose": "data"}'
    assert out["metadata_values"] == {"purpose": "data"}
    assert out["encrypted"] == "True" and out["bootable"] == "false"
    assert out["volume_type"] == f"{name}-fast"
    assert ids["attachment"] == f"{ids['server']}/{ids['data']}"
    assert ids["qos_types"] == ids["qos"]
    assert cloud(live_service, f"""print(json.dumps(
    c.object_get("qos_association", "{ids['qos']}/{ids['vtype']}")["volume_type_id"]))""") == \
        ids["vtype"]
    # the server's show is read live, as Heat reads it: the boot volume and the attached one
    assert ids["data"] in {v["id"] for v in out["server_volumes"]}
    [boot] = [v for v in out["server_volumes"] if v["id"] != ids["data"]]
    assert boot["delete_on_termination"] is True
    boot_id = boot["id"]

    # resized in place while attached; shrinking is refused as Heat refuses it
    hc.stacks.update(stack_id, template=BOOT_FROM_VOLUME, parameters={"size": 2})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    assert physical_ids(hc, stack_id) == ids
    out = outputs(hc, stack_id)
    assert out["size"] == "2" and out["status"] == "in-use"
    assert [a["server_id"] for a in out["attachments"]] == [ids["server"]]
    hc.stacks.update(stack_id, template=BOOT_FROM_VOLUME, parameters={"size": 1})
    failed = wait_stack(hc, stack_id, "UPDATE_FAILED")
    assert "Shrinking volume is not supported" in failed.stack_status_reason
    hc.stacks.update(stack_id, template=BOOT_FROM_VOLUME, parameters={"size": 2})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")

    # level all: the server is locked in Nova, which refuses to detach its volumes;
    # Cinder refuses to delete an attached volume
    hc.http_client.json_request("POST", f"/stacks/{name}/{stack_id}/actions",
                                data={"lock": {"level": "all"}})
    wait_stack(hc, stack_id, "LOCK_COMPLETE")
    state = cloud(live_service, f"""
out = {{"locked": c.server_get("{ids['server']}")["locked"]}}
for key, call in [("detach", lambda: c.object_delete("volume_attachment", "{ids['attachment']}")),
                  ("delete", lambda: c.object_delete("volume", "{ids['data']}"))]:
    try:
        call(); out[key] = "allowed"
    except CloudError as e:
        out[key] = str(e)
print(json.dumps(out))""")
    assert state["locked"] is True
    assert "is locked" in state["detach"]
    assert "must not be migrating, attached" in state["delete"]
    events = [e.resource_status_reason for e in hc.events.list(stack_id, resource_name="data")]
    assert any("Cinder has no lock" in (reason or "") for reason in events), events
    hc.http_client.json_request("POST", f"/stacks/{name}/{stack_id}/actions",
                                data={"unlock": None})
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    gone = cloud(live_service, f"""print(json.dumps([
    c.object_get("qos_association", "{ids['qos']}/{ids['vtype']}"),
    c.object_get("volume", "{ids['data']}"), c.object_get("volume", "{boot_id}"),
    c.server_get("{ids['server']}"), c.object_get("volume_type", "{ids['vtype']}"),
    c.object_get("qos_specs", "{ids['qos']}")]))""")
    assert gone == [None] * 6


POLICIES = """
heat_template_version: 2018-08-31
resources:
  kept:
    type: OS::Cinder::Volume
    deletion_policy: Retain
    properties: {size: 1}
  snapped:
    type: OS::Cinder::Volume
    deletion_policy: Snapshot
    properties: {size: 3, name: snapped}
  gone:
    type: OS::Cinder::Volume
    properties: {size: 1}
"""


RESTORED = """
heat_template_version: 2018-08-31
parameters:
  backup: {type: string, constraints: [{custom_constraint: cinder.backup}]}
resources:
  restored:
    type: OS::Cinder::Volume
    properties: {backup_id: {get_param: backup}, description: from a backup,
                 metadata: {ignored: "as Heat's restore"}}
outputs:
  size: {value: {get_attr: [restored, size]}}
  description: {value: {get_attr: [restored, display_description]}}
  metadata: {value: {get_attr: [restored, metadata_values]}}
"""


def test_deletion_policies_retain_and_snapshot(hc, live_service):
    _, stack_id = create(hc, POLICIES)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = physical_ids(hc, stack_id)
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    state = cloud(live_service, f"""
from stacks.cloud.models import SimObject
backups = [{{"id": b.pk, **b.fields}} for b in SimObject.objects.filter(
           kind="volume_backup", fields__volume_id="{ids['snapped']}", deleted_at__isnull=True)]
print(json.dumps({{"kept": bool(c.object_get("volume", "{ids['kept']}")),
                  "snapped": c.object_get("volume", "{ids['snapped']}"),
                  "gone": c.object_get("volume", "{ids['gone']}"), "backups": backups}}))""")
    # Snapshot: as Heat, a Cinder backup, then the volume deleted
    assert state["kept"] is True and state["snapped"] is None and state["gone"] is None
    [backup] = state["backups"]
    assert (backup["size"], backup["status"]) == (3, "available")

    # a volume from that backup (Cinder's restore: the backup's size)
    _, restored_id = create(hc, RESTORED, parameters={"backup": backup["id"]})
    restored = wait_stack(hc, restored_id, "CREATE_COMPLETE")
    assert {o["output_key"]: o["output_value"] for o in restored.outputs} == {
        "size": "3", "description": "from a backup", "metadata": {}}
    hc.stacks.delete(restored_id)
    wait_deleted(hc, restored_id)


def test_cinder_refusals_reach_the_resource(hc):
    in_use = """
heat_template_version: 2018-08-31
resources:
  vol: {type: OS::Cinder::Volume, properties: {size: 1}}
  a:
    type: OS::Nova::Server
    properties: {image: cirros, flavor: m1.small,
                 block_device_mapping_v2: [{volume_id: {get_resource: vol}}]}
  b:
    type: OS::Cinder::VolumeAttachment
    properties: {instance_uuid: {get_resource: a}, volume_id: {get_resource: vol}}
"""
    _, stack_id = create(hc, in_use, disable_rollback=True)
    failed = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "status must be 'available'. Currently in 'in-use'" in failed.stack_status_reason
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)

    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template="""
heat_template_version: 2018-08-31
resources:
  s: {type: OS::Nova::Server, properties: {flavor: m1.small}}
""")
    assert "Neither image nor bootable volume is specified for instance s" in str(raised.value)
    assert "OS::Cinder::Volume" in [t.resource_type for t in hc.resource_types.list()]


ENCRYPTED_BY_REFERENCE = """
heat_template_version: 2018-08-31
resources:
  vtype:
    type: OS::Cinder::VolumeType
    properties: {name: {list_join: ["-", [{get_param: "OS::stack_name"}, luks]]}}
  encryption:
    type: OS::Cinder::EncryptedVolumeType
    properties: {volume_type: {get_resource: vtype}, control_location: front-end,
                 provider: nova.volume.encryptors.luks.LuksEncryptor}
  vol:
    type: OS::Cinder::Volume
    properties: {size: 1, volume_type: {get_resource: encryption}}
outputs:
  encryption: {value: {get_resource: encryption}}
  volume_type: {value: {get_attr: [vol, volume_type]}}
  encrypted: {value: {get_attr: [vol, encrypted]}}
"""


def test_get_resource_of_an_encrypted_volume_type_names_the_type(hc):
    """heat-templates' server_with_encrpyted_volume.yaml: a volume's ``volume_type`` is
    ``get_resource`` of the EncryptedVolumeType, whose reference is (as Heat's resource
    id) the id of the volume type it encrypts; it was the encryption's own id, and the
    volume failed with "Volume type with name <id> could not be found"."""
    name, stack_id = create(hc, ENCRYPTED_BY_REFERENCE, disable_rollback=True)
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = physical_ids(hc, stack_id)
    out = outputs(hc, stack_id)
    assert out["encryption"] == ids["vtype"], stack.stack_status_reason
    assert out["volume_type"] == f"{name}-luks" and out["encrypted"] == "True"
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
