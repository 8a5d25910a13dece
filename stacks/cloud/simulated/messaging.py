"""What Zaqar's kinds do in the simulated cloud beyond storing their fields.

Like Zaqar's v2 API: a queue is known by its name (the simulated cloud keeps one
namespace of names, Zaqar one per project), which is at most 64 ASCII letters, digits,
``_``, ``-`` or ``.``; putting a queue that exists is no error (its metadata is
replaced, as python-zaqarclient's ``metadata(new_meta=...)`` does); the reserved
metadata ``_default_message_ttl`` (60 to 1209600 seconds) and
``_max_messages_post_size`` (1 to 262144) are checked. A subscription's subscriber is
``http``, ``https``, ``mailto``, ``trust+http`` or ``trust+https``, its ttl at least 60;
subscribing one subscriber to a queue twice answers the first subscription (Zaqar's
201 with the same id); its id is ``<queue>/<subscription id>``. A signed URL is
Zaqar's: paths among messages, subscriptions and claims, GET by default, valid one day
by default, HMAC-SHA256-signed (here with heatweb's secret). Messages are kept as
``queue_message`` rows (``queue_post``; ``queue_pop`` reads and deletes them, oldest
first); a queue's delete takes them. A message posted to a queue with a Mistral trigger
(a ``trust+`` subscriber on the workflow service's ``/executions``) starts an execution
with the subscription's ``post_data``, ``$zaqar_message$`` replaced by the message, as
Zaqar's notifier POSTs it to Mistral.
"""
import datetime
import hashlib
import json
import hmac
import re
import uuid

from django.conf import settings
from django.db import transaction

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated.objects import live

QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_\-.]+$")
SUBSCRIBER_TYPES = ["http", "https", "mailto", "trust+http", "trust+https"]
SHARE_PATHS = {"messages", "subscriptions", "claims"}
MAX_MESSAGE_TTL = 1209600
MAX_POST_SIZE = 262144
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"


def _bad(message):
    return CloudError(f"{message} (HTTP 400)")


def check_queue_name(name):
    if len(name) > 64 or not QUEUE_NAME.match(name or ""):
        raise _bad("The format of the submitted queue name or project id is not valid.")


def _check_metadata(metadata):
    if not isinstance(metadata, dict):
        raise _bad("Queue metadata must be a JSON object.")
    ttl = metadata.get("_default_message_ttl")
    if ttl is not None and (not isinstance(ttl, int) or not 60 <= ttl <= MAX_MESSAGE_TTL):
        raise _bad(f"_default_message_ttl can not exceed {MAX_MESSAGE_TTL} seconds, and must "
                   f"be at least 60 seconds long.")
    size = metadata.get("_max_messages_post_size")
    if size is not None and (not isinstance(size, int) or not 0 < size <= MAX_POST_SIZE):
        raise _bad(f"_max_messages_post_size can not exceed {MAX_POST_SIZE},  and must be at "
                   f"least greater than 0.")


def _check_subscription(fields):
    subscriber = fields.get("subscriber")
    if subscriber is not None and subscriber.split(":", 1)[0] not in SUBSCRIBER_TYPES:
        raise _bad(f"The subscriber type of subscription must be supported in the list "
                   f"{SUBSCRIBER_TYPES}.")
    ttl = fields.get("ttl")
    if ttl is not None and ttl < 60:
        raise _bad("The TTL for a subscription must be at least 60 seconds long.")
    if fields.get("options") is not None and not isinstance(fields["options"], dict):
        raise _bad("Options must be a dict.")


def signed_url(queue, *, project_id, paths=None, methods=None, ttl=None):
    """Zaqar's ``POST /v2/queues/<queue>/share`` answer."""
    check_queue_name(queue)
    if paths:
        unknown = set(paths) - SHARE_PATHS
        if unknown:
            raise _bad(f"Invalid paths: {unknown}")
    paths = sorted(f"/v2/queues/{queue}/{path}" for path in (paths or ["messages"]))
    methods = sorted(methods or ["GET"])
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    expires = now + datetime.timedelta(seconds=86400 if ttl is None else ttl)
    if expires <= now:
        raise _bad("`expires` is lower than the current time")
    expires = expires.strftime(DATE_FORMAT)
    body = f"{','.join(paths)}\\n{','.join(methods)}\\n{project_id}\\n{expires}".encode()
    return {"paths": paths, "methods": methods, "project": project_id, "expires": expires,
            "signature": hmac.new(settings.SECRET_KEY.encode(), body,
                                  hashlib.sha256).hexdigest()}


