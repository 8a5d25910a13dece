"""A project's quota set of Nova, Cinder or Octavia in the simulated cloud: one per project.

Making a project's quota set again replaces the one it had (Nova's
``PUT /os-quota-sets/{project}``): the older row goes.
"""
from functools import partialmethod

from stacks.cloud.simulated.objects import live


class SimulatedQuotas:
    """Mixin of ``SimulatedCloud``: the quota kinds' hooks."""

    def _complete_quota(self, fields, project_id, kind="quota"):
        project = fields.get("project") or project_id
        for older in live(kind, fields__project=project):  # one quota set per project
            self.sim_row_delete(older)
        return {**fields, "project": project}

    # Cinder's and Octavia's quota sets: one per project too.
    _complete_volume_quota = partialmethod(_complete_quota, kind="volume_quota")
    _complete_lb_quota = partialmethod(_complete_quota, kind="lb_quota")
