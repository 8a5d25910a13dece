"""Test-only Cinder volume driver: the fake driver Cinder ships, plus volumes from images.

``cinder.tests.fake_driver.FakeLoggingVolumeDriver`` keeps no data; making a
volume from an image would still download it and run qemu-img as root
(rootwrap) onto a block device this machine does not have. Saying every
image was cloned skips that: Cinder records the image's metadata and marks
the volume bootable, so servers boot from volumes on Nova's fake driver.
Never use it outside tests.
"""
from cinder.tests import fake_driver


class ImageVolumeDriver(fake_driver.FakeLoggingVolumeDriver):
    def clone_image(self, context, volume, image_location, image_meta, image_service):
        return {"provider_location": None}, True

    def copy_image_to_volume(self, context, volume, image_service, image_id,
                             disable_sparse=False):
        return None
