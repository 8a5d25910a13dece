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
``restore_unacked`` (run by the engines' sweep) puts its claims back in the
queue, so another worker runs them. A claim's name carries the claiming
process's id (the broker is one machine's folder): the claims of a live
worker stay, however old. A worker holds a task with a countdown (a poll
round's next look, up to a timed wait's end) claimed until it is due; handing
such a claim back after the visibility timeout delivered it to its own worker
again, twice or three times, and the duplicates' acknowledgements left the
worker's prefetch count wrong, so it took no further message (seen: a stack
whose worker was killed stayed IN_PROGRESS after its wait ended).

A worker consumes from the folder in Celery's event loop, as it does from
Redis, rather than in Celery's blocking fallback loop: that loop blocks up
to 2 s in each poll of the broker, and a worker whose prefetch was full
(its two pool processes busy) acknowledged its finished tasks, and so took
the next ones, only when such a poll timed out; a parent's children then
ran two at a time, two seconds apart. In the event loop a finished task is
acknowledged at once and the next message taken in the same turn, and a
new message wakes the worker through inotify (a look every
``polling_interval`` where inotify is missing, and every second anyway).

Registered as the ``heatwebfs://`` broker URL (the embedded default).
"""
import base64
import ctypes
import json
import logging
import os
import time
import uuid
from time import monotonic

from kombu.transport import TRANSPORT_ALIASES, filesystem, virtual
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

SCHEME = "heatwebfs"
log = logging.getLogger(__name__)

# A look at the folder every this many seconds even with inotify (a safety net).
INOTIFY_POLL_SECONDS = 1.0
# Messages delivered in one turn of the event loop before it attends to the rest.
DELIVER_PER_TURN = 100
_IN_MOVED_TO = 0x80  # every message enters the folder by a rename


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
        self._listing = {}

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

    def _names(self, queue, *, fresh):
        """The queue's file names, oldest last; a listing serves until it is used up.

        Listing (and sorting) the folder for every message made draining a
        long queue quadratic. Names another consumer took meanwhile only fail
        their rename; when a kept listing runs out that way, the folder is
        listed again.
        """
        names = self._listing.get(queue)
        if fresh or not names:
            wanted = f".{queue}.msg"
            names = sorted((n for n in os.listdir(self.data_folder_in) if n.endswith(wanted)),
                           reverse=True)
            self._listing[queue] = names
            return names, True
        return names, False

    def _get(self, queue):
        fresh = False
        while True:
            names, fresh = self._names(queue, fresh=fresh)
            while names:
                payload = self._claim(queue, names.pop())
                if payload is not None:
                    return payload
            if fresh:
                raise filesystem.Empty()
            fresh = True

    def _claim(self, queue, name):
        claimed = os.path.join(self.processed_folder,
                               f"{uuid.uuid4().hex}.{os.getpid()}-{name}")
        try:
            os.rename(os.path.join(self.data_folder_in, name), claimed)
        except OSError:
            return None  # another consumer took it first
        os.utime(claimed)  # the claim's age, for restore_unacked
        with open(claimed, "rb") as message:
            payload = loads(bytes_to_str(message.read()))
        tag = payload.get("properties", {}).get("delivery_tag")
        if queue in self._no_ack_queues or tag is None:
            os.remove(claimed)
        else:
            self._claims[tag] = claimed
        return payload

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


def _claimer_alive(name):
    """True when the process that claimed ``name`` runs; None when the name does not say."""
    claimer = name.split("-", 1)[0].rpartition(".")[2]
    if not claimer.isdigit():
        return None
    try:
        with open(f"/proc/{claimer}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] not in (b"Z", b"X")  # not a zombie
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the process
        try:
            os.kill(int(claimer), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # another user's process of that id
        return True


def restore_unacked(options, *, older_than):
    """Put dead claimers' claims back in the queue; returns how many.

    A claim whose name does not say who took it goes back after
    ``older_than`` seconds (the visibility timeout).
    """
    folder, queue = options["processed_folder"], options["data_folder_in"]
    limit = time.time() - older_than
    restored = 0
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            alive = _claimer_alive(name)
            if alive or (alive is None and os.path.getmtime(path) >= limit):
                continue
            os.rename(path, os.path.join(queue, name.split("-", 1)[-1]))
            restored += 1
        except OSError:
            continue  # acknowledged or restored by someone else meanwhile
    return restored


def _inotify_watch(folder):
    """A non-blocking inotify descriptor told of files renamed into ``folder``; None without."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_MOVED_TO) < 0:
        os.close(fd)
        return None
    return fd


