"""Wait conditions: a stack waits until something outside it (a server's user_data) signals.

``OS::Heat::WaitConditionHandle`` hands out a signed URL (its ``endpoint``
and a ready ``curl_cli``) and records every signal POSTed to it;
``OS::Heat::WaitCondition`` completes when ``count`` SUCCESS signals
arrived on its handle, and fails on a FAILURE signal or its timeout. The
wait is the engine's batched wait (a ``Waiter`` row, checked in the poll
round); a signal wakes it at once (``signal_wakes``).

A handle whose ``signal_transport`` is ``ZAQAR_SIGNAL`` also makes a Zaqar queue of its
own (Heat's "dedicated zaqar queue"). In Keystone mode, as Heat's: the handle gets a
stack user (``stacks.resources.stack_user``), the queue (named by the handle's physical
name) is made in the stack's user project as that user, and the ``signal`` attribute is
Heat's JSON string of the user's credentials and the queue (``auth_url``, ``username``,
``user_id``, ``password``, ``project_id``, ``domain_id``, ``region_name``,
``queue_id``): a sender logs in with them and posts to the queue. Without Keystone there
is no user to give: the queue is the stack's project's, with a signed URL of it (GET,
POST and DELETE on its messages), and ``signal`` gives the queue and the signed URL's
credentials instead of a password (``project_id``, ``signature``, ``expires``,
``paths``, ``methods``: Zaqar's headers ``X-Project-ID``, ``URL-Signature``,
``URL-Expires``, ``URL-Paths``, ``URL-Methods``). A message posted there, whose body is
the signal, is read (and deleted from the queue) by the waiting wait condition each time
the poll round looks at it, as Heat's ``_service_zaqar_signal``. Deleting the handle
deletes its queue, then its user.
"""
import json
import logging
import re
import time
from datetime import datetime, timezone

from django.db import IntegrityError, transaction

from heatweb.api import as_uuid
from heatweb.exceptions import BadRequest
from stacks.models import Resource, WaitConditionSignal
from stacks.models.events import resource_event
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources import stack_user
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range
from stacks.resources.signal_urls import handle_uuid, signal_url, url_signature
from stacks.resources.zaqar import reduced_name

log = logging.getLogger(__name__)

HANDLE_TYPE = "OS::Heat::WaitConditionHandle"
UPDATE_HANDLE_TYPE = "OS::Heat::UpdateWaitConditionHandle"
AWS_HANDLE_TYPE = "AWS::CloudFormation::WaitConditionHandle"  # stacks.resources.aws
CFN_KEYS = {"Status": "status", "Reason": "reason", "Data": "data", "UniqueId": "id"}
CONDITION_TYPE = "OS::Heat::WaitCondition"
STATUSES = ("SUCCESS", "FAILURE")
TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL",
              "TOKEN_SIGNAL")
ZAQAR_QUEUE = "zaqar_signal_queue_id"  # plugin data of a ZAQAR_SIGNAL handle (Heat's key)
ZAQAR_SIGNED = "zaqar_queue_signed_url_data"


