"""Cinder's types: ``OS::Cinder::Volume``, ``VolumeAttachment``, ``VolumeType``,
``QoSSpecs``, ``EncryptedVolumeType``, ``Quota``.

Properties, attributes and update-or-replace rules as Heat's. A volume is
created, resized (only up) and retyped in place, waited for until Cinder says
it is ``available``; its attributes are Heat's (mostly strings, as Heat shows
them). An attachment goes through Nova (as on a real cloud); changing it
detaches, then attaches again. A volume with ``backup_id`` is Cinder's restore
of that backup, then given its name and description (as Heat's).
``deletion_policy: Snapshot`` makes a Cinder backup of the volume (not of one
whose create or update failed), waits for it and deletes the volume, as Heat's
``handle_snapshot_delete`` (the backup stays; it needs cinder-backup);
``Retain`` keeps it. On a cloud whose catalog has no Cinder they answer
ResourceTypeUnavailable as Heat does.

Locks: Cinder has no lock on a volume. At stack lock level ``all`` the
servers are locked in Nova, which then refuses to detach their volumes, and
Cinder refuses to delete an attached volume: an attached volume is held
that way; a volume attached to nothing is protected only by heatweb's own
refusals while the stack is locked.
"""
import json

from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, QuotaResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Range

CINDER = ("cinder", "volumev3")
BUSY = ("creating", "downloading", "extending", "retyping", "attaching", "detaching",
        "reserved", "restoring-backup", "maintenance")
BACKUP = "deletion_backup_id"  # plugin data: the backup deletion_policy Snapshot made


class CinderResource(CloudObjectResource):
    required_service = CINDER

    def _status_of(self, found):
        return (found or {}).get("status")