class Transport(filesystem.Transport):
    """The filesystem transport, consumed in Celery's event loop (see the module's docstring)."""

    Channel = Channel
    driver_type = driver_name = SCHEME
    implements = filesystem.Transport.implements.extend(asynchronous=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._watch = None
        self._waker = None
        self._more = False  # messages may be waiting: deliver in the next turn
        self._blocked = []  # channels whose prefetch was full at the last delivery

    def register_with_event_loop(self, connection, loop):
        for fd in (self._watch, *(self._waker or ())):
            if fd is not None:
                os.close(fd)
        folder = self.client.transport_options.get("data_folder_in", "data_in")
        self._watch = _inotify_watch(folder)
        self._waker = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        loop.add_reader(self._waker[0], self._on_wake)
        interval = self.polling_interval or 1.0
        if self._watch is not None:
            loop.add_reader(self._watch, self._on_watch)
            interval = max(interval, INOTIFY_POLL_SECONDS)
        else:
            log.warning("no inotify for %s: looking for messages every %.2f s", folder,
                        interval)
        self._more = True
        loop.on_tick.add(self._on_tick)
        loop.call_repeatedly(interval, self._on_poll)

    def _on_watch(self):
        try:
            while os.read(self._watch, 65536):
                pass
        except BlockingIOError:
            pass
        self._more = True
        self._on_tick()

    def _on_wake(self):
        try:
            while os.read(self._waker[0], 4096):
                pass
        except BlockingIOError:
            pass

    def _on_poll(self):
        self._more = True

    def _on_tick(self):
        """Deliver what may be waiting, or what waited on a prefetch that has room again.

        Runs every turn of the event loop, after the acknowledgements of
        the tasks that finished: a full prefetch frees up here. A delivery
        that stops at a full prefetch wakes the loop for one more turn: the
        acknowledgements it may have queued itself (a solo pool runs tasks
        inside the delivery, a dropped message is acknowledged there) run in
        that turn, where no file descriptor would have woken the loop for them.
        """
        if not self._more and not any(c.qos.can_consume() for c in self._blocked):
            return
        self._more = False
        for _ in range(DELIVER_PER_TURN):
            try:
                self.cycle.get(self._deliver)
            except filesystem.Empty:
                self._blocked = [c for c in self.channels
                                 if c._consumers and not c.qos.can_consume()]
                if self._blocked:
                    try:
                        os.write(self._waker[1], b"x")
                    except BlockingIOError:
                        pass  # full: a turn is coming anyway
                return
        self._more = True  # more than a turn's worth: go on in the next turn


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


def _task_of(raw):
    """``(task name, args)`` of a raw message (a JSON document as the transports store it)."""
    try:
        message = json.loads(raw)
        if isinstance(message, list):  # Redis's unacked entries: [message, exchange, key]
            message = message[0]
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        return message["headers"]["task"], json.loads(body)[0]
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _fs_raw_messages(options):
    for folder in (options["data_folder_in"], options["processed_folder"]):
        for name in os.listdir(folder):
            if not name.endswith(".msg"):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as message:
                    yield message.read()
            except OSError:
                continue  # taken or acknowledged meanwhile


def _redis_raw_messages(app, queue):
    with app.pool.acquire(block=True) as conn:
        client = conn.default_channel.client
        yield from client.lrange(queue, 0, -1)
        yield from client.hvals(conn.default_channel.unacked_key)


def broker_queued_tasks(app):
    """``[(task name, args), ...]`` of the messages waiting in the queue or taken and not acknowledged.

    For the recovery sweep, which must not take a stack for abandoned while
    its work is still on its way. None when the broker cannot say (another
    transport, or it is unreachable).
    """
    url = app.conf.broker_url or ""
    try:
        if url.startswith(SCHEME):
            raws = _fs_raw_messages(app.conf.broker_transport_options)
        elif url.startswith(("redis://", "rediss://")):
            raws = _redis_raw_messages(app, app.conf.task_default_queue)
        else:
            return None
        return [task for task in map(_task_of, raws) if task is not None]
    except Exception:  # noqa: BLE001 - the broker is down: the sweep decides without it
        log.exception("listing the broker's queued messages")
        return None
