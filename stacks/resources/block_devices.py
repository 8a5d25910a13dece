"""A server's ``block_device_mapping`` and ``block_device_mapping_v2``, as Heat takes them.

Both become Nova's block device mapping v2 (``stacks.cloud.driver.server_create``):
a ``volume_id`` is attached, a ``snapshot_id`` or ``image`` becomes a new
volume, ``swap_size``/``ephemeral_size`` a local disk. Without an ``image``
the server boots from the first volume (``boot_index`` 0, device ``vda``),
and Heat refuses a server with neither image nor bootable volume.
"""
from heatweb.exceptions import StackValidationFailed
from stacks.resources.schema import AllowedValues, Property

_V1_ITEM = {
    "device_name": Property("String", description="A device name where the volume will be "
                            "attached in the system at /dev/device_name.", required=True),
    "volume_id": Property("String", description="The ID of the volume to boot from."),
    "snapshot_id": Property("String", description="The ID of the snapshot to create a volume "
                            "from."),
    "volume_size": Property("Integer", description="The size of the volume, in GB."),
    "delete_on_termination": Property("Boolean", description="Delete the volume when the "
                                      "server stops."),
}
_V2_ITEM = {
    "device_name": Property("String", description="A device name where the volume will be "
                            "attached in the system at /dev/device_name."),
    "volume_id": Property("String", description="The volume_id can be boot or non-boot "
                          "device to the server."),
    "image": Property("String", description="The ID or name of the image to create a volume "
                      "from."),
    "image_id": Property("String", description="The ID of the image (use image)."),
    "snapshot_id": Property("String", description="The ID of the snapshot to create a volume "
                            "from."),
    "swap_size": Property("Integer", description="The size of the swap, in MB."),
    "ephemeral_size": Property("Integer", description="The size of the local ephemeral "
                               "block device, in GB."),
    "ephemeral_format": Property("String", description="The format of the local ephemeral "
                                 "block device."),
    "device_type": Property("String", description="Device type.",
                            constraints=(AllowedValues(("cdrom", "disk")),)),
    "disk_bus": Property("String", description="Bus of the device."),
    "boot_index": Property("Integer", description="Integer used for ordering the boot "
                           "disks."),
    "volume_size": Property("Integer", description="Size of the block device in GB."),
    "delete_on_termination": Property("Boolean", description="Delete the volume when the "
                                      "server stops."),
}
PROPERTIES = {
    "block_device_mapping": Property(
        "List", description="Block device mappings for this server.",
        schema=Property("Map", schema=_V1_ITEM)),
    "block_device_mapping_v2": Property(
        "List", description="Block device mappings v2 for this server.",
        schema=Property("Map", schema=_V2_ITEM)),
}


def _given(entry, key):
    """Whether ``key`` is given (a value not resolved yet, as get_resource in validation,
    is given: it is falsy but not None)."""
    return entry.get(key) is not None and entry.get(key) != ""


def _v1(entry, *, boots):
    source = "snapshot" if _given(entry, "snapshot_id") else "volume"
    return {"device_name": entry.get("device_name"), "source_type": source,
            "destination_type": "volume",
            "uuid": entry.get("snapshot_id" if source == "snapshot" else "volume_id"),
            "volume_size": entry.get("volume_size"),
            "delete_on_termination": bool(entry.get("delete_on_termination")),
            "boot_index": 0 if boots else -1}


def _v2(entry, *, boots):
    out = {"device_name": entry.get("device_name"), "device_type": entry.get("device_type"),
           "disk_bus": entry.get("disk_bus"),
           "delete_on_termination": bool(entry.get("delete_on_termination"))}
    image_key = "image" if _given(entry, "image") else "image_id"
    source = next((kind for kind, key in (("volume", "volume_id"), ("snapshot", "snapshot_id"),
                                          ("image", image_key)) if _given(entry, key)), None)
    if source:
        out.update(destination_type="volume", volume_size=entry.get("volume_size"),
                   source_type=source, uuid=entry[{"volume": "volume_id",
                                                   "snapshot": "snapshot_id"}.get(source,
                                                                                  image_key)])
    elif entry.get("swap_size"):
        out.update(source_type="blank", destination_type="local", guest_format="swap",
                   volume_size=max(1, int(entry["swap_size"]) // 1024))
    elif entry.get("ephemeral_size"):
        out.update(source_type="blank", destination_type="local",
                   volume_size=entry["ephemeral_size"],
                   guest_format=entry.get("ephemeral_format"))
    index = entry.get("boot_index")
    out["boot_index"] = index if index is not None else (0 if boots else -1)
    return {k: v for k, v in out.items() if v is not None}


def block_devices(props):
    """Nova's mapping v2 for the server's properties (empty when it has none)."""
    no_image = not _given(props, "image")
    v1 = [_v1(entry, boots=no_image and i == 0 and entry.get("device_name") in ("vda", None))
          for i, entry in enumerate(props.get("block_device_mapping") or [])]
    v2 = [_v2(entry, boots=no_image and not v1 and i == 0)
          for i, entry in enumerate(props.get("block_device_mapping_v2") or [])]
    return v1 + v2


def check_bootable(props, *, resource_name):
    """Heat's refusal of a server with neither an image nor a volume to boot from."""
    if _given(props, "image"):
        return
    if any(not isinstance(props.get(key) or [], list) for key in PROPERTIES):
        return  # not resolved yet (a get_attr): the create will tell
    if any(d.get("boot_index") in (0, "0") and d.get("destination_type") == "volume"
           for d in block_devices(props)):
        return
    raise StackValidationFailed(f"Neither image nor bootable volume is specified for instance "
                                f"{resource_name}")
