"""``OS::Heat::SwiftSignalHandle`` and ``OS::Heat::SwiftSignal``: a wait signalled through
a Swift temp URL, as Heat's.

The handle makes a container and an object reading "in progress" and hands
out a temp URL that PUTs that object (``endpoint``, ``curl_cli``; no token is
needed, the URL is signed); ``get_resource`` on the handle answers the URL.
Each PUT is kept as a version of the object. The signal waits until
``count`` versions say SUCCESS (an empty body, or JSON ``{"status":
"SUCCESS", "reason", "data", "id"}``), fails at once on a FAILURE and after
``timeout`` seconds. Its ``data`` attribute is a JSON string of
``{id: data}``. On the simulated cloud heatweb serves the temp URL itself.
"""
import json
import time

from stacks.cloud.driver import IN_PROGRESS
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, prop
from stacks.resources.registry import register
from stacks.resources.schema import Attribute, Range

SWIFT = ("swift", "object-store")
ENDPOINT = "endpoint"  # plugin data: the temp URL


@register
class SwiftSignalHandle(CloudObjectResource):
    """Hands out a Swift temp URL that a server PUTs its signal to."""

    type_name = "OS::Heat::SwiftSignalHandle"
    kind = "container"
    required_service = SWIFT
    properties_schema = {}
    signed_url_attributes = ("endpoint", "curl_cli")
    attributes_schema = {
        "token": Attribute("Tokens are not needed for Swift TempURLs (kept for compatibility "
                           "with OS::Heat::WaitConditionHandle)."),
        "endpoint": Attribute("Endpoint/url which can be used for signalling handle."),
        "curl_cli": Attribute("Convenience attribute, provides curl CLI command prefix, which "
                              "can be used for signalling handle completion or failure."),
    }

    def handle_create(self):
        name = self.object_name({})
        self.data[ENDPOINT] = _cloud_call(self.cloud.signal_url_create, name,
                                          project_id=self.context.project_id)
        self.physical_id = name

    def handle_delete(self):
        if self.data.get(ENDPOINT):
            _cloud_call(self.cloud.signal_url_delete, self.data[ENDPOINT])

    def check_delete_complete(self, cookie):
        return True

    def handle_check(self):
        self.existing()

    def get_reference_id(self):
        return self.data.get(ENDPOINT) or self.name

    def attributes(self):
        url = self.data.get(ENDPOINT)
        return {"token": None, "endpoint": url,
                "curl_cli": f"curl -i -X PUT '{url}'" if url else None}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)


def _signals(bodies):
    """The signals among the object's versions, as dicts (the first "in progress" skipped)."""
    out = []
    for body in bodies:
        if body == IN_PROGRESS:
            continue
        try:
            signal = json.loads(body) if body.strip() else {}
        except ValueError:
            signal = {"status": "FAILURE", "reason": f"Unexpected signal: {body[:200]}"}
        out.append(signal if isinstance(signal, dict) else {"data": signal})
    return out


@register
class SwiftSignal(CloudObjectResource):
    """Waits for ``count`` SUCCESS signals PUT to its handle's temp URL."""

    type_name = "OS::Heat::SwiftSignal"
    kind = "container"
    required_service = SWIFT
    properties_schema = {
        "handle": prop("String", "URL of TempURL where resource will signal completion and "
                       "optionally upload data.", required=True),
        "timeout": prop("Number", "The maximum number of seconds to wait for the resource to "
                        "signal completion.", required=True,
                        constraints=(Range(1, 43200),)),
        "count": prop("Integer", "The number of success signals that must be received before "
                      "the stack creation process continues.", default=1,
                      constraints=(Range(1, 1000),)),
    }
    attributes_schema = {"data": Attribute("JSON data that was uploaded via the "
                                           "SwiftSignalHandle.")}

    def _received(self):
        return _signals(_cloud_call(self.cloud.signal_bodies, self.properties["handle"]))

    def handle_create(self):
        if "temp_url_sig=" not in str(self.properties.get("handle")):
            raise ResourceFailure(f"{self.properties.get('handle')} is not a valid "
                                  f"SwiftSignalHandle. The Swift TempURL path must be a "
                                  f"signed URL")
        self.physical_id = f"{self.context.stack_name}-{self.name}"
        since = time.time()
        return {"waiting_since": since, "deadline": since + float(self.properties["timeout"])}

    def check_create_complete(self, cookie):
        if not cookie or "deadline" not in cookie:
            return True
        signals = self._received()
        failures = [s.get("reason") or "Signal failed" for s in signals
                    if s.get("status") == "FAILURE"]
        if failures:
            raise ResourceFailure(f"SwiftSignalFailure: resources.{self.name}: "
                                  f"{'; '.join(map(str, failures))}")
        received = sum(1 for s in signals if s.get("status", "SUCCESS") == "SUCCESS")
        if received >= self.properties["count"]:
            return True
        if time.time() >= cookie["deadline"]:
            raise ResourceFailure(f"SwiftSignalTimeout: resources.{self.name}: "
                                  f"{received} of {self.properties['count']} received")
        return False

    def waiting_reason(self, cookie):
        if not cookie or "deadline" not in cookie:
            return None
        return f"Waiting for {self.properties['count']} signal(s) on its Swift temp URL"

    def handle_delete(self):
        return None  # the handle owns the container

    def check_delete_complete(self, cookie):
        return True

    def handle_check(self):
        return None

    def physical_state(self):
        return None  # its object is the handle's

    def attributes(self):
        try:
            signals = self._received() if self.context else []
        except ResourceFailure:
            signals = []
        return {"data": json.dumps({str(s.get("id", i + 1)): s.get("data")
                                    for i, s in enumerate(signals)})}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)