@register
class Volume(CinderResource):
    """A Cinder volume: blank, or from an image, a snapshot or another volume.

    ``size`` (only larger), ``name``, ``description``, ``metadata``,
    ``volume_type`` (a retype) and ``read_only`` update in place; anything
    else replaces the volume. An attached volume is resized while attached.
    """

    type_name = "OS::Cinder::Volume"
    kind = "volume"
    properties_schema = {
        "name": prop("String", "A name used to distinguish the volume.", update_allowed=True),
        "description": prop("String", "A description of the volume.", update_allowed=True),
        "size": prop("Integer", "The size of the volume in GB; on update only increase in size "
                     "is supported. Required unless backup_id, source_volid or snapshot_id "
                     "is given.", update_allowed=True, constraints=(Range(1, None),)),
        "snapshot_id": prop("String", "If specified, the snapshot to create the volume from."),
        "backup_id": prop("String", "If specified, the backup to create the volume from."),
        "volume_type": prop("String", "If specified, the type of volume to use.",
                            update_allowed=True),
        "metadata": prop("Map", "Key/value pairs to associate with the volume.",
                         update_allowed=True, default={}),
        "image": prop("String", "If specified, the name or ID of the image to create the "
                      "volume from."),
        "imageRef": prop("String", "The ID of the image to create the volume from (use image)."),
        "source_volid": prop("String", "If specified, the volume to use as source."),
        "availability_zone": prop("String", "The availability zone of the volume."),
        "scheduler_hints": prop("Map", "Key/value pairs for the Cinder scheduler."),
        "read_only": prop("Boolean", "Enables or disables read-only access mode of volume.",
                          update_allowed=True),
        "multiattach": prop("Boolean", "Whether the volume may be attached more than once.",
                            default=False),
    }
    field_names = {"image": "imageRef", "multiattach": None}
    attributes_schema = attributes(
        availability_zone="The availability zone in which the volume is located.",
        size="The size of the volume in GB.",
        snapshot_id="The snapshot the volume was created from, if any.",
        display_name="Name of the volume.",
        display_description="Description of the volume.",
        volume_type="The type of the volume mapping to a backend, if any.",
        metadata="Key/value pairs associated with the volume.",
        source_volid="The volume used as source, if any.",
        status="The current status of the volume.",
        created_at="The timestamp indicating volume creation.",
        bootable="Boolean indicating if the volume can be booted or not.",
        metadata_values="Key/value pairs associated with the volume in raw dict form.",
        encrypted="Boolean indicating if the volume is encrypted or not.",
        attachments="A string representation of the list of attachments of the volume.",
        attachments_list="The list of attachments of the volume.",
        multiattach="Boolean indicating whether allow the volume to be attached more than "
                    "once.")

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        if not (props.get("size") or props.get("snapshot_id") or props.get("source_volid")
                or props.get("backup_id")):
            raise StackValidationFailed(
                f"Property error: resources.{resource_name}.properties: size must be given "
                f"unless backup_id, source_volid or snapshot_id is")
        return props

    def cloud_fields(self, props, names=None):
        if props.get("backup_id") and names is None:
            # Heat's create from a backup: Cinder's restore (the backup's size, the default
            # type), then only the name and description are given to the volume
            return {key: props[key] for key in ("backup_id", "description") if props.get(key)}
        fields = super().cloud_fields(props, names)
        if props.get("imageRef") and not props.get("image") and names is None:
            fields["imageRef"] = props["imageRef"]
        return fields

    def handle_create(self):
        super().handle_create()
        return {"wait": "create"}

    def _settled(self, *, failed_word):
        found = self.existing()
        status = self._status_of(found)
        if status in BUSY:
            return False
        if status and status.startswith("error"):
            raise ResourceFailure(f'Went to status {status} due to "{failed_word}"')
        return True

    def check_create_complete(self, cookie):
        return self._settled(failed_word="Unknown")

    def handle_update(self, new_properties, changed):
        found = self.existing()
        if "size" in changed and new_properties.get("size") is not None and \
                int(new_properties["size"]) < int(found.get("size") or 0):
            raise ResourceFailure("Shrinking volume is not supported.")
        if "size" in changed and new_properties.get("size") == found.get("size"):
            changed = set(changed) - {"size"}
        super().handle_update(new_properties, changed)
        return {"wait": "update"}

    def check_update_complete(self, cookie):
        return self._settled(failed_word="Volume resize failed")

    def handle_delete(self):
        return self._volume_delete()

    def check_delete_complete(self, cookie):
        return self._volume_gone(cookie)

    def _volume_delete(self):
        found = _cloud_call(self.cloud.object_get, self.kind, self.physical_id) \
            if self.physical_id else None
        if self._status_of(found) == "detaching":
            return {"delete_when_detached": True}  # its server is letting it go: wait
        if found is not None and self._status_of(found) != "deleting":
            super().handle_delete()
        return None

    def _volume_gone(self, cookie):
        if not self.physical_id:
            return True
        found = _cloud_call(self.cloud.object_get, self.kind, self.physical_id)
        status = self._status_of(found)
        if found is not None and status == "error_deleting":
            raise ResourceFailure(f"Volume {self.physical_id} went to status error_deleting")
        if found is not None and (cookie or {}).get("delete_when_detached") and \
                status not in ("detaching", "deleting"):
            super().handle_delete()
        return found is None

    # deletion_policy: Snapshot ----------------------------------------------------------------

    def handle_snapshot_delete(self, state=None):
        """Heat's: a Cinder backup of the volume, then its delete. A volume whose create or
        update failed (``state``, the resource's (action, status) when the delete began) is
        deleted without one."""
        if not self.physical_id:
            return None
        backup = state not in (("CREATE", "FAILED"), ("UPDATE", "FAILED"))
        return {"backup": "wanted" if backup else "done"}

    def check_snapshot_delete_complete(self, cookie):
        if not self.physical_id:
            return True
        cookie = cookie if isinstance(cookie, dict) else {"backup": "done"}
        if cookie["backup"] == "wanted":
            self.data[BACKUP] = _cloud_call(
                self.cloud.object_create, "volume_backup", project_id=self.context.project_id,
                name=f"{self.object_name(self.properties)}-backup",
                volume_id=self.physical_id)
            cookie["backup"] = "creating"
            return False
        if cookie["backup"] == "creating":
            found = _cloud_call(self.cloud.object_get, "volume_backup", self.data[BACKUP])
            status = self._status_of(found)
            if status == "creating":
                return False
            if status != "available":
                raise ResourceFailure(f"Volume backup failed: the backup of volume "
                                      f"{self.physical_id} went to status {status or 'gone'}")
            cookie["backup"] = "done"
        if not cookie.get("delete_called"):
            cookie["delete_called"] = True
            cookie.update(self._volume_delete() or {})
            return False
        return self._volume_gone(cookie)

    # Locks ---------------------------------------------------------------------------------

    def handle_lock(self):
        found = self.existing()
        servers = sorted({a.get("server_id") for a in found.get("attachments") or []})
        if servers:
            self.lock_note = (f"Volume {self.physical_id}: Cinder has no lock; attached to "
                              f"server {', '.join(servers)}, whose Nova lock refuses detaching "
                              f"it (and Cinder refuses deleting an attached volume)")
        else:
            self.lock_note = (f"Volume {self.physical_id}: Cinder has no lock and the volume "
                              f"is attached to nothing: only heatweb's refusals protect it")

    def physical_state(self):
        found = self.cloud.object_get(self.kind, self.physical_id) if self.physical_id \
            else None
        if found is None:
            return {"status": "not found"}
        servers = [a.get("server_id") for a in found.get("attachments") or []]
        return {"status": found.get("status"), "size": f"{found.get('size')} GB",
                "attached to": ", ".join(servers) or "—"}

    # Attributes as Heat shows them (strings, but for the raw forms) ---------------------------

    def attribute_value(self, found, name):
        if name == "show":
            return found
        if name == "metadata":
            return json.dumps(found.get("metadata") or {})
        if name == "metadata_values":
            return found.get("metadata") or {}
        if name == "display_name":
            return found.get("name")
        if name == "display_description":
            return found.get("description")
        if name == "attachments_list":
            return found.get("attachments") or []
        if name == "multiattach":
            return bool(found.get("multiattach"))
        value = found.get(name)
        if name == "attachments":
            return str(value or [])
        return None if value is None else str(value)


