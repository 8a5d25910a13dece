"""Zaqar on a real cloud: queues, subscriptions and signed URLs (its v2 API).

Plain REST calls through openstacksdk's ``message`` proxy (its session finds the
endpoint, ``messaging`` in the catalog, and its version), each with one ``Client-ID``
per driver, as Zaqar requires. A queue is known by its name: a PUT makes it, and a PUT
of one that exists changes nothing, so its metadata is then replaced with a JSON patch
(python-zaqarclient's ``metadata(new_meta=...)``, which Heat calls). Zaqar answers a
GET of any queue name (its defaults for a queue that does not exist): a queue exists
when the project's list of queues names it. A subscription's id is
``<queue>/<subscription id>``. A signed URL is the queue's ``share``.
"""
import datetime
import uuid
from urllib.parse import quote

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.openstack.calls import call

PATCH = {"Content-Type": "application/openstack-messaging-v2.0-json-patch"}
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"
PAGE = 20  # Zaqar's max_queues_per_page and max_messages_per_page


def _refused(response):
    """Zaqar's refusal (``{"title", "description"}``) in its own words."""
    try:
        body = response.json()
        words = body.get("description") or body.get("title")
    except ValueError:
        words = response.text.strip()
    error = CloudNotFound if response.status_code == 404 else CloudError
    return error(f"{words} (HTTP {response.status_code})")


class MessagingCalls:
    """Mixin of ``OpenStackCloud``: Zaqar's queues and subscriptions
    (``_os_<verb>_queue``, ``_os_<verb>_queue_subscription``) and signed URLs."""

    _client_id = str(uuid.uuid4())

    def _zaqar(self, method, path, *, ok=(200, 201, 204), headers=None, **kwargs):
        proxy = self.conn.message
        response = call(getattr(proxy, method), path, raise_exc=False,
                        headers={"Client-ID": self._client_id, **(headers or {})}, **kwargs)
        if response.status_code not in ok:
            raise _refused(response)
        return response

    @staticmethod
    def _q(name):
        return f"/queues/{quote(str(name), safe='')}"

    # Queues ----------------------------------------------------------------------------

    def _queue_names(self):
        names, marker = [], None
        while True:
            params = {"limit": PAGE, **({"marker": marker} if marker else {})}
            page = self._zaqar("get", "/queues", params=params).json().get("queues") or []
            names += [queue["name"] for queue in page]
            if len(page) < PAGE:
                return names
            marker = page[-1]["name"]

    def _queue_metadata_set(self, name, metadata):
        """Replace the queue's own metadata (the reserved ``_`` keys are kept unless given)."""
        have = self._zaqar("get", self._q(name)).json()
        ops = [{"op": "remove", "path": f"/metadata/{key}"} for key in have
               if key not in metadata and not key.startswith("_")]
        ops += [{"op": "replace" if key in have else "add", "path": f"/metadata/{key}",
                 "value": value} for key, value in metadata.items()]
        if ops:
            self._zaqar("patch", self._q(name), json=ops, headers=PATCH)

    def _os_create_queue(self, *, name, fields, creation_key, find_first):
        metadata = fields.get("metadata") or {}
        response = self._zaqar("put", self._q(name), json=metadata)
        if response.status_code == 204:  # it existed: Zaqar kept its metadata
            self._queue_metadata_set(name, metadata)
        return name

    def _os_get_queue(self, object_id):
        if object_id not in self._queue_names():
            return None
        metadata = self._zaqar("get", self._q(object_id)).json()
        href = f"{self.conn.message.get_endpoint().rstrip('/')}{self._q(object_id)}"
        return {"id": object_id, "name": object_id, "metadata": metadata, "href": href}

    def _os_update_queue(self, object_id, fields):
        if "metadata" in fields:
            self._queue_metadata_set(object_id, fields["metadata"] or {})

    def _os_delete_queue(self, object_id):
        self._zaqar("delete", self._q(object_id), ok=(204, 404))
        return True  # Zaqar deletes before it answers

    # Subscriptions ---------------------------------------------------------------------

    def _os_create_queue_subscription(self, *, name, fields, creation_key, find_first):
        queue = fields["queue_name"]
        body = {key: fields[key] for key in ("subscriber", "ttl", "options") if key in fields}
        created = self._zaqar("post", f"{self._q(queue)}/subscriptions", json=body).json()
        return f"{queue}/{created['subscription_id']}"

    @staticmethod
    def _subscription_path(object_id):
        queue, _, own = str(object_id).partition("/")
        return f"/queues/{quote(queue, safe='')}/subscriptions/{quote(own, safe='')}"

    def _os_get_queue_subscription(self, object_id):
        response = self._zaqar("get", self._subscription_path(object_id), ok=(200, 404))
        return None if response.status_code == 404 else response.json()

    def _os_update_queue_subscription(self, object_id, fields):
        body = {key: value for key, value in fields.items() if key != "queue_name"}
        if body:
            self._zaqar("patch", self._subscription_path(object_id), json=body)

    def _os_delete_queue_subscription(self, object_id):
        self._zaqar("delete", self._subscription_path(object_id), ok=(204, 404))
        return True

    # Messages --------------------------------------------------------------------------

    def queue_post(self, queue, bodies, *, ttl=3600):
        messages = [{"body": body, "ttl": ttl} for body in bodies]
        for start in range(0, len(messages), PAGE):  # Zaqar takes 20 a post
            self._zaqar("post", f"{self._q(queue)}/messages",
                        json={"messages": messages[start:start + PAGE]})

    def queue_pop(self, queue, *, limit=20):
        response = self._zaqar("delete", f"{self._q(queue)}/messages",
                               params={"pop": min(max(limit, 1), 20)}, ok=(200, 204, 404))
        if response.status_code != 200:
            return []
        return [message.get("body") for message in response.json().get("messages") or []]

    # Signed URLs -----------------------------------------------------------------------

    def queue_signed_url(self, queue, *, project_id, paths=None, methods=None, ttl=None):
        body = {}
        if paths is not None:
            body["paths"] = paths
        if methods is not None:
            body["methods"] = methods
        if ttl is not None:
            expires = datetime.datetime.now(datetime.timezone.utc) + \
                datetime.timedelta(seconds=ttl)
            body["expires"] = expires.strftime(DATE_FORMAT)
        return self._zaqar("post", f"{self._q(queue)}/share", json=body).json()
