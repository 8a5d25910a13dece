"""Heat's config types built on the software config store, and the structured deployment.

``OS::Heat::CloudConfig`` stores cloud-init cloud-config (a map, dumped as
YAML after ``#cloud-config``); ``OS::Heat::MultipartMime`` stores a
multi-part MIME message of its parts (inline text or other configs by id);
``OS::Heat::StructuredDeployment`` deploys a ``StructuredConfig`` with its
``{get_input: name}`` references replaced by the inputs' values, as Heat does
for tools that have no inputs of their own.
"""
import email
from email.mime.multipart import MIMEMultipart

import yaml

from heatweb.api import as_uuid
from softwareconfig.models import SoftwareConfig
from softwareconfig.resources import ConfigResource, SoftwareDeploymentResource
from stacks.resources.base import ResourceFailure
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Property
from stacks.resources.server_user_data import text_part

UNGROUPED = "Heat::Ungrouped"


@register
class CloudConfigResource(ConfigResource):
    """cloud-init cloud-config, stored as a software config (``#cloud-config`` + YAML).

    Referenced by a server's ``user_data`` or a MultipartMime part; as it is
    boot-only configuration, any change replaces it (and the servers using it).
    """

    type_name = "OS::Heat::CloudConfig"
    properties_schema = {
        "cloud_config": Property("Map", description="Map representing the cloud-config data "
                                 "structure which will be formatted as YAML."),
    }

    def group_and_config(self):
        body = yaml.safe_dump(self.properties.get("cloud_config") or {},
                              default_flow_style=False)
        return UNGROUPED, f"#cloud-config\n{body}"


_PART = Property("Map", schema={
    "config": Property("String", description="Content of the part: inline, or the id of "
                       "another software config.", required=True),
    "filename": Property("String", description="Optional filename of the part."),
    "type": Property("String", description="Whether the part is text or multipart.",
                     default="text", constraints=(AllowedValues(("text", "multipart")),)),
    "subtype": Property("String", description="Optional subtype of the part."),
})


def mime_message(parts, config_text):
    """The multi-part MIME message of ``parts``; ``config_text(id)`` reads a config by id
    (None when there is none: the part is then the text itself)."""
    subparts = []
    for item in parts:
        content = item.get("config") or ""
        stored = config_text(content)
        content = content if stored is None else stored
        if item.get("type") == "multipart":
            message = email.message_from_string(content)
            if message.is_multipart():
                for part in message.get_payload():
                    subparts.append(text_part(part.get_payload(), part.get_filename(),
                                              part.get_content_subtype() or None,
                                              always_named=False))
            continue
        subparts.append(text_part(content, item.get("filename") or "",
                                  item.get("subtype") or None, always_named=False))
    return MIMEMultipart(_subparts=subparts).as_string()


@register
class MultipartMimeResource(ConfigResource):
    """A multi-part MIME message of configs (inline or other configs by id), stored as a
    software config; typically a server's ``user_data`` for cloud-init. A part of type
    ``multipart`` that is itself such a message is split into its parts.
    """

    type_name = "OS::Heat::MultipartMime"
    properties_schema = {
        "group": Property("String", description="Namespace to group this multi-part config "
                          "by when delivered to a server.", default=UNGROUPED),
        "parts": Property("List", description="Parts belonging to this message.", default=[],
                          schema=_PART),
    }

    def _config_text(self, value):
        config_id = as_uuid(value) if isinstance(value, str) else None
        if config_id is None:
            return None
        row = SoftwareConfig.objects.filter(project_id=self.context.project_id,
                                            pk=config_id).first()
        return None if row is None else row.config if isinstance(row.config, str) else \
            yaml.safe_dump(row.config)

    def handle_create(self):
        # The message (its MIME boundary is random) is made once and kept.
        self.data["message"] = mime_message(self.properties.get("parts") or [],
                                            self._config_text)
        return super().handle_create()

    def group_and_config(self):
        return self.properties.get("group") or UNGROUPED, self.data.get("message")


def substitute_inputs(snippet, inputs, *, input_key="get_input", strict=False):
    """``snippet`` with each ``{input_key: name}`` replaced by input ``name``'s value."""
    if isinstance(snippet, dict):
        if len(snippet) == 1:
            (key, arg), = snippet.items()
            if key == input_key and isinstance(arg, str):
                if strict and arg not in inputs:
                    raise ResourceFailure(f"The Parameter ({arg}) was not provided.")
                return inputs.get(arg)
        return {k: substitute_inputs(v, inputs, input_key=input_key, strict=strict)
                for k, v in snippet.items()}
    if isinstance(snippet, list):
        return [substitute_inputs(v, inputs, input_key=input_key, strict=strict)
                for v in snippet]
    return snippet


STRUCTURED_PROPERTIES = {
    "input_key": Property("String", description="Name of key to use for substituting inputs "
                          "during deployment.", default="get_input"),
    "input_values_validate": Property("String", description="STRICT: each input the config "
                                      "refers to must have a value.", default="LAX",
                                      constraints=(AllowedValues(("LAX", "STRICT")),)),
}


@register
class StructuredDeploymentResource(SoftwareDeploymentResource):
    """A software deployment of a StructuredConfig: where the config holds
    ``{get_input: name}`` (or the ``input_key`` chosen), the server gets the value of
    input ``name`` (from ``input_values`` or the deploy_* inputs) instead.
    """

    type_name = "OS::Heat::StructuredDeployment"
    properties_schema = {**SoftwareDeploymentResource.properties_schema, **STRUCTURED_PROPERTIES}

    def derived_config(self, source, inputs):
        values = {item["name"]: item.get("value") for item in inputs or []}
        return substitute_inputs(source.config, values,
                                 input_key=self.properties.get("input_key") or "get_input",
                                 strict=self.properties.get("input_values_validate") == "STRICT")
