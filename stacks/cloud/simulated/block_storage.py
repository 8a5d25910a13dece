"""What Cinder's kinds do in the simulated cloud beyond storing their fields.

Like Cinder (and Nova for attachments): a volume needs a size (or a
snapshot, source volume or backup to take it from) and an existing volume type; it
only grows; one attached to a server (``in-use``) or with snapshots cannot
be deleted (one with backups can); an attached volume is backed up only with
``force``; a volume type in use by a volume cannot be deleted, nor given an
encryption; attaching needs an ``available`` volume and a server that is not
locked, and detaching is refused while the server is locked (Nova's lock).
An attachment is a ``volume_attachment`` row (id ``<server>/<volume>``);
deleting a server detaches its volumes and deletes those marked
``delete_on_termination``, as Nova does.
"""
from django.utils import timezone

from stacks.cloud.driver import CloudError
from stacks.cloud.models import SimServer
from stacks.cloud.simulated.objects import live, not_found

IN_USE_REFUSAL = (
    "Invalid volume: Volume status must be available or error or error_restoring or "
    "error_extending or error_managing and must not be migrating, attached, belong to a "
    "group, have snapshots, awaiting a transfer, or be disassociated from snapshots after "
    "volume transfer. (HTTP 400)")


def attachments_of_server(server_id):
    return live("volume_attachment", fields__server_id=server_id)


def volumes_attached(server_ids):
    """Nova's ``os-extended-volumes:volumes_attached`` of each server,
    ``{server_id: [...]}``, in one query (a list of servers is not one query each)."""
    attached = {server_id: [] for server_id in server_ids}
    rows = live("volume_attachment", fields__server_id__in=list(attached))
    for row in rows.order_by("created_at"):
        attached[row.fields["server_id"]].append(
            {"id": row.fields["volume_id"],
             "delete_on_termination": row.fields.get("delete_on_termination", False)})
    return attached


def _attachments_of_volume(volume_id):
    return live("volume_attachment", fields__volume_id=volume_id)


