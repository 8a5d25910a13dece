"""``OS::Swift::Container``: a Swift container (known by its name), as Heat's.

Every property change replaces the container. ``PurgeOnDelete`` deletes its
objects first; otherwise Swift refuses to delete a container that has
objects (its 409 is the resource's reason). On a cloud without Swift in its
catalog the type answers ResourceTypeUnavailable.
"""
from urllib.parse import urlparse

from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.registry import register


@register
class SwiftContainer(CloudObjectResource):
    """A Swift container with its ACLs and metadata."""

    type_name = "OS::Swift::Container"
    kind = "container"
    required_service = ("swift", "object-store")
    properties_schema = {
        "name": prop("String", "Name for the container. If not specified, a unique name will "
                     "be generated."),
        "X-Container-Read": prop("String", "Specify the ACL permissions on who can read "
                                 "objects in the container."),
        "X-Container-Write": prop("String", "Specify the ACL permissions on who can write "
                                  "objects to the container."),
        "X-Container-Meta": prop("Map", "A map of user-defined meta data to associate with "
                                 "the container.", default={}),
        "X-Account-Meta": prop("Map", "A map of user-defined meta data to associate with the "
                               "account (accepted, not applied).", default={}),
        "PurgeOnDelete": prop("Boolean", "If True, delete any objects in the container when "
                              "the container is deleted.", default=False),
    }
    field_names = {"X-Container-Read": "read_acl", "X-Container-Write": "write_acl",
                   "X-Container-Meta": "metadata", "X-Account-Meta": None,
                   "PurgeOnDelete": None}
    attributes_schema = attributes(
        DomainName="The host from the container URL.",
        WebsiteURL="The URL of the container.",
        RootURL="The parent URL of the container.",
        ObjectCount="The number of objects stored in the container.",
        BytesUsed="The number of bytes stored in the container.",
        HeadContainer="A map containing all headers for the container.")

    def handle_delete(self):
        if self.physical_id and self.properties.get("PurgeOnDelete"):
            _cloud_call(self.cloud.container_purge, self.physical_id)
        super().handle_delete()

    def attribute_value(self, found, name):
        url = found.get("url") or ""
        if name == "DomainName":
            return urlparse(url).hostname
        if name == "WebsiteURL":
            return url
        if name == "RootURL":
            return found.get("endpoint")
        if name == "ObjectCount":
            return found.get("object_count")
        if name == "BytesUsed":
            return found.get("bytes_used")
        if name == "HeadContainer":
            return found.get("headers") or {
                "x-container-object-count": found.get("object_count"),
                "x-container-bytes-used": found.get("bytes_used"),
                **{f"x-container-meta-{k}": v for k, v in (found.get("metadata") or {}).items()}}
        return super().attribute_value(found, name)
