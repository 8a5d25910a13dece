"""Zaqar's types as Heat 27 has them: ``OS::Zaqar::Queue``, ``OS::Zaqar::SignedQueueURL``,
``OS::Zaqar::Subscription`` and ``OS::Zaqar::MistralTrigger``.

A queue is one ``queue`` object of the messaging service, known by its name (its
physical id, as Heat's); its ``metadata`` updates in place, a new name replaces it. A
queue given no name is named after the stack, the resource and a short suffix, at most
64 characters (Heat's ``physical_resource_name_limit``). A signed queue URL is Zaqar's
``share`` of a queue: nothing to delete; its signature, expiry, paths, methods and
project are kept in the resource's data (``query_str`` is what an Aodh action
``zaqar://?...`` takes). A subscription is one ``queue_subscription`` object (id
``<queue>/<subscription id>``, its reference the subscription id as Heat's); subscriber,
ttl and options update in place. A Mistral trigger is a subscription whose subscriber
is Mistral's executions (``trust+<Mistral's endpoint>/executions``) and whose options'
``post_data`` name the workflow, its params (``env.notification`` the message, Zaqar's
``$zaqar_message$``) and input, as Heat's; every property but the queue updates in
place. On a cloud whose catalog has no ``messaging`` service,
validation answers Heat's ResourceTypeUnavailable. The simulated cloud keeps them as
generic objects, as strict as Zaqar's v2 API (``stacks/cloud/simulated/messaging.py``);
the OpenStack driver calls Zaqar's API (``stacks/cloud/openstack/messaging.py``).
"""
import json
from urllib.parse import urlencode

from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.mistral import CustomConstraint
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Length, Property, Range

ZAQAR = ("zaqar", "messaging")
NAME_LIMIT = 64
SUBSCRIBER_TYPES = ("http", "https", "mailto", "trust+http", "trust+https")
SIGNED = "signed_url"  # plugin data: Zaqar's answer to the share


def reduced_name(name, limit=NAME_LIMIT):
    """Heat's ``reduce_physical_resource_name``: the head and the tail kept, joined by
    a dash, when the name is longer than ``limit``."""
    if len(name) <= limit:
        return name
    tail = limit // 2
    return f"{name[:limit - tail - 1]}-{name[-tail:]}"


@register
class ZaqarQueue(CloudObjectResource):
    """A queue of messages (Zaqar's ``PUT /v2/queues/<name>``). Attribute ``href``: the
    queue's URL in Zaqar's API."""

    required_service = ZAQAR
    type_name = "OS::Zaqar::Queue"
    kind = "queue"
    properties_schema = {
        "name": prop("String", "Name of the queue instance to create.",
                     constraints=(Length(None, NAME_LIMIT),)),
        "metadata": prop("Map", "Arbitrary key/value metadata to store contextual "
                                "information about this queue.", update_allowed=True),
    }
    attributes_schema = {
        "queue_id": Attribute("ID of the queue (deprecated: use get_resource)."),
        "href": Attribute("The resource href of the queue."),
    }

    def object_name(self, props):
        if props.get("name"):
            return props["name"]
        suffix = str(self.creation_key or "")[-12:]
        return reduced_name(f"{self.context.stack_name}-{self.name}"
                        + (f"-{suffix}" if suffix else ""))

    def cloud_fields(self, props, names=None):
        fields = super().cloud_fields(props, names)
        if names is None or "metadata" in names:
            fields["metadata"] = props.get("metadata") or {}
        return fields

    def attribute_value(self, found, name):
        if name == "queue_id":
            return self.physical_id
        return super().attribute_value(found, name)

    def drift_pairs(self):
        """The metadata against the queue's, but for the reserved keys (``_...``) Zaqar adds
        with its defaults and the template did not set."""
        pairs = super().drift_pairs()
        if pairs and "metadata" in pairs:
            expected, actual = pairs["metadata"]
            if isinstance(actual, dict):
                actual = {k: v for k, v in actual.items()
                          if k in expected or not str(k).startswith("_")}
                same = {k: str(v) for k, v in expected.items()} == \
                    {k: str(v) for k, v in actual.items()}
                pairs["metadata"] = (expected, expected if same else actual)
        return pairs


