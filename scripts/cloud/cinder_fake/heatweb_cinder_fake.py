"""Test-only Cinder volume driver: the fake driver Cinder ships, plus volumes from images
and volumes that hold data, so cinder-backup can back them up and restore them.

``cinder.tests.fake_driver.FakeLoggingVolumeDriver`` keeps no data; making a
volume from an image would still download it and run qemu-img as root
(rootwrap) onto a block device this machine does not have. Saying every
image was cloned skips that: Cinder records the image's metadata and marks
the volume bootable, so servers boot from volumes on Nova's fake driver.

Each volume is also a sparse file of its size, ``<state_path>/volumes/volume-<id>``
(no LVM, no iSCSI target), handed out as os-brick's ``local`` connection
(``device_path``): cinder-backup reads a volume from it and writes a restore into
it, as it does a local block device. A clone or a volume from a snapshot starts as a
copy of its source's file (a snapshot here keeps no data of its own: it copies the
volume as it is then). Never use it outside tests.
"""
import os
import shutil

from cinder.tests import fake_driver
from oslo_config import cfg


def _path(volume):
    return os.path.join(cfg.CONF.state_path, "volumes", f"volume-{volume['id']}")


def _make(volume, source=None):
    path = _path(volume)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if source is not None and os.path.exists(_path(source)):
        shutil.copyfile(_path(source), path)
    with open(path, "ab") as f:
        f.truncate(max(os.path.getsize(path), int(volume["size"]) * 1024 ** 3))


class ImageVolumeDriver(fake_driver.FakeLoggingVolumeDriver):
    def create_volume(self, volume):
        model_update = super().create_volume(volume)
        _make(volume)
        return model_update

    def delete_volume(self, volume):
        try:
            os.unlink(_path(volume))
        except FileNotFoundError:
            pass

    def create_cloned_volume(self, volume, src_vol):
        _make(volume, src_vol)

    def create_volume_from_snapshot(self, volume, snapshot):
        _make(volume, snapshot.volume)

    def extend_volume(self, volume, new_size):
        with open(_path(volume), "ab") as f:
            f.truncate(int(new_size) * 1024 ** 3)

    def validate_connector(self, connector):
        """Any host may connect: a ``local`` connection needs no iSCSI initiator (this
        host has none)."""

    def initialize_connection(self, volume, connector):
        info = super().initialize_connection(volume, connector)
        if not os.path.exists(_path(volume)):  # a volume from before this driver
            _make(volume)
        return {"driver_volume_type": "local",
                "data": {**info["data"], "device_path": _path(volume)}}

    def backup_use_temp_snapshot(self):
        return False

    def clone_image(self, context, volume, image_location, image_meta, image_service):
        _make(volume)
        return {"provider_location": None}, True

    def copy_image_to_volume(self, context, volume, image_service, image_id,
                             disable_sparse=False):
        return None