@register
class VolumeAttachment(CinderResource):
    """A volume attached to a server, through Nova (``os-volume_attachments``).

    Changing the server, the volume or the mountpoint detaches the volume and
    attaches again (as Heat). Nova refuses both while the server is locked.
    """

    type_name = "OS::Cinder::VolumeAttachment"
    kind = "volume_attachment"
    named = False
    changes_objects = {"instance_uuid": "server", "volume_id": "volume"}
    properties_schema = {
        "instance_uuid": prop("String", "The ID of the server to which the volume attaches.",
                              required=True, update_allowed=True),
        "volume_id": prop("String", "The ID of the volume to be attached.", required=True,
                          update_allowed=True),
        "mountpoint": prop("String", "The location where the volume is exposed on the "
                           "instance (Nova may choose another).", update_allowed=True),
    }
    field_names = {"instance_uuid": "server_id", "mountpoint": "device"}
    attributes_schema = {"show": Attribute("Everything the cloud says of the attachment.")}

    def handle_create(self):
        super().handle_create()
        return {"wait": "attach"}

    def _volume_settled(self, volume_id, wanted):
        volume = _cloud_call(self.cloud.object_get, "volume", volume_id)
        status = (volume or {}).get("status")
        if volume is None or (status or "").startswith("error"):
            raise ResourceFailure(f"Volume {volume_id} went to status {status or 'deleted'}")
        return status == wanted

    def check_create_complete(self, cookie):
        volume_id = str(self.physical_id).partition("/")[2]
        return self._volume_settled(volume_id, "in-use")

    def handle_update(self, new_properties, changed):
        _cloud_call(self.cloud.object_delete, self.kind, self.physical_id)
        return {"detached": self.physical_id, "new": new_properties}

    def check_update_complete(self, cookie):
        cookie = cookie or {}
        if cookie.get("detached"):
            if _cloud_call(self.cloud.object_get, self.kind, cookie["detached"]) is not None:
                return False
            self.properties = cookie["new"]
            self.physical_id = _cloud_call(
                self.cloud.object_create, self.kind, project_id=self.context.project_id,
                name=None, **self.cloud_fields(self.properties))
            cookie.pop("detached")
        return self.check_create_complete(None)

    def check_delete_complete(self, cookie):
        return super().check_delete_complete(cookie)


@register
class VolumeType(CinderResource):
    """A Cinder volume type (admin only); everything updates in place."""

    type_name = "OS::Cinder::VolumeType"
    kind = "volume_type"
    properties_schema = {
        "name": prop("String", "Name of the volume type.", required=True, update_allowed=True),
        "metadata": prop("Map", "The extra specs key and value pairs of the volume type.",
                         update_allowed=True),
        "is_public": prop("Boolean", "Whether the volume type is accessible to the public.",
                          default=True, update_allowed=True),
        "description": prop("String", "Description of the volume type.", update_allowed=True),
        "projects": prop("List", "Projects to add volume type access to (private types; "
                         "accepted, not applied).", default=[], update_allowed=True),
    }
    field_names = {"metadata": "extra_specs", "projects": None}
    attributes_schema = attributes()