class SimulatedCinder:
    """Mixin of ``SimulatedCloud``: the Cinder kinds' hooks (see ``objects``)."""

    # Volumes -----------------------------------------------------------------------------

    def _volume_type_name(self, name_or_id):
        if not name_or_id:
            return None
        row = live("volume_type", pk=name_or_id).first() or \
            live("volume_type", name=name_or_id).first()
        if row is None:
            raise CloudError(f"Volume type with name {name_or_id} could not be found. "
                             f"(HTTP 404)")
        return row

    def _complete_volume(self, fields, project_id):
        size = fields.get("size")
        if fields.get("snapshot_id"):
            size = size or self._resolve("volume_snapshot", fields["snapshot_id"]) \
                .fields.get("size")
        if fields.get("source_volid"):
            size = size or self._resolve("volume", fields["source_volid"]).fields.get("size")
        if fields.get("backup_id"):  # Cinder's restore: the backup's size
            size = self._resolve("volume_backup", fields["backup_id"]).fields.get("size")
        if not size or int(size) < 1:
            raise CloudError("Invalid input received: Volume size must be an integer and "
                             "greater than 0 (HTTP 400)")
        vtype = self._volume_type_name(fields.get("volume_type"))
        encrypted = vtype is not None and \
            live("volume_type_encryption", fields__volume_type_id=vtype.pk).exists()
        return {"status": "available", "size": int(size), "description": None,
                "metadata": {}, "availability_zone": "nova", "multiattach": False,
                "snapshot_id": None, "source_volid": None, "bootable": "false",
                "read_only": False, "created_at": timezone.now().isoformat(), **fields,
                "volume_type": vtype.name if vtype else "__DEFAULT__",
                "encrypted": encrypted,
                **({"bootable": "true"} if fields.get("imageRef") else {})}

    def _describe_volume(self, row, out):
        attachments = [{"server_id": a.fields["server_id"], "attachment_id": a.pk,
                        "volume_id": row.pk, "device": a.fields.get("device"),
                        "id": row.pk} for a in _attachments_of_volume(row.pk)]
        out["attachments"] = attachments
        out["status"] = "in-use" if attachments else row.fields.get("status", "available")

    def _update_volume(self, row, fields):
        if "size" in fields and fields["size"] is not None:
            current, wanted = int(row.fields.get("size") or 0), int(fields["size"])
            if wanted <= current:
                raise CloudError(f"Invalid input received: New size for extend must be greater "
                                 f"than current size. (current: {current}, extended: {wanted}). "
                                 f"(HTTP 400)")
        if fields.get("volume_type"):
            fields["volume_type"] = self._volume_type_name(fields["volume_type"]).name
        return fields

    def _in_use_volume(self, row):
        if _attachments_of_volume(row.pk).exists() or \
                live("volume_snapshot", fields__volume_id=row.pk).exists():
            return IN_USE_REFUSAL
        return None

    def _complete_volume_snapshot(self, fields, project_id):
        volume = self._resolve("volume", fields.get("volume_id", ""))
        if _attachments_of_volume(volume.pk).exists() and not fields.get("force"):
            raise CloudError("Invalid volume: Volume status must be available. (HTTP 400)")
        fields.pop("force", None)
        return {"status": "available", "description": None, "metadata": {}, **fields,
                "size": volume.fields.get("size"),
                "created_at": timezone.now().isoformat()}

    def _complete_volume_backup(self, fields, project_id):
        volume = self._resolve("volume", fields.get("volume_id", ""))
        if _attachments_of_volume(volume.pk).exists() and not fields.get("force"):
            raise CloudError("Invalid volume: Backing up an in-use volume must use the force "
                             "flag. (HTTP 400)")
        fields.pop("force", None)
        return {"status": "available", "description": None, **fields,
                "size": volume.fields.get("size"), "created_at": timezone.now().isoformat()}

    # Types, encryption, QoS ----------------------------------------------------------------

    def _complete_volume_type(self, fields, project_id):
        return {"description": None, "is_public": True, "extra_specs": {}, **fields}

    def _in_use_volume_type(self, row):
        if live("volume", fields__volume_type=row.name).exists():
            return "Target volume type is still in use. (HTTP 400)"
        return None

    def _deleted_volume_type(self, row):
        for kind in ("volume_type_encryption", "qos_association"):
            for item in live(kind, fields__volume_type_id=row.pk):
                self.sim_row_delete(item)

    def _complete_volume_type_encryption(self, fields, project_id):
        vtype = self._resolve("volume_type", fields.get("volume_type_id", ""))
        if live("volume_type_encryption", fields__volume_type_id=vtype.pk).exists():
            raise CloudError(f"Volume type encryption for type {vtype.pk} already exists. "
                             f"(HTTP 400)")
        if live("volume", fields__volume_type=vtype.name).exists():
            raise CloudError(f"Volume type {vtype.pk} is currently in use. (HTTP 400)")
        return {"cipher": None, "key_size": None, "control_location": "front-end", **fields,
                "volume_type_id": vtype.pk}

    def _in_use_volume_type_encryption(self, row):
        vtype = live("volume_type", pk=row.fields.get("volume_type_id")).first()
        if vtype is not None and live("volume", fields__volume_type=vtype.name).exists():
            return "Cannot delete encryption specs. Volume type in use. (HTTP 400)"
        return None

    def _complete_qos_specs(self, fields, project_id):
        return {"consumer": "back-end", "specs": {}, **fields}

    def _in_use_qos_specs(self, row):
        if live("qos_association", fields__qos_specs_id=row.pk).exists():
            return f"QoS Specs {row.pk} is still associated with entities. (HTTP 400)"
        return None

    def _complete_qos_association(self, fields, project_id):
        self._resolve("qos_specs", fields.get("qos_specs_id", ""))
        vtype = self._resolve("volume_type", fields.get("volume_type_id", ""))
        if live("qos_association", fields__volume_type_id=vtype.pk).exists():
            raise CloudError(f"Type {vtype.pk} is already associated with another qos specs. "
                             f"(HTTP 400)")
        return {**fields, "id": f"{fields['qos_specs_id']}/{vtype.pk}"}

    # Attachments (Nova's os-volume_attachments) ---------------------------------------------

    def _attach_server(self, server_id):
        server = SimServer.objects.filter(pk=server_id, deleted_at__isnull=True) \
            .exclude(status="DELETED").first()
        if server is None:
            raise CloudError(f"Instance {server_id} could not be found. (HTTP 404)")
        if server.locked:
            raise CloudError(f"Instance {server_id} is locked (HTTP 409)")
        return server

    def _create_volume_attachment(self, *, project_id, name, fields, creation_key):
        server = self._attach_server(fields.get("server_id", ""))
        return self.volume_attach(server.pk, fields.get("volume_id", ""),
                                  device=fields.get("device"), project_id=project_id,
                                  creation_key=creation_key)

    def volume_attach(self, server_id, volume_id, *, device=None, project_id="",
                      delete_on_termination=False, creation_key=""):
        volume = self._resolve("volume", volume_id)
        if _attachments_of_volume(volume.pk).exists() and not volume.fields.get("multiattach"):
            raise CloudError(f"Invalid volume: volume '{volume.pk}' status must be 'available'. "
                             f"Currently in 'in-use' (HTTP 400)")
        taken = {a.fields.get("device") for a in attachments_of_server(server_id)}
        device = device or next(f"/dev/vd{c}" for c in "abcdefghijklmnopqrstuvwxyz"
                                if f"/dev/vd{c}" not in taken)
        return self.sim_row_create(
            "volume_attachment", project_id=project_id or volume.project_id, name="",
            fields={"server_id": server_id, "volume_id": volume.pk, "device": device,
                    "delete_on_termination": bool(delete_on_termination)},
            creation_key=creation_key, object_id=f"{server_id}/{volume.pk}").pk

    def _delete_volume_attachment(self, object_id):
        row = live("volume_attachment", pk=object_id).first()
        if row is None:
            return None
        self._attach_server(row.fields["server_id"])
        self.sim_row_delete(row)
        return None

    def volumes_release(self, server_id):
        """A deleted server's volumes: detached, and deleted when it said so (Nova)."""
        for attachment in attachments_of_server(server_id):
            self.sim_row_delete(attachment)
            if attachment.fields.get("delete_on_termination"):
                volume = live("volume", pk=attachment.fields["volume_id"]).first()
                if volume is not None and not self._in_use_volume(volume):
                    self.sim_row_delete(volume)

    def block_devices_create(self, server_id, devices, *, project_id):
        """Nova's block device mapping v2 for a new server: each entry's volume made
        (from an image, a snapshot or blank) or found, then attached."""
        for index, entry in enumerate(devices):
            source = entry.get("source_type") or "volume"
            if source == "volume":
                volume_id = self._resolve("volume", entry.get("uuid", "")).pk
            else:
                fields = {"size": entry.get("volume_size")}
                if source == "image":
                    fields["imageRef"] = entry.get("uuid")
                elif source == "snapshot":
                    fields["snapshot_id"] = entry.get("uuid")
                volume_id = self.object_create("volume", project_id=project_id, name="",
                                               **fields)
            device = entry.get("device_name")
            if device and not device.startswith("/dev/"):
                device = f"/dev/{device}"
            self.volume_attach(server_id, volume_id, device=device or (
                "/dev/vda" if index == 0 and entry.get("boot_index") in (0, "0") else None),
                project_id=project_id,
                delete_on_termination=entry.get("delete_on_termination", False))

    def block_devices_check(self, devices):
        """Nova's refusals of a mapping before anything is made (a volume in use, missing)."""
        for entry in devices:
            if (entry.get("source_type") or "volume") == "volume":
                volume = live("volume", pk=entry.get("uuid", "")).first()
                if volume is None:
                    raise not_found("volume", entry.get("uuid"))
                if _attachments_of_volume(volume.pk).exists():
                    raise CloudError(f"Invalid volume: volume '{volume.pk}' status must be "
                                     f"'available'. Currently in 'in-use' (HTTP 400)")
