"""Cinder's kinds on a real cloud, where one sdk call per verb does not do.

The plain kinds (volume, snapshot, volume type, QoS specs) are rows of
``OS_KINDS`` (``stacks.cloud.openstack.objects``); here are the calls that
differ: a volume made from an image named by name, resized (``extend``, also
while attached), retyped and made read-only by Cinder's actions; a volume
type's extra specs changed key by key; a type's encryption read by its type;
QoS specs associated with a type; a volume attached to a server through Nova
(``os-volume_attachments``: id ``<server id>/<volume id>``; Heat's, the volume's id,
of a stack imported from Heat, is read too); a volume from a backup made by Cinder's
restore (``POST /backups/<id>/restore``), as Heat's ``restores.restore``.
"""
from stacks.cloud.driver import CloudNotFound
from stacks.cloud.openstack.calls import call, gone, raise_for


class BlockStorageCalls:
    """Mixin of ``OpenStackCloud``: ``_os_<verb>_<kind>`` methods of Cinder's kinds."""

    # Volumes -------------------------------------------------------------------------------

    def _os_create_volume(self, *, name, fields, creation_key, find_first):
        values = dict(fields)
        if values.get("backup_id"):
            return self._volume_restored(values.pop("backup_id"), name=name, fields=values)
        if values.get("imageRef"):
            values["imageRef"] = self._looked_up(self.conn.image.find_image, values["imageRef"])
        read_only = values.pop("read_only", None)
        volume_id = self._generic_create("volume", name=name, fields=values,
                                         creation_key=creation_key, find_first=find_first)
        if read_only:
            self.volume_wait_available(volume_id)
            call(self.conn.block_storage.set_volume_readonly, volume_id, True)
        return volume_id

    def _volume_restored(self, backup_id, *, name, fields):
        """A new volume restored from backup ``backup_id`` (its size, Cinder's default
        type), then given ``fields`` (Heat gives it its name and description)."""
        restored = call(self.conn.block_storage.restore_backup, backup_id, name=name)
        if fields:
            self._generic_update("volume", restored.volume_id, fields)
        return restored.volume_id

    def volume_wait_available(self, volume_id):
        call(self.conn.block_storage.wait_for_status, self.conn.block_storage.get_volume(
            volume_id), "available", failures=["error"], interval=0.5, wait=120)

    def _os_update_volume(self, object_id, fields):
        fields = dict(fields)
        storage = self.conn.block_storage
        size = fields.pop("size", None)
        if size is not None:
            call(storage.extend_volume, object_id, int(size))
        if fields.get("volume_type"):
            call(storage.retype_volume, object_id, fields.pop("volume_type"),
                 migration_policy="on-demand")
        fields.pop("volume_type", None)
        if "read_only" in fields:
            call(storage.set_volume_readonly, object_id, bool(fields.pop("read_only")))
        if fields:
            self._generic_update("volume", object_id, fields)

    # Volume types --------------------------------------------------------------------------

    def _os_update_volume_type(self, object_id, fields):
        fields = dict(fields)
        storage = self.conn.block_storage
        if "extra_specs" in fields:
            wanted = fields.pop("extra_specs") or {}
            have = call(storage.get_type, object_id).extra_specs or {}
            stale = [key for key in have if key not in wanted]
            if stale:
                call(storage.delete_type_extra_specs, object_id, stale)
            if wanted:
                call(storage.update_type_extra_specs, object_id, **wanted)
        if fields:
            self._generic_update("volume_type", object_id, fields)

    # A type's encryption: its id is the type's, as Heat's resource id (Cinder keeps one
    # encryption per type, at /types/<type id>/encryption; ids of an earlier heatweb were
    # ``<type id>/<encryption id>``: the type's is their first half)

    def _os_create_volume_type_encryption(self, *, name, fields, creation_key, find_first):
        self._generic_create("volume_type_encryption", name=None, fields=fields,
                             creation_key=None, find_first=False)
        return fields["volume_type_id"]

    def _os_get_volume_type_encryption(self, object_id):
        type_id = str(object_id).partition("/")[0]
        found = gone(self.conn.block_storage.get_type_encryption, type_id)
        if found is None or not found.encryption_id:
            return None
        # openstacksdk's encryption keeps its type in the URL, not the body
        return {**found.to_dict(computed=False), "id": type_id, "volume_type_id": type_id}

    def _os_update_volume_type_encryption(self, object_id, fields):
        type_id = str(object_id).partition("/")[0]
        call(self.conn.block_storage.update_type_encryption, volume_type=type_id, **fields)

    def _os_delete_volume_type_encryption(self, object_id):
        type_id = str(object_id).partition("/")[0]
        found = gone(self.conn.block_storage.get_type_encryption, type_id)
        if found is not None and found.encryption_id:
            gone(self.conn.block_storage.delete_type_encryption, volume_type=type_id)
        return False

    # QoS specs: Cinder takes the specs as keys beside the name -----------------------------

    def _os_create_qos_specs(self, *, name, fields, creation_key, find_first):
        body = {"name": name, **(fields.get("specs") or {})}
        if fields.get("consumer"):
            body["consumer"] = fields["consumer"]
        response = call(self._qos_session().post, "/qos-specs", json={"qos_specs": body})
        raise_for(response)
        return response.json()["qos_specs"]["id"]

    def _os_update_qos_specs(self, object_id, fields):
        if "specs" not in fields:
            return
        wanted = fields["specs"] or {}
        have = (self.object_get("qos_specs", object_id) or {}).get("specs") or {}
        stale = [key for key in have if key not in wanted]
        if stale:
            raise_for(call(self._qos_session().put, f"/qos-specs/{object_id}/delete_keys",
                            json={"keys": stale}))
        if wanted:
            raise_for(call(self._qos_session().put, f"/qos-specs/{object_id}",
                            json={"qos_specs": wanted}))

    # QoS specs associated with a type ------------------------------------------------------

    def _qos_session(self):
        return self.conn.block_storage

    def _os_create_qos_association(self, *, name, fields, creation_key, find_first):
        qos, vtype = fields["qos_specs_id"], fields["volume_type_id"]
        raise_for(call(self._qos_session().get,
                        f"/qos-specs/{qos}/associate?vol_type_id={vtype}"))
        return f"{qos}/{vtype}"

    def _os_get_qos_association(self, object_id):
        qos, _, vtype = str(object_id).partition("/")
        response = call(self._qos_session().get, f"/qos-specs/{qos}/associations")
        if response.status_code == 404:
            return None
        found = [a for a in response.json().get("qos_associations", []) if a.get("id") == vtype]
        return {"id": object_id, "qos_specs_id": qos, "volume_type_id": vtype} if found \
            else None

    def _os_delete_qos_association(self, object_id):
        qos, _, vtype = str(object_id).partition("/")
        call(self._qos_session().get, f"/qos-specs/{qos}/disassociate?vol_type_id={vtype}")

    # Attachments through Nova --------------------------------------------------------------

    def _os_create_volume_attachment(self, *, name, fields, creation_key, find_first):
        server, volume = fields["server_id"], fields["volume_id"]
        if find_first and gone(self.conn.compute.get_volume_attachment, server, volume):
            return f"{server}/{volume}"
        extra = {"device": fields["device"]} if fields.get("device") else {}
        call(self.conn.compute.create_volume_attachment, server, volume_id=volume, **extra)
        return f"{server}/{volume}"

    def _attachment_ends(self, object_id):
        """``(server, volume)`` of an attachment id: heatweb's ``<server>/<volume>``, or
        Heat's, the volume's id alone (a stack imported from Heat keeps it): its server
        is the one Cinder says the volume is attached to (None when it is not)."""
        server, sep, volume = str(object_id).partition("/")
        if sep:
            return server, volume
        found = gone(self.conn.block_storage.get_volume, object_id)
        servers = [a.get("server_id") for a in (found.attachments or [])] if found else []
        return (servers[0] if servers else None), object_id

    def _os_get_volume_attachment(self, object_id):
        server, volume = self._attachment_ends(object_id)
        if server is None:
            return None
        found = gone(self.conn.compute.get_volume_attachment, server, volume)
        if found is None:
            return None
        return {"id": object_id, "server_id": server, "volume_id": volume,
                "device": found.device}

    def _os_delete_volume_attachment(self, object_id):
        server, volume = self._attachment_ends(object_id)
        if server is None:
            return None
        try:
            call(self.conn.compute.delete_volume_attachment, server, volume)
        except CloudNotFound:
            return None
        return None
