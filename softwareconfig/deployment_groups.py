"""Deployment groups: one software (or structured) deployment per server of a map.

``OS::Heat::SoftwareDeploymentGroup`` is a resource group whose members are
``OS::Heat::SoftwareDeployment`` resources named by the keys of ``servers``
(the name is arbitrary, the value the server's id); the other properties are
every member's. ``OS::Heat::StructuredDeploymentGroup`` does the same with
structured deployments. ``OS::Heat::SoftwareDeployments`` and
``OS::Heat::StructuredDeployments`` are Heat's deprecated names of the two.
"""
from softwareconfig.resources import SoftwareDeploymentResource
from softwareconfig.structured import STRUCTURED_PROPERTIES
from stacks.resources.base import attribute_path
from stacks.resources.registry import register
from stacks.resources.resource_group import MEMBER_TEMPLATE_VERSION, ResourceGroup, \
    group_attribute
from stacks.resources.schema import Attribute, Property

_DEPLOYMENT = SoftwareDeploymentResource.properties_schema
MEMBER_PROPERTIES = ("config", "input_values", "actions", "name", "signal_transport")
# The group's attribute -> the members' attribute it maps by name.
PLURALS = {"deploy_stdouts": "deploy_stdout", "deploy_stderrs": "deploy_stderr",
           "deploy_status_codes": "deploy_status_code"}


@register
class SoftwareDeploymentGroup(ResourceGroup):
    """Applies one config to every server of ``servers`` ({name: server id}).

    Each server gets an ``OS::Heat::SoftwareDeployment`` named by its key in
    ``servers``; ``deploy_stdouts``, ``deploy_stderrs`` and
    ``deploy_status_codes`` map those names to each deployment's value, and
    any other attribute of a deployment (an output of the config) does the
    same. Adding or removing a server adds or removes its deployment.
    """

    type_name = "OS::Heat::SoftwareDeploymentGroup"
    member_type = "OS::Heat::SoftwareDeployment"
    properties_schema = {
        "servers": Property("Map", description="A map of names and server IDs to apply the "
                            "configuration to; the name is that of the server's deployment.",
                            required=True, update_allowed=True),
        **{key: _DEPLOYMENT[key] for key in MEMBER_PROPERTIES},
    }
    attributes_schema = {
        "deploy_stdouts": Attribute("A map of names and captured stdouts of each server's "
                                    "configuration.", "map"),
        "deploy_stderrs": Attribute("A map of names and captured stderrs of each server's "
                                    "configuration.", "map"),
        "deploy_status_codes": Attribute("A map of names and returned status codes of each "
                                         "server's configuration.", "map"),
    }

    @classmethod
    def _member_properties(cls, properties, server):
        props = {key: properties[key] for key in properties if key != "servers"}
        return {**props, "server": server}

    @classmethod
    def member_definitions(cls, properties):
        servers = properties.get("servers")
        if not isinstance(servers, dict):
            return {}
        return {name: (cls.member_type, cls._member_properties(properties, server))
                for name, server in servers.items()}

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        attrs = cls.members_view(attrs, name)
        if name in ("refs", "refs_map", "removed_rsrc_list") or name.startswith("resource."):
            return group_attribute(attrs, name, path)
        by_name = (attrs.get("attributes") or {}).get(PLURALS.get(name, name)) or {}
        return attribute_path(by_name, path)

    def _template(self):
        return {"heat_template_version": MEMBER_TEMPLATE_VERSION,
                "resources": {name: {"type": member_type, "properties": props}
                              for name, (member_type, props)
                              in self.member_definitions(self.properties).items()}}

    def get_attribute(self, name, *path):
        return self.resolve_attribute(self.attributes(), name, path)


@register
class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """A SoftwareDeploymentGroup of ``OS::Heat::StructuredDeployment`` members (inputs
    substituted in the structured config, see ``input_key``)."""

    type_name = "OS::Heat::StructuredDeploymentGroup"
    member_type = "OS::Heat::StructuredDeployment"
    properties_schema = {**SoftwareDeploymentGroup.properties_schema, **STRUCTURED_PROPERTIES}


@register
class SoftwareDeployments(SoftwareDeploymentGroup):
    """Deprecated name of OS::Heat::SoftwareDeploymentGroup (as in Heat)."""

    type_name = "OS::Heat::SoftwareDeployments"
    hidden = True  # Heat's support status: HIDDEN (neither listed nor described)


@register
class StructuredDeployments(StructuredDeploymentGroup):
    """Deprecated name of OS::Heat::StructuredDeploymentGroup (as in Heat)."""

    type_name = "OS::Heat::StructuredDeployments"
    hidden = True  # Heat's support status: HIDDEN (neither listed nor described)