@register
class WaitConditionHandle(ResourcePlugin):
    """Receives the signals a wait condition waits for.

    POST ``{"status": "SUCCESS"|"FAILURE", "reason": ..., "data": ..., "id": ...}``
    to ``endpoint`` (a signed URL: the signature is the secret, no token is
    checked), or run ``curl_cli`` with ``--data-binary '<that JSON>'``
    appended. A missing status is SUCCESS; a signal id counts once, and a
    signal without one gets the next number. Every ``signal_transport`` is
    served by the same signed URL; ``ZAQAR_SIGNAL`` also by a queue of its own (see the
    module's doc).
    """

    type_name = HANDLE_TYPE
    properties_schema = {
        "signal_transport": Property(
            "String", description="How the signal is sent; every transport is served by the "
            "same signed URL.", default="TOKEN_SIGNAL",
            constraints=(AllowedValues(TRANSPORTS),)),
    }
    signed_url_attributes = ("endpoint", "token", "curl_cli", "signal")
    attributes_schema = {
        "endpoint": Attribute("The URL to POST a signal to (signed: no token needed)."),
        "token": Attribute("The value sent as X-Auth-Token by curl_cli (the URL's "
                           "signature; the URL alone is enough)."),
        "curl_cli": Attribute("A curl command signalling the handle: append "
                              "--data-binary '{\"status\": \"SUCCESS\"}'."),
        "signal": Attribute("JSON serialized map of what a signal needs: endpoint and "
                            "token; for ZAQAR_SIGNAL the queue and the stack user's "
                            "credentials (Keystone mode) or a signed URL of the queue."),
    }

    def _uuid(self):
        return Resource.objects.filter(pk=self.resource_id).values_list(
            "uuid", flat=True).first()

    def handle_create(self):
        self.physical_id = str(self._uuid())
        if self.properties.get("signal_transport") == "ZAQAR_SIGNAL":
            if stack_user.ensure_user(self):  # Keystone mode: Heat's queue, user and project
                cloud, project_id = stack_user.user_cloud(self), self.data[stack_user.PROJECT]
                self.data[ZAQAR_QUEUE] = _cloud_call(cloud.object_create, "queue",
                                                     project_id=project_id,
                                                     name=stack_user.physical_name(self),
                                                     metadata={})
                return
            cloud, project_id = self.context.cloud, self.context.project_id
            name = reduced_name(re.sub(r"[^A-Za-z0-9_.-]", "-", f"{self.context.stack_name}-"
                                       f"{self.name}-{self.physical_id[:8]}"))
            self.data[ZAQAR_QUEUE] = _cloud_call(cloud.object_create, "queue",
                                                 project_id=project_id, name=name,
                                                 metadata={})
            self.data[ZAQAR_SIGNED] = _cloud_call(
                cloud.queue_signed_url, name, project_id=project_id, paths=["messages"],
                methods=["GET", "POST", "DELETE"])

    def handle_delete(self):
        WaitConditionSignal.objects.filter(resource_id=self.resource_id).delete()
        if self.data.get(ZAQAR_QUEUE):
            _cloud_call(stack_user.user_cloud(self).object_delete, "queue",
                        self.data[ZAQAR_QUEUE])
        stack_user.delete_user(self)

    def handle_suspend(self):
        """A ZAQAR_SIGNAL handle's stack user cannot log in while it is suspended (Heat's
        handle inherits ``StackUser.handle_suspend``)."""
        stack_user.suspend_user(self)

    def handle_resume(self):
        stack_user.resume_user(self)

    def handle_signal(self, details):
        details = details if isinstance(details, dict) else {}
        # cfn-signal's keys (CloudFormation's handle format) mean the same.
        details = {CFN_KEYS.get(k, k): v for k, v in details.items()}
        status = details.get("status") or "SUCCESS"
        if status not in STATUSES:
            raise BadRequest(f'Metadata format invalid: status "{status}" is not one of '
                             f'{", ".join(STATUSES)}.')
        given = details.get("id")
        signal_id = str(given) if given not in (None, "") else None
        last = None
        for _ in range(20):
            # As Heat: a signal without an id takes the next number, and without a reason
            # "Signal <that number> received"; a signal with an id it had replaces that one.
            count = WaitConditionSignal.objects.filter(resource_id=self.resource_id).count()
            number = signal_id or str(count + 1)
            reason = str(details.get("reason") or f"Signal {count + 1} received")
            fields = {"status": status, "reason": reason, "data": details.get("data")}
            try:
                with transaction.atomic():
                    if signal_id is not None or count == last:
                        WaitConditionSignal.objects.update_or_create(
                            resource_id=self.resource_id, signal_id=number, defaults=fields)
                    else:  # a racing signal without an id took the number: count again
                        WaitConditionSignal.objects.create(
                            resource_id=self.resource_id, signal_id=number, **fields)
                break
            except IntegrityError:
                last = count
        else:
            raise ResourceFailure("Too many signals at once to number them")
        return f"Signal: status:{status} reason:{reason}"  # Heat's event reason

    @classmethod
    def shown_metadata(cls, res):
        """Heat keeps a handle's signals in its metadata: ``{id: {data, reason, status}}``."""
        signals = WaitConditionSignal.objects.filter(resource_id=res.pk).order_by("pk")
        return {**(res.rsrc_metadata or {}),
                **{s.signal_id: {"data": s.data, "reason": s.reason, "status": s.status}
                   for s in signals}}

    def signal_wakes(self):
        """Ids of the waiting wait conditions of this handle (the signal may complete them)."""
        if not self.physical_id:
            return []
        rows = Resource.objects.filter(stack_id=self.context.stack_id, type=CONDITION_TYPE,
                                       action_cookie__isnull=False)
        # A pending action's properties are in its cookie until the action finishes.
        return [pk for pk, pending in rows.values_list("pk", "action_cookie")
                if handle_uuid(((pending or {}).get("props") or {}).get("handle"))
                == self.physical_id]

    def attributes(self):
        if not self.physical_id:
            return {}
        endpoint = signal_url(self.physical_id)
        token = url_signature(self.physical_id)
        return {
            "endpoint": endpoint, "token": token,
            "curl_cli": (f"curl -i -X POST -H 'X-Auth-Token: {token}' "
                         "-H 'Content-Type: application/json' "
                         f"-H 'Accept: application/json' {endpoint}"),
            "signal": json.dumps(self._zaqar_signal() or {"endpoint": endpoint,
                                                           "token": token}),
        }

    def _zaqar_signal(self):
        if stack_user.has_user(self) and self.data.get(ZAQAR_QUEUE):
            return {**stack_user.credentials(self), "queue_id": self.data[ZAQAR_QUEUE]}
        signed = self.data.get(ZAQAR_SIGNED)
        if not signed:
            return {}
        return {"queue_id": self.data[ZAQAR_QUEUE], "project_id": signed["project"],
                **{key: signed[key] for key in ("signature", "expires", "paths", "methods")}}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)


