"""kombu's filesystem transport, made safe for several producers and consumers.

The embedded run mode needs a broker without a server. kombu's filesystem
transport writes a message file in place, so a consumer polling the folder
can pick it up half-written (seen here: a worker crashed on an empty file
and the message was lost); and it moves taken files to the temp dir, which
is a copy (not atomic) when that is another filesystem. Here a message is
written under a temporary name and renamed into the queue folder, and a
consumer claims a file by renaming it inside the broker folder: both are
atomic on one filesystem, so each message is read whole and by one consumer.

Registered as the ``heatwebfs://`` broker URL (the embedded default).
"""
import os
import uuid
from time import monotonic

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

SCHEME = "heatwebfs"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        partial = os.path.join(self.data_folder_out, f"{uuid.uuid4().hex}.partial")
        with open(partial, "wb") as out:
            out.write(str_to_bytes(dumps(payload)))
        os.rename(partial, os.path.join(self.data_folder_out, name))

    def _get(self, queue):
        wanted = f".{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if not name.endswith(wanted):
                continue
            claimed = os.path.join(self.processed_folder, f"{uuid.uuid4().hex}-{name}")
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another consumer took it first
            with open(claimed, "rb") as message:
                payload = message.read()
            os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise filesystem.Empty()


class Transport(filesystem.Transport):
    Channel = Channel
    driver_type = driver_name = SCHEME


TRANSPORT_ALIASES.setdefault(SCHEME, "heatweb.broker:Transport")
