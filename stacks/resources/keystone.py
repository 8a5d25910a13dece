"""Keystone objects: ``OS::Keystone::Project``, ``User``, ``Group``, ``Role``,
``UserRoleAssignment``, ``GroupRoleAssignment``, ``Domain``, ``Region``, ``Service``,
``Endpoint``.

Properties, attributes and update rules as Heat's. All of them are
admin-only on a real cloud, as in Heat (Keystone refuses a member with 403,
shown as the resource's reason); on the simulated cloud they are generic
objects. A ``roles`` property (User, Group, the role assignments) is a list
of ``{role, project | domain}``; each entry is one Keystone role
assignment, and an update adds and removes only the entries that changed.
"""
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Property

DOMAIN = prop("String", "Domain name or id.", default="default", update_allowed=True)
DESCRIPTION = prop("String", "Description.", default="", update_allowed=True)
ENABLED = prop("Boolean", "Enabled.", default=True, update_allowed=True)
ROLE_SCHEMA = Property("Map", description="A role on a project or domain.", schema={
    "role": Property("String", description="Role name or id.", required=True),
    "project": Property("String", description="Project name or id."),
    "domain": Property("String", description="Domain name or id."),
})
ROLES = prop("List", "Maps of role and project or domain.", update_allowed=True,
             schema=ROLE_SCHEMA)
ASSIGNMENTS = "role_assignments"  # plugin data: {entry key: assignment id}
MEMBERSHIPS = "group_memberships"  # plugin data: {group: membership id}


def _entry_key(entry):
    return f"{entry.get('role')}|{entry.get('project') or ''}|{entry.get('domain') or ''}"


class RoleAssignments(CloudObjectResource):
    """Base of types with Heat's ``roles`` property: the actor is this resource itself
    (``actor``: user or group) or a user/group property (``actor_property``)."""

    actor = "user"
    actor_property = None

    def _actor_id(self, props):
        return props[self.actor_property] if self.actor_property else self.physical_id

    def sync_roles(self, old_props, new_props):
        """Assign the roles ``new_props`` has and ``old_props`` had not; unassign the rest."""
        old = {_entry_key(e): e for e in old_props.get("roles") or []}
        new = {_entry_key(e): e for e in new_props.get("roles") or []}
        held = dict(self.data.get(ASSIGNMENTS) or {})
        for key in set(held) - set(new):
            _cloud_call(self.cloud.object_delete, "role_assignment", held.pop(key))
        for key, entry in new.items():
            if key in held and key in old:
                continue
            held[key] = _cloud_call(
                self.cloud.object_create, "role_assignment", project_id=self.context.project_id,
                name=None, **{self.actor: self._actor_id(new_props), "role": entry["role"],
                              "project": entry.get("project"), "domain": entry.get("domain")})
            self.data[ASSIGNMENTS] = held  # a failure later still knows this one
        self.data[ASSIGNMENTS] = held

    def drop_roles(self):
        for assignment in (self.data.get(ASSIGNMENTS) or {}).values():
            _cloud_call(self.cloud.object_delete, "role_assignment", assignment)
        self.data[ASSIGNMENTS] = {}


class KeystoneObject(RoleAssignments):
    """A Keystone object that may carry ``roles`` (and, for a user, ``groups``)."""

    field_names = {"domain": "domain_id", "roles": None, "groups": None}

    def handle_create(self):
        super().handle_create()
        if "roles" in self.properties_schema:
            self.sync_roles({}, self.properties)

    def handle_update(self, new_properties, changed):
        old = self.properties
        super().handle_update(new_properties,
                              [k for k in changed if k not in ("roles", "groups")])
        if "roles" in changed:
            self.sync_roles(old, new_properties)

    def handle_delete(self):
        if self.physical_id and "roles" in self.properties_schema:
            self.drop_roles()
        super().handle_delete()


@register
class Project(KeystoneObject):
    """A Keystone project (admin only)."""

    type_name = "OS::Keystone::Project"
    kind = "project"
    properties_schema = {
        "name": prop("String", "Project name.", update_allowed=True),
        "domain": DOMAIN,
        "description": DESCRIPTION,
        "enabled": ENABLED,
        "parent": prop("String", "Parent project name or id."),
        "tags": prop("List", "Tags of the project.", default=[], update_allowed=True),
    }
    field_names = {"domain": "domain_id", "parent": "parent_id"}
    attributes_schema = attributes("name", "parent_id", "domain_id", "enabled", "description",
                                   "is_domain")


@register
class User(KeystoneObject):
    """A Keystone user (admin only), with its groups and roles."""

    type_name = "OS::Keystone::User"
    kind = "user"
    properties_schema = {
        "name": prop("String", "User name.", update_allowed=True),
        "domain": DOMAIN,
        "description": DESCRIPTION,
        "enabled": ENABLED,
        "email": prop("String", "Email address.", update_allowed=True),
        "password": prop("String", "Password.", update_allowed=True),
        "default_project": prop("String", "Default project name or id.", update_allowed=True),
        "groups": prop("List", "Group names or ids the user is in.", update_allowed=True),
        "roles": ROLES,
    }
    field_names = {"domain": "domain_id", "default_project": "default_project_id",
                   "roles": None, "groups": None}
    attributes_schema = attributes("name", "default_project_id", "domain_id", "enabled",
                                   "password_expires_at")

    def handle_create(self):
        super().handle_create()
        self.sync_groups([], self.properties.get("groups") or [])

    def handle_update(self, new_properties, changed):
        old_groups = self.properties.get("groups") or []
        super().handle_update(new_properties, changed)
        if "groups" in changed:
            self.sync_groups(old_groups, new_properties.get("groups") or [])

    def sync_groups(self, old, new):
        held = dict(self.data.get(MEMBERSHIPS) or {})
        for group in set(held) - set(new):
            _cloud_call(self.cloud.object_delete, "group_membership", held.pop(group))
        for group in new:
            if group not in held:
                held[group] = _cloud_call(
                    self.cloud.object_create, "group_membership",
                    project_id=self.context.project_id, name=None, user=self.physical_id,
                    group=group)
        self.data[MEMBERSHIPS] = held

    def handle_delete(self):
        if self.physical_id:
            for membership in (self.data.get(MEMBERSHIPS) or {}).values():
                _cloud_call(self.cloud.object_delete, "group_membership", membership)
            self.data[MEMBERSHIPS] = {}
        super().handle_delete()


