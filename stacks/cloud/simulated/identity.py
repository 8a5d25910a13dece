"""What Keystone's kinds do in the simulated cloud beyond storing their fields.

A role assignment names its actor (user or group), role and target
(project or domain); deleting a user, group, project or role takes its role
assignments with it, as in Keystone. Passwords are never shown again. The
roles Keystone's bootstrap makes (admin, member, reader) and the catalog's
region (RegionOne) are there in every cloud: made on first use.
"""
import uuid

from django.conf import settings

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated.objects import live


BOOTSTRAP_ROLES = ("admin", "member", "reader")


def bootstrap_region():
    """The region of this cloud's catalog, which Keystone's bootstrap makes (RegionOne)."""
    return settings.HEATWEB.get("OS_REGION") or "RegionOne"


class SimulatedKeystone:
    """Mixin of ``SimulatedCloud``: the Keystone kinds' hooks."""

    def _lookup_id(self, kind, name_or_id, project_id=None):
        if kind == "role" and name_or_id in BOOTSTRAP_ROLES \
                and not live("role", name=name_or_id).exists():
            self.sim_row_create("role", project_id="", name=name_or_id,
                                fields=self._complete_role({"project_id": ""}, ""))
        if kind == "region" and name_or_id == bootstrap_region() \
                and not live("region", pk=name_or_id).exists():
            self.sim_row_create("region", project_id="", name="", object_id=name_or_id,
                                fields={"project_id": "", **self._complete_region(
                                    {"id": name_or_id}, "")})
        return super()._lookup_id(kind, name_or_id, project_id)

    def _complete_project(self, fields, project_id):
        return {"domain_id": "default", "enabled": True, "description": "", "tags": [],
                "is_domain": False, "parent_id": fields.get("domain_id") or "default",
                **fields}

    def _complete_user(self, fields, project_id):
        return {"domain_id": "default", "enabled": True, **fields}

    def _describe_user(self, row, out):
        out.pop("password", None)

    def _complete_group(self, fields, project_id):
        return {"domain_id": "default", "description": "", **fields}

    def _complete_role(self, fields, project_id):
        return {"domain_id": None, **fields}

    def _complete_domain(self, fields, project_id):
        return {"enabled": True, "description": "", **fields}

    def _complete_region(self, fields, project_id):
        region_id = fields.pop("id", None) or uuid.uuid4().hex
        if live("region", pk=region_id).exists():
            raise CloudError(f"Conflict occurred attempting to store region - Duplicate ID, "
                             f"{region_id}. (HTTP 409)")
        return {"description": "", "parent_region_id": None, **fields, "id": region_id}

    def _complete_service(self, fields, project_id):
        return {"enabled": True, "description": "", **fields}

    def _complete_endpoint(self, fields, project_id):
        self._resolve("service", fields.get("service_id", ""))
        return {"enabled": True, "region_id": None, **fields}

    def _complete_role_assignment(self, fields, project_id):
        if bool(fields.get("user")) == bool(fields.get("group")):
            raise CloudError("Specify a user or group, not both. (HTTP 400)")
        if bool(fields.get("project")) == bool(fields.get("domain")):
            raise CloudError("Specify a domain or project, not both. (HTTP 400)")
        return fields

    def _assignments_of(self, field, row_id):
        for kind in ("role_assignment", "group_membership"):
            for assignment in live(kind, **{f"fields__{field}": row_id}):
                self.sim_row_delete(assignment)

    def _deleted_user(self, row):
        self._assignments_of("user", row.pk)

    def _deleted_group(self, row):
        self._assignments_of("group", row.pk)

    def _deleted_project(self, row):
        self._assignments_of("project", row.pk)

    def _deleted_role(self, row):
        self._assignments_of("role", row.pk)
