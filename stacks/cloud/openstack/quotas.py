"""A project's quota set of Nova, Cinder or Octavia on a real cloud (its id: the project's).

One generic quota kind per service (``quota``, ``volume_quota``,
``lb_quota``): create and update set the project's quotas, delete reverts
them to the service's defaults. ``QUOTA_CALLS`` names each service's proxy
and calls; the ``_os_<verb>_<kind>`` methods for ``ObjectCalls`` are made
from the four ``_quota_<verb>`` ones.
"""
from functools import partialmethod

from stacks.cloud.openstack.calls import call, gone


class QuotaCalls:
    """Mixin of ``OpenStackCloud``: the ``_os_<verb>_<kind>`` methods of the quota kinds."""

    def _quota_calls(self, kind):
        """(update, get, revert) of the quota kind's service, each taking the project."""
        proxy, update, get, revert = QUOTA_CALLS[kind]
        proxy = getattr(self.conn, proxy)
        return getattr(proxy, update), getattr(proxy, get), getattr(proxy, revert)

    def _quota_create(self, kind, *, name, fields, creation_key, find_first):
        project = fields.pop("project")
        call(self._quota_calls(kind)[0], project, **fields)
        return project

    def _quota_get(self, kind, project):
        quota = gone(self._quota_calls(kind)[1], project)
        if quota is None:
            return None
        out = quota.to_dict(headers=False, computed=False)
        out.pop("location", None)
        return {**out, "id": project}

    def _quota_update(self, kind, project, fields):
        fields.pop("project", None)
        call(self._quota_calls(kind)[0], project, **fields)

    def _quota_delete(self, kind, project):
        gone(self._quota_calls(kind)[2], project)


# A project's quota set of each service: (proxy, update, get, revert to the defaults).
QUOTA_CALLS = {
    "quota": ("compute", "update_quota_set", "get_quota_set", "revert_quota_set"),
    "volume_quota": ("block_storage", "update_quota_set", "get_quota_set", "revert_quota_set"),
    "lb_quota": ("load_balancer", "update_quota", "get_quota", "delete_quota"),
}
for _kind in QUOTA_CALLS:
    for _verb in ("create", "get", "update", "delete"):
        setattr(QuotaCalls, f"_os_{_verb}_{_kind}",
                partialmethod(getattr(QuotaCalls, f"_quota_{_verb}"), _kind))