class SimulatedZaqar:
    """Mixin of ``SimulatedCloud``: Zaqar's queue and subscription hooks, signed URLs."""

    def _create_queue(self, *, project_id, name, fields, creation_key):
        check_queue_name(name)
        metadata = fields.get("metadata") or {}
        _check_metadata(metadata)
        if live("queue", pk=name).exists():
            self.object_update("queue", name, metadata=metadata)
            return name
        self.sim_row_create("queue", project_id=project_id, name=name, object_id=name,
                            creation_key=creation_key, fields={"metadata": metadata})
        return name

    def _update_queue(self, row, fields):
        if "metadata" in fields:
            fields = {**fields, "metadata": fields["metadata"] or {}}
            _check_metadata(fields["metadata"])
        return fields

    def _describe_queue(self, row, out):
        out["href"] = f"https://messaging.simulated/v2/queues/{row.pk}"

    def _create_queue_subscription(self, *, project_id, name, fields, creation_key):
        queue = fields.get("queue_name") or ""
        check_queue_name(queue)
        _check_subscription(fields)
        for row in live("queue_subscription", fields__source=queue):
            if row.fields.get("subscriber") == fields.get("subscriber"):
                return row.pk  # Zaqar answers the existing subscription
        if not live("queue", pk=queue).exists():  # Zaqar makes the queue it subscribes to
            self._create_queue(project_id=project_id, name=queue, fields={},
                               creation_key="")
        object_id = f"{queue}/{uuid.uuid4()}"
        self.sim_row_create("queue_subscription", project_id=project_id, name="",
                            object_id=object_id, creation_key=creation_key, fields={
                                "source": queue, "subscriber": fields.get("subscriber"),
                                "ttl": fields.get("ttl") or 3600,
                                "options": fields.get("options") or {}, "confirmed": False})
        return object_id

    def _update_queue_subscription(self, row, fields):
        fields = {k: v for k, v in fields.items() if k != "queue_name"}
        if fields.get("options") is None and "options" in fields:
            fields["options"] = {}
        _check_subscription(fields)
        return fields

    def queue_signed_url(self, queue, *, project_id, paths=None, methods=None, ttl=None):
        return signed_url(queue, project_id=project_id, paths=paths, methods=methods, ttl=ttl)

    def _deleted_queue(self, row):
        for message in live("queue_message", fields__queue=row.pk):
            self.sim_row_delete(message)

    def queue_post(self, queue, bodies, *, ttl=3600):
        check_queue_name(queue)
        row = live("queue", pk=queue).first()
        if row is None:  # Zaqar makes the queue on first use
            self._create_queue(project_id="", name=queue, fields={}, creation_key="")
            row = live("queue", pk=queue).first()
        for body in bodies:
            self.sim_row_create("queue_message", project_id=row.project_id, name="",
                                fields={"queue": queue, "body": body, "ttl": ttl})
        self._notify_mistral(queue, bodies, project_id=row.project_id)

    def _notify_mistral(self, queue, bodies, *, project_id):
        executions = f"trust+{self.workflow_endpoint()}/executions"
        for row in live("queue_subscription", fields__source=queue):
            if row.fields.get("subscriber") != executions:
                continue
            post_data = (row.fields.get("options") or {}).get("post_data") or "{}"
            for body in bodies:
                data = json.loads(post_data.replace('"$zaqar_message$"', json.dumps(body)))
                try:
                    self.object_create("workflow_execution", project_id=project_id, name=None,
                                       workflow_id=data.get("workflow_id"),
                                       input=data.get("input"), params=data.get("params"))
                except CloudError:
                    pass  # Zaqar's notifier logs Mistral's refusal and goes on

    def queue_pop(self, queue, *, limit=20):
        with transaction.atomic():
            rows = list(live("queue_message", fields__queue=queue)
                        .select_for_update().order_by("created_at", "id")[:limit])
            for row in rows:
                self.sim_row_delete(row)
        return [row.fields.get("body") for row in rows]
