"""A resource's ``deletion_policy``: ``Delete`` (the default), ``Retain`` or ``Snapshot``.

As Heat: a retained resource leaves the stack but its physical object stays;
``Snapshot`` calls the plugin's ``handle_snapshot_delete`` (and polls
``check_snapshot_delete_complete``) instead of deleting; a type without
them is deleted. The policy is the one of the template that last created or
updated the resource (so a resource removed by an update, or replaced, keeps
the policy it was made with).
"""
from functools import lru_cache

from stacks.models import RawTemplate

POLICIES = {"delete": "Delete", "retain": "Retain", "snapshot": "Snapshot"}


def template_policies(template):
    """``{resource name: policy}`` of the resources of ``template`` whose policy is not
    ``Delete``."""
    resources = (template or {}).get("resources") or (template or {}).get("Resources") or {}
    policies = {}
    for name, entry in resources.items() if isinstance(resources, dict) else ():
        policy = entry.get("deletion_policy") or entry.get("DeletionPolicy") \
            if isinstance(entry, dict) else None
        policy = POLICIES.get(policy.lower(), "Delete") if isinstance(policy, str) else "Delete"
        if policy != "Delete":
            policies[name] = policy
    return policies


@lru_cache(maxsize=64)
def _stored_template_policies(template_id, stack_id):
    """``template_policies`` of raw template ``template_id``. Raw templates are never
    updated, so this is read and decoded once per template, not once per resource
    (a group's 10,000 members share one members' template of megabytes). The key
    holds the stack's id too, as the definition cache's: a template id alone may
    come again in another database."""
    return template_policies(RawTemplate.objects.filter(pk=template_id).values_list(
        "template", flat=True).first())


def deletion_policy(res):
    """The policy of resource row ``res`` (``Delete`` when its template says nothing)."""
    if not res.template_id:
        return "Delete"
    return _stored_template_policies(res.template_id, str(res.stack_id)).get(res.name, "Delete")


def with_policy(cls, policy, state=None):
    """``cls`` whose delete follows ``policy`` (``cls`` itself for ``Delete``); ``state``:
    the resource's (action, status) when its delete begins (Heat's
    ``handle_snapshot_delete(state)``: a volume whose create failed is not backed up)."""
    if policy == "Retain":
        return type(f"Retained{cls.__name__}", (cls,), {
            "__doc__": cls.__doc__, "handle_delete": lambda self: None,
            "check_delete_complete": lambda self, cookie: True})
    if policy == "Snapshot" and hasattr(cls, "handle_snapshot_delete"):
        return type(f"Snapshotted{cls.__name__}", (cls,), {
            "__doc__": cls.__doc__,
            "handle_delete": lambda self: self.handle_snapshot_delete(state),
            "check_delete_complete":
                lambda self, cookie: self.check_snapshot_delete_complete(cookie)})
    return cls
