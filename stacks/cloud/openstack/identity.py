"""Keystone on a real cloud: role assignments and group memberships.

A role assignment is Keystone's
``PUT /{projects|domains}/{id}/{users|groups}/{id}/roles/{role}`` (its id:
``<target kind>:<id>:<actor kind>:<id>:<role>``); a group membership is the
user's addition to the group (its id: ``<group>:<user>``). Keystone's other
kinds (projects, users, roles, ...) are plain ``OS_KINDS`` rows.
"""
from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.openstack.calls import call


class IdentityCalls:
    """Mixin of ``OpenStackCloud``: Keystone's ``_os_<verb>_<kind>`` methods for
    ``ObjectCalls``."""

    @staticmethod
    def _assignment_parts(fields):
        actor = "user" if fields.get("user") else "group"
        target = "project" if fields.get("project") else "domain"
        if not fields.get(actor) or not fields.get(target) or not fields.get("role"):
            raise CloudError("A role assignment names a role, a user or group, and a project "
                             "or domain (HTTP 400)")
        return target, fields[target], actor, fields[actor], fields["role"]

    def _assignment_call(self, verb, parts):
        target, target_id, actor, actor_id, role = parts
        method = {"assign": f"assign_{target}_role_to_{actor}",
                  "unassign": f"unassign_{target}_role_from_{actor}",
                  "validate": f"validate_{actor}_has_{target}_role"}[verb]
        return call(getattr(self.conn.identity, method), target_id, actor_id, role)

    def _os_create_role_assignment(self, *, name, fields, creation_key, find_first):
        parts = self._assignment_parts(fields)
        self._assignment_call("assign", parts)
        return ":".join(parts)

    def _os_get_role_assignment(self, object_id):
        parts = tuple(str(object_id).split(":"))
        if len(parts) != 5 or not self._assignment_call("validate", parts):
            return None
        target, target_id, actor, actor_id, role = parts
        return {"id": object_id, target: target_id, actor: actor_id, "role": role}

    def _os_delete_role_assignment(self, object_id):
        parts = tuple(str(object_id).split(":"))
        if len(parts) == 5:
            try:
                self._assignment_call("unassign", parts)
            except CloudNotFound:
                pass

    def _os_create_group_membership(self, *, name, fields, creation_key, find_first):
        call(self.conn.identity.add_user_to_group, fields["user"], fields["group"])
        return f"{fields['group']}:{fields['user']}"

    def _os_get_group_membership(self, object_id):
        group, _, user = str(object_id).partition(":")
        if not call(self.conn.identity.check_user_in_group, user, group):
            return None
        return {"id": object_id, "group": group, "user": user}

    def _os_delete_group_membership(self, object_id):
        group, _, user = str(object_id).partition(":")
        try:
            call(self.conn.identity.remove_user_from_group, user, group)
        except CloudNotFound:
            pass