@register
class QoSSpecs(CinderResource):
    """Cinder QoS specs (admin only): ``specs`` update in place."""

    type_name = "OS::Cinder::QoSSpecs"
    kind = "qos_specs"
    properties_schema = {
        "name": prop("String", "Name of the QoS."),
        "specs": prop("Map", "The specs key and value pairs of the QoS.", required=True,
                      update_allowed=True),
    }
    attributes_schema = attributes()


@register
class EncryptedVolumeType(CinderResource):
    """The encryption of a volume type (admin only): updates in place, except the type."""

    type_name = "OS::Cinder::EncryptedVolumeType"
    kind = "volume_type_encryption"
    named = False
    changes_objects = {"volume_type": "volume_type"}
    properties_schema = {
        "provider": prop("String", "The class that provides encryption support (for "
                         "example, nova.volume.encryptors.luks.LuksEncryptor).",
                         required=True, update_allowed=True),
        "cipher": prop("String", "The encryption algorithm or mode.", update_allowed=True,
                       constraints=(AllowedValues(("aes-xts-plain64", "aes-cbc-essiv")),)),
        "key_size": prop("Integer", "Size of encryption key, in bits.", update_allowed=True,
                         constraints=(AllowedValues((128, 256, 512)),)),
        "control_location": prop("String", "Notional service where encryption is performed.",
                                 default="front-end", update_allowed=True,
                                 constraints=(AllowedValues(("front-end", "back-end")),)),
        "volume_type": prop("String", "Name or id of volume type (OS::Cinder::VolumeType).",
                            required=True),
    }
    field_names = {"volume_type": "volume_type_id"}
    attributes_schema = attributes()

    def handle_create(self):
        super().handle_create()
        self.data["volume_type_id"] = self.existing().get("volume_type_id")

    def get_reference_id(self):
        """Heat's resource id: the id of the volume type it encrypts, what a volume's
        ``volume_type`` takes (``get_resource`` of it names the encrypted type)."""
        return self.data.get("volume_type_id") or super().get_reference_id()


@register
class QoSAssociation(CinderResource):
    """Associates Cinder QoS specs with volume types (admin only); ``volume_types``
    updates in place (types left out are disassociated)."""

    type_name = "OS::Cinder::QoSAssociation"
    kind = "qos_association"
    named = False
    changes_objects = {"qos_specs": "qos_specs", "volume_types": "volume_type"}
    properties_schema = {
        "qos_specs": prop("String", "ID or Name of the QoS specs.", required=True),
        "volume_types": prop("List", "Volume types to associate QoS.", required=True,
                             update_allowed=True),
    }
    attributes_schema = {}

    def _association(self, vtype):
        return _cloud_call(self.cloud.object_create, self.kind,
                           project_id=self.context.project_id, name=None,
                           qos_specs_id=self.physical_id, volume_type_id=vtype)

    def handle_create(self):
        self.physical_id = _cloud_call(self.cloud.object_find, "qos_specs",
                                       self.properties["qos_specs"])
        self.data["associations"] = [self._association(vtype)
                                     for vtype in self.properties["volume_types"]]

    def handle_update(self, new_properties, changed):
        have = dict(zip(self.properties.get("volume_types") or [],
                        self.data.get("associations") or []))
        wanted = new_properties.get("volume_types") or []
        for vtype, association in have.items():
            if vtype not in wanted:
                _cloud_call(self.cloud.object_delete, self.kind, association)
        self.data["associations"] = [have.get(vtype) or self._association(vtype)
                                     for vtype in wanted]
        self.properties = new_properties

    def handle_delete(self):
        for association in self.data.get("associations") or []:
            _cloud_call(self.cloud.object_delete, self.kind, association)

    def check_delete_complete(self, cookie):
        return True

    def handle_check(self):
        if _cloud_call(self.cloud.object_get, "qos_specs", self.physical_id) is None:
            raise ResourceFailure(f"QoS specs {self.physical_id} could not be found")

    def physical_state(self):
        return {"associations": len(self.data.get("associations") or [])}

    def attributes(self):
        return {}


@register
class Quota(CinderResource, QuotaResource):
    """Cinder quotas of a project (admin only)."""

    type_name = "OS::Cinder::Quota"
    kind = "volume_quota"
    limits = {"gigabytes": "the amount of disk space (in Gigabytes)",
              "volumes": "the number of volumes", "snapshots": "the number of snapshots"}
