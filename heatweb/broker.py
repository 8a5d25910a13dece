"""kombu's filesystem transport, made safe for several producers and consumers.

The embedded run mode needs a broker without a server. kombu's filesystem
transport writes a message file in place, so a consumer polling the folder
can pick it up half-written (seen here: a worker crashed on an empty file
and the message was lost); and it moves taken files to the temp dir, which
is a copy (not atomic) when that is another filesystem. Here a message is
written under a temporary name and renamed into the queue folder, and a
consumer claims a file by renaming it inside the broker folder: both are
atomic on one filesystem, so each message is read whole and by one consumer.

A claimed file stays until the message is acknowledged (or rejected), like
Redis's unacked messages: when a worker dies with messages it took,
``restore_unacked`` (run by the engines' sweep) puts claims older than the
visibility timeout back in the queue, so another worker runs them.

Registered as the ``heatwebfs://`` broker URL (the embedded default).
"""
import os
import time
import uuid
from time import monotonic

from kombu.transport import TRANSPORT_ALIASES, filesystem, virtual
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

SCHEME = "heatwebfs"


class QoS(virtual.QoS):
    """Acknowledging (or rejecting) a message deletes its claimed file."""

    def ack(self, delivery_tag):
        super().ack(delivery_tag)
        self.channel.claim_release(delivery_tag)

    def reject(self, delivery_tag, requeue=False):
        super().reject(delivery_tag, requeue)
        self.channel.claim_release(delivery_tag)


class Channel(filesystem.Channel):
    QoS = QoS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._claims = {}
        self._no_ack_queues = set()

    def basic_consume(self, queue, no_ack, *args, **kwargs):
        if no_ack:
            self._no_ack_queues.add(queue)
        return super().basic_consume(queue, no_ack, *args, **kwargs)

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
            os.utime(claimed)  # the claim's age, for restore_unacked
            with open(claimed, "rb") as message:
                payload = loads(bytes_to_str(message.read()))
            tag = payload.get("properties", {}).get("delivery_tag")
            if queue in self._no_ack_queues or tag is None:
                os.remove(claimed)
            else:
                self._claims[tag] = claimed
            return payload
        raise filesystem.Empty()

    def _restore(self, message):
        super()._restore(message)
        self.claim_release(message.delivery_tag)

    def claim_release(self, delivery_tag):
        path = self._claims.pop(delivery_tag, None)
        if path:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass  # restored meanwhile by restore_unacked


def restore_unacked(options, *, older_than):
    """Put claims older than ``older_than`` seconds back in the queue; returns how many."""
    folder, queue = options["processed_folder"], options["data_folder_in"]
    limit = time.time() - older_than
    restored = 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if os.path.getmtime(path) >= limit:
                continue
            os.rename(path, os.path.join(queue, name.split("-", 1)[-1]))
            restored += 1
        except OSError:
            continue  # acknowledged or restored by someone else meanwhile
    return restored


class Transport(filesystem.Transport):
    Channel = Channel
    driver_type = driver_name = SCHEME


TRANSPORT_ALIASES.setdefault(SCHEME, "heatweb.broker:Transport")


def broker_restore_unacked(app):
    """Hand back messages that workers took and never acknowledged within the visibility timeout.

    kombu's Redis transport does this itself only every ~100 s; the
    engines' sweep calls it every beat so a dead worker's tasks run again
    within the visibility timeout. RabbitMQ redelivers by itself.
    """
    url = app.conf.broker_url or ""
    options = app.conf.broker_transport_options or {}
    if url.startswith(SCHEME):
        return restore_unacked(options, older_than=options["visibility_timeout"])
    if url.startswith(("redis://", "rediss://")):
        with app.pool.acquire(block=True) as conn:
            conn.default_channel.qos.restore_visible(num=100, interval=1)
    return None
