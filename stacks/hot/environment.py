"""Environments: what a child stack inherits from its parent's (pure Python)."""
from stacks.hot.hooks import child_resources


def child_environment(parent_environment, *, resource_name, template_file=None):
    """The environment a child stack of ``resource_name`` gets, as Heat's child environment.

    Everything of the parent's (its ``resource_registry``, ``parameter_defaults``,
    ``event_sinks``...) but its ``parameters``, which are the child's own; the
    registry's ``resources`` section becomes what its entries for this resource hold
    (as Heat's ``remove_resources_except``: the entries whose name or pattern matches
    ``resource_name``, merged, the exact name winning), and
    a mapping to the child's own template (``template_file``) is dropped so that
    a template resource does not instantiate itself.
    """
    env = {k: v for k, v in (parent_environment or {}).items() if k != "parameters"}
    registry_section = dict(env.get("resource_registry") or {})
    if template_file is not None:
        registry_section = {k: v for k, v in registry_section.items() if v != template_file}
    per_resource = registry_section.pop("resources", None)
    if isinstance(per_resource, dict):
        registry_section["resources"] = child_resources(per_resource, resource_name)
    if registry_section or "resource_registry" in env:
        env["resource_registry"] = registry_section
    return env