@register
class UpdateWaitConditionHandle(WaitConditionHandle):
    """A wait condition handle that every stack update replaces: its signals are cleared
    and its endpoint changes, so the senders must signal again after each update (Heat
    uses it to know a new configuration was rolled out once UPDATE_COMPLETE is reached).
    Signals in cfn-signal's format (Status, Reason, Data, UniqueId) are accepted too.
    """

    type_name = UPDATE_HANDLE_TYPE
    properties_schema = {}
    replace_on_update = True

    def get_reference_id(self):
        """Its signed URL, as Heat's (a subclass of the CloudFormation handle there):
        ``get_resource`` of it is what a guest curls (heat-tempest-plugin's volume
        templates ``PUT`` cfn-signal's JSON to it)."""
        return signal_url(self.physical_id) if self.physical_id else self.name


def _clock(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%H:%M:%S UTC")


@register
class WaitCondition(ResourcePlugin):
    """Waits until ``count`` SUCCESS signals arrived on ``handle``.

    A FAILURE signal fails it at once with the signal's reason; ``timeout``
    seconds without enough signals fail it too ("WaitConditionTimeout").
    The ``data`` attribute is a JSON string of ``{signal id: data}``.
    """

    type_name = CONDITION_TYPE
    properties_schema = {
        "handle": Property("String", description="The handle ({get_resource: handle}).",
                           required=True),
        "timeout": Property("Integer", description="Seconds to wait for the signals.",
                            default=3600, constraints=(Range(1, 43200),)),
        "count": Property("Integer", description="SUCCESS signals needed.", default=1,
                          constraints=(Range(1, None),)),
    }
    attributes_schema = {
        "data": Attribute("JSON string of {signal id: data} of the signals received."),
    }

    def _handle(self):
        handle = as_uuid(handle_uuid(self.properties.get("handle")))
        res = Resource.objects.filter(stack_id=self.context.stack_id, uuid=handle,
                                      type__in=(HANDLE_TYPE, UPDATE_HANDLE_TYPE,
                                                AWS_HANDLE_TYPE)).first() \
            if handle else None
        if res is None:
            raise ResourceFailure(f"WaitConditionHandle {self.properties.get('handle')} "
                                  f"not found in the stack")
        return res

    def _signals(self, res=None):
        res = res or self._handle()
        return WaitConditionSignal.objects.filter(resource_id=res.pk).order_by("created_at",
                                                                                "id")

    def _service_zaqar_signal(self, res):
        """The messages on a ZAQAR_SIGNAL handle's queue become its signals (Heat's
        ``_service_zaqar_signal``: popped, each body one signal)."""
        queue = (res.plugin_data or {}).get(ZAQAR_QUEUE)
        if not queue:
            return
        handle = WaitConditionHandle(name=res.name, properties=res.properties_data,
                                     context=self.context, physical_id=res.physical_resource_id,
                                     data=dict(res.plugin_data), resource_id=res.pk)
        bodies = _cloud_call(stack_user.user_cloud(handle).queue_pop, queue)
        if not bodies:
            return
        for body in bodies:
            try:
                reason = handle.handle_signal(body)
            except BadRequest as refused:  # a body that is no signal: said, not counted
                reason = f"Signal refused: {refused}"
                log.warning("zaqar signal to %s refused: %s", res.name, refused)
            resource_event(res, reason, action="SIGNAL", status="COMPLETE").save()

    def handle_create(self):
        self._signals()  # the handle must exist
        since = time.time()
        self.physical_id = f"{self.context.stack_name}-{self.name}"
        # Not "until": the engine would take that for a timed wait and look only then;
        # a signal wakes the wait, and the round looks again in case a wake was missed.
        return {"waiting_since": since, "deadline": since + self.properties["timeout"]}

    def check_create_complete(self, cookie):
        if not cookie or "deadline" not in cookie:
            return True
        res = self._handle()
        self._service_zaqar_signal(res)
        signals = list(self._signals(res).values_list("status", "reason"))
        failures = [reason for status, reason in signals if status == "FAILURE"]
        if failures:
            raise ResourceFailure(f"WaitConditionFailure: resources.{self.name}: "
                                  f"{'; '.join(failures)}")
        received = sum(1 for status, _ in signals if status == "SUCCESS")
        count = self.properties["count"]
        if received >= count:
            return True
        if time.time() >= cookie["deadline"]:
            raise ResourceFailure(f"WaitConditionTimeout: resources.{self.name}: "
                                  f"{received} of {count} received")
        return False

    def waiting_reason(self, cookie):
        if not cookie or "deadline" not in cookie:
            return None
        return (f"Waiting for {self.properties['count']} signal(s) since "
                f"{_clock(cookie['waiting_since'])}, until {_clock(cookie['deadline'])}")

    def attributes(self):
        try:
            rows = self._signals().values_list("signal_id", "data")
        except ResourceFailure:
            return {}
        return {"data": json.dumps(dict(rows))}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)
