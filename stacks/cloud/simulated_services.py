"""What Nova's and Keystone's kinds do in the simulated cloud beyond storing their fields.

Flavors take Nova's defaults and an id of their own choice; a key pair is
known by its name; a quota is its project's; a role assignment names its
actor (user or group), role and target (project or domain); deleting a
user, group, project or role takes its role assignments with it, as in
Keystone. Passwords are never shown again. The roles Keystone's bootstrap makes
(admin, member, reader) and the catalog's region (RegionOne) are there in every
cloud: made on first use.
"""
import uuid
from functools import partialmethod

from django.conf import settings

from stacks.cloud.driver import CloudError
from stacks.cloud.simulated_objects import live


BOOTSTRAP_ROLES = ("admin", "member", "reader")


def bootstrap_region():
    """The region of this cloud's catalog, which Keystone's bootstrap makes (RegionOne)."""
    return settings.HEATWEB.get("OS_REGION") or "RegionOne"


class SimulatedServices:
    """Mixin of ``SimulatedCloud``: the Nova and Keystone kinds' hooks."""

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

    # Nova ----------------------------------------------------------------------------------

    def _complete_flavor(self, fields, project_id):
        flavor_id = str(fields.pop("id", "") or uuid.uuid4())
        if live("flavor", pk=flavor_id).exists():
            raise CloudError(f"Flavor with ID {flavor_id} already exists. (HTTP 409)")
        return {"disk": 0, "swap": 0, "ephemeral": 0, "rxtx_factor": 1.0, "is_public": True,
                "extra_specs": {}, "tenants": [], "description": None, **fields,
                "id": flavor_id}

    def _complete_keypair(self, fields, project_id):
        name_taken = live("keypair", pk=fields.get("name")).exists()
        if name_taken:
            raise CloudError(f"Key pair '{fields.get('name')}' already exists. (HTTP 409)")
        return {"type": "ssh", **fields, "id": fields.get("name")}

    def _complete_server_group(self, fields, project_id):
        return {"policies": ["anti-affinity"], "members": [], "metadata": {}, **fields}

    def _complete_aggregate(self, fields, project_id):
        return {"hosts": [], "metadata": {}, "availability_zone": None, **fields}

    def _complete_quota(self, fields, project_id, kind="quota"):
        project = fields.get("project") or project_id
        for older in live(kind, fields__project=project):  # one quota set per project
            self.sim_row_delete(older)
        return {**fields, "project": project}

    # Cinder's and Octavia's quota sets: one per project too.
    _complete_volume_quota = partialmethod(_complete_quota, kind="volume_quota")
    _complete_lb_quota = partialmethod(_complete_quota, kind="lb_quota")

    # Keystone ------------------------------------------------------------------------------

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
