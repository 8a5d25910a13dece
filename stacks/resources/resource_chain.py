"""``OS::Heat::ResourceChain``: one resource of each listed type, with the same properties.

The members are the resources ``"0"``, ``"1"``, ... of a nested stack; unless
``concurrent``, each depends on the one before it, so they are created in
the list's order (and deleted in the reverse order).
"""
from stacks.resources.registry import register
from stacks.resources.resource_group import MEMBER_TEMPLATE_VERSION, ResourceGroup
from stacks.resources.schema import Attribute, Property


def chain_template(types, properties, *, concurrent):
    """The nested stack's template: member N of type ``types[N]``, after member N-1."""
    resources = {}
    for index, type_name in enumerate(types):
        member = {"type": type_name, "properties": dict(properties or {})}
        if index and not concurrent:
            member["depends_on"] = [str(index - 1)]
        resources[str(index)] = member
    return {"heat_template_version": MEMBER_TEMPLATE_VERSION, "resources": resources}


@register
class ResourceChain(ResourceGroup):
    """Creates one resource for each type in ``resources``, each with
    ``resource_properties``; one after the other unless ``concurrent``.

    Attributes: ``refs`` (the members' reference ids, in order), ``attributes``
    (with a member attribute name: that attribute by member), ``resource.N``
    (member N's reference id, or with a path its attribute), and any member
    attribute name, which lists that attribute of every member.
    """

    type_name = "OS::Heat::ResourceChain"
    properties_schema = {
        "resources": Property("List", description="The list of resource types to create; "
                              "type names or aliases of the resource registry.",
                              required=True, update_allowed=True,
                              schema=Property("String")),
        "concurrent": Property("Boolean", description="If true, the resources are created "
                               "concurrently; else each depends on the previous one.",
                               default=False),
        "resource_properties": Property("Map", description="Properties passed to each "
                                        "resource of the chain.", update_allowed=True),
    }
    attributes_schema = {
        "refs": Attribute("A list of resource IDs for the resources in the chain.", "list"),
        "attributes": Attribute("A map of resource names to the specified attribute of each "
                                "individual resource.", "map"),
    }

    @classmethod
    def member_definitions(cls, properties):
        types = properties.get("resources")
        if not isinstance(types, list):
            return {}
        return {str(index): (type_name, dict(properties.get("resource_properties") or {}))
                for index, type_name in enumerate(types) if isinstance(type_name, str)}

    def _template(self):
        return chain_template(self.properties["resources"],
                              self.properties.get("resource_properties"),
                              concurrent=self.properties.get("concurrent", False))
