"""Breakpoints (hooks) in an environment's ``resource_registry``, read as Heat reads them.

``resource_registry: {resources: {<name or fnmatch pattern>: {hooks: <hook or list>}}}``
sets a breakpoint on the resources whose name matches; a nested stack's
resources are named one level down, under the name of the resource that
owns the nested stack (``{nested: {inner: {hooks: pre-create}}}``), and that
level may itself be a pattern. Pure: no Django, no database.
"""
import fnmatch
from collections.abc import Mapping

from heatweb.exceptions import InvalidBreakPointHook

HOOK_TYPES = ("pre-create", "pre-update", "pre-delete",
              "post-create", "post-update", "post-delete")


def _listed(value):
    """The hooks a ``hooks:`` value names (a string or a list of strings), or None if neither."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def check_hooks(registry):
    """Raise ``InvalidBreakPointHook`` for a ``hooks`` entry that names no known hook.

    As Heat, every ``hooks`` key anywhere in the registry is checked.
    """
    if not isinstance(registry, Mapping):
        return
    for key, value in registry.items():
        if key == "hooks":
            hooks = _listed(value)
            if hooks is None or not all(h in HOOK_TYPES for h in hooks):
                raise InvalidBreakPointHook(
                    f'Invalid hook type "{value}" for resource breakpoint, acceptable '
                    f"hook types are: {HOOK_TYPES}")
        elif isinstance(value, Mapping):
            check_hooks(value)


def hook_resources(environment):
    """The ``resource_registry.resources`` section of an environment (``{}`` when absent)."""
    registry = (environment or {}).get("resource_registry") or {}
    section = registry.get("resources") if isinstance(registry, Mapping) else None
    return section if isinstance(section, Mapping) else {}


def _matching(resources, resource_name):
    return [entry for pattern, entry in resources.items()
            if isinstance(entry, Mapping) and isinstance(pattern, str)
            and fnmatch.fnmatchcase(resource_name, pattern)]


def matches_hook(resources, resource_name, hook):
    """Does a pattern of ``resources`` matching ``resource_name`` set ``hook`` on it?"""
    return any(hook in (_listed(entry.get("hooks")) or ()) for entry in
               _matching(resources, resource_name))


def child_resources(resources, resource_name):
    """The ``resources`` section a nested stack owned by ``resource_name`` inherits.

    Every entry whose pattern matches the owner's name, merged (the exact
    name last, so it wins over a wildcard), as Heat builds a child environment.
    """
    merged = {}
    for entry in _matching(resources, resource_name):
        merged.update(entry)
    exact = resources.get(resource_name)
    if isinstance(exact, Mapping):
        merged.update(exact)
    return {k: v for k, v in merged.items() if isinstance(v, Mapping)}


def hook_description(hook):
    """``(ACTION, reason paused, reason cleared)`` of a hook, Heat's event texts."""
    action = hook.split("-", 1)[1].upper()
    return action, f"{action} paused until Hook {hook} is cleared", f"Hook {hook} is cleared"