@register
class Group(KeystoneObject):
    """A Keystone group (admin only), with its roles."""

    type_name = "OS::Keystone::Group"
    kind = "group"
    actor = "group"
    properties_schema = {
        "name": prop("String", "Group name.", update_allowed=True),
        "domain": DOMAIN,
        "description": DESCRIPTION,
        "roles": ROLES,
    }
    attributes_schema = attributes()


@register
class Role(CloudObjectResource):
    """A Keystone role (admin only)."""

    type_name = "OS::Keystone::Role"
    kind = "role"
    properties_schema = {
        "name": prop("String", "Role name.", update_allowed=True),
        "domain": prop("String", "Domain owning the role (a domain-specific role)."),
    }
    field_names = {"domain": "domain_id"}
    attributes_schema = attributes()


class AssignmentOnly(RoleAssignments):
    """Roles of an existing user or group: the resource is its assignments, its id the
    actor's."""

    kind = "role_assignment"
    named = False

    def handle_create(self):
        self.physical_id = _cloud_call(self.cloud.object_find, self.actor,
                                       self.properties[self.actor_property])
        self.properties = {**self.properties, self.actor_property: self.physical_id}
        self.sync_roles({}, self.properties)

    def handle_update(self, new_properties, changed):
        new_properties = {**new_properties, self.actor_property: self.physical_id}
        self.sync_roles(self.properties, new_properties)
        self.properties = new_properties

    def handle_delete(self):
        self.drop_roles()

    def check_delete_complete(self, cookie):
        return True

    def handle_check(self):
        return None

    def get_attribute(self, name, *path):
        return None

    def attributes(self):
        return {}


@register
class UserRoleAssignment(AssignmentOnly):
    """Roles of a user on projects or domains (admin only); ``roles`` updates in place."""

    type_name = "OS::Keystone::UserRoleAssignment"
    actor, actor_property = "user", "user"
    properties_schema = {
        "user": prop("String", "User name or id.", required=True),
        "roles": ROLES,
    }
    attributes_schema = {}


@register
class GroupRoleAssignment(AssignmentOnly):
    """Roles of a group on projects or domains (admin only); ``roles`` updates in place."""

    type_name = "OS::Keystone::GroupRoleAssignment"
    actor, actor_property = "group", "group"
    properties_schema = {
        "group": prop("String", "Group name or id.", required=True),
        "roles": ROLES,
    }
    attributes_schema = {}


@register
class Domain(CloudObjectResource):
    """A Keystone domain (admin only); a domain must be disabled to be deleted, which
    heatweb does first, as Heat does."""

    type_name = "OS::Keystone::Domain"
    kind = "domain"
    properties_schema = {
        "name": prop("String", "Domain name.", update_allowed=True),
        "description": DESCRIPTION,
        "enabled": ENABLED,
    }
    attributes_schema = attributes()

    def handle_delete(self):
        if self.physical_id and self.cloud.object_get(self.kind, self.physical_id):
            _cloud_call(self.cloud.object_update, self.kind, self.physical_id, enabled=False)
        super().handle_delete()


@register
class Region(CloudObjectResource):
    """A Keystone region (admin only)."""

    type_name = "OS::Keystone::Region"
    kind = "region"
    named = False
    properties_schema = {
        "id": prop("String", "Region id; one is generated when not given."),
        "description": DESCRIPTION,
        "parent_region": prop("String", "Parent region id.", update_allowed=True),
        "enabled": ENABLED,
    }
    field_names = {"parent_region": "parent_region_id"}
    attributes_schema = attributes()


@register
class Service(CloudObjectResource):
    """A Keystone service of the catalog (admin only)."""

    type_name = "OS::Keystone::Service"
    kind = "service"
    properties_schema = {
        "name": prop("String", "Service name.", update_allowed=True),
        "description": prop("String", "Description.", update_allowed=True),
        "type": prop("String", "Service type (compute, network ...).", required=True,
                     update_allowed=True),
        "enabled": ENABLED,
    }
    attributes_schema = attributes()


@register
class Endpoint(CloudObjectResource):
    """An endpoint of a Keystone service (admin only)."""

    type_name = "OS::Keystone::Endpoint"
    kind = "endpoint"
    properties_schema = {
        "region": prop("String", "Region id.", update_allowed=True),
        "service": prop("String", "Service name or id.", required=True, update_allowed=True),
        "interface": prop("String", "Interface.", required=True, update_allowed=True,
                          constraints=(AllowedValues(("public", "internal", "admin")),)),
        "url": prop("String", "URL of the endpoint.", required=True, update_allowed=True),
        "name": prop("String", "Endpoint name.", update_allowed=True),
        "enabled": ENABLED,
    }
    field_names = {"region": "region_id", "service": "service_id"}
    attributes_schema = attributes()