@register
class ZaqarSignedQueueURL(ResourcePlugin):
    """A signed URL giving access to a queue's paths without a token (Zaqar's share):
    ``paths`` among messages, subscriptions and claims (default messages), ``methods``
    (default GET), valid ``ttl`` seconds (default a day). Nothing is deleted with it."""

    required_service = ZAQAR
    type_name = "OS::Zaqar::SignedQueueURL"
    cloud_calls_only = True
    properties_schema = {
        "queue": prop("String", "Name of the queue instance to create a URL for.",
                      required=True),
        "paths": prop("List", "List of allowed paths to be accessed. Default to allow queue "
                              "messages URL."),
        "ttl": prop("Integer", "Time validity of the URL, in seconds. Default to one day."),
        "methods": prop("List", "List of allowed HTTP methods to be used. Default to allow "
                                "GET.",
                        schema=Property("String", constraints=(AllowedValues(
                            ("GET", "DELETE", "PATCH", "POST", "PUT")),))),
    }
    attributes_schema = {
        "signature": Attribute("Signature of the URL built by Zaqar."),
        "expires": Attribute("Expiration date of the URL."),
        "paths": Attribute("Comma-delimited list of paths for convenience."),
        "methods": Attribute("Comma-delimited list of methods for convenience."),
        "project": Attribute("The ID of the Keystone project containing the queue."),
        "query_str": Attribute("An HTTP URI query fragment."),
    }
    signed_url_attributes = ("signature", "query_str")

    def handle_create(self):
        props = self.properties
        self.data[SIGNED] = _cloud_call(
            self.context.cloud.queue_signed_url, props["queue"],
            project_id=self.context.project_id, paths=props.get("paths"),
            methods=props.get("methods"), ttl=props.get("ttl"))
        self.physical_id = reduced_name(f"{self.context.stack_name}-{self.name}-"
                                    f"{str(self.creation_key or '')[-12:]}", 255)

    def handle_delete(self):
        return None  # a signed URL cannot be deleted (Heat's words)

    def check_delete_complete(self, cookie):
        return True

    def attributes(self):
        signed = self.data.get(SIGNED)
        if not signed or not self.physical_id:
            return {name: None for name in self.attributes_schema}
        query = urlencode({"signature": signed["signature"], "expires": signed["expires"],
                           "paths": ",".join(signed["paths"]),
                           "methods": ",".join(signed["methods"]),
                           "project_id": signed["project"],
                           "queue_name": self.properties.get("queue")})
        return {"signature": signed["signature"], "expires": signed["expires"],
                "paths": list(signed["paths"]), "methods": list(signed["methods"]),
                "project": signed["project"], "query_str": query}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)


@register
class ZaqarSubscription(CloudObjectResource):
    """A subscription of a subscriber (``<type>:<value>``: http, https, mailto,
    trust+http, trust+https) to a queue's messages."""

    required_service = ZAQAR
    type_name = "OS::Zaqar::Subscription"
    kind = "queue_subscription"
    named = False
    properties_schema = {
        "queue_name": prop("String", "Name of the queue to subscribe to.", required=True,
                           constraints=(Length(1, NAME_LIMIT),)),
        "subscriber": prop("String", "URI of the subscriber which will be notified. Must be "
                                     "in the format: <TYPE>:<VALUE>.", required=True,
                           update_allowed=True),
        "ttl": prop("Integer", "Time to live of the subscription in seconds.",
                    update_allowed=True, default=220367260800, constraints=(Range(60, None),)),
        "options": prop("Map", "Options used to configure this subscription.",
                        update_allowed=True),
    }
    attributes_schema = attributes()

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        subscriber = props.get("subscriber")
        if isinstance(subscriber, str) and \
                subscriber.split(":", 1)[0] not in SUBSCRIBER_TYPES:
            raise StackValidationFailed(f"The subscriber type of must be one of: "
                                        f"{', '.join(SUBSCRIBER_TYPES)}.")
        return props

    def cloud_fields(self, props, names=None):
        # Heat sends subscriber, ttl and options together, on create and on update.
        return {"queue_name": props.get("queue_name"), "subscriber": props.get("subscriber"),
                "ttl": props.get("ttl"), "options": props.get("options") or {}}

    def handle_update(self, new_properties, changed):
        self.existing()
        fields = self.cloud_fields(new_properties)
        fields.pop("queue_name")
        _cloud_call(self.cloud.object_update, self.kind, self.physical_id, **fields)
        self.properties = new_properties

    def get_reference_id(self):
        if self.physical_id:
            return str(self.physical_id).rpartition("/")[2]
        return self.name

    def drift_pairs(self):
        pairs = super().drift_pairs()
        if pairs is not None:
            pairs.pop("queue_name", None)
        return pairs


@register
class ZaqarMistralTrigger(ZaqarSubscription):
    """A subscription that starts an execution of a Mistral workflow for each message of a
    queue (the message is the workflow's ``env().notification``)."""

    required_service = ZAQAR
    type_name = "OS::Zaqar::MistralTrigger"
    properties_schema = {
        "queue_name": prop("String", "Name of the queue to subscribe to.", required=True,
                           constraints=(CustomConstraint("zaqar.queue"),)),
        "ttl": ZaqarSubscription.properties_schema["ttl"],
        "workflow_id": prop("String", "UUID of the Mistral workflow to trigger.",
                            required=True, update_allowed=True,
                            constraints=(CustomConstraint("mistral.workflow"),)),
        "params": prop("Map", "Parameters to pass to the Mistral workflow execution. The "
                              "parameters depend on the workflow type.", default={},
                       update_allowed=True),
        "input": prop("Map", "Input values to pass to the Mistral workflow.", default={},
                      update_allowed=True),
    }

    attributes_schema = {"show": Attribute("Detailed information about resource.",
                                           type="map")}

    def cloud_fields(self, props, names=None):
        params = dict(props.get("params") or {})
        params["env"] = {**(params.get("env") or {}), "notification": "$zaqar_message$"}
        post_data = {"workflow_id": props.get("workflow_id"), "params": params,
                     "input": props.get("input") or {}}
        endpoint = _cloud_call(self.cloud.workflow_endpoint)
        return {"queue_name": props.get("queue_name"),
                "subscriber": f"trust+{endpoint}/executions", "ttl": props.get("ttl"),
                "options": {"post_data": json.dumps(post_data)}}

    def drift_pairs(self):
        return None
