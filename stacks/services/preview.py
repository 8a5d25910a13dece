"""Previews: what a create or update would do, computed without storing anything."""
from stacks.definitions import build_definition, normalize_environment, update_definition
from stacks.hot import UNRESOLVED
from stacks.models import Resource
from stacks.services.parameters import check_immutable_parameters


def _static_properties(definition, defn):
    raw = definition.template.resolve(defn.properties, definition.params, None) or {}
    return {k: (None if v is UNRESOLVED else v) for k, v in raw.items()}


def stack_preview(*, project, name, template, environment=None, parameters=None, files=None,
                  timeout_mins=None, tags=None):
    """The resources a create would make (validated exactly like a create)."""
    env = normalize_environment(environment, parameters)
    definition = build_definition(template, environment=env, files=files or {},
                                  stack_name=name, stack_id="None", project_id=project.pk)
    return {
        "stack_name": name, "id": "None", "timeout_mins": timeout_mins, "tags": tags,
        "description": definition.template.description,
        "template_description": definition.template.description,
        "parameters": {k: str(v) for k, v in definition.params.items()},
        "resources": [{"resource_name": n, "resource_type": d.type,
                       "resource_identity": {"stack_name": name, "path": f"/resources/{n}"},
                       "properties": _static_properties(definition, d),
                       "required_by": sorted(o for o, od in definition.resources.items()
                                             if n in od.depends_on)}
                      for n, d in definition.resources.items()],
    }


def stack_update_preview(stack, *, template, environment, parameters, files, patch,
                         clear_parameters):
    """Heat's resource_changes: added, deleted, replaced, updated, unchanged."""
    definition, _, _ = update_definition(
        stack, template=template, environment=environment, parameters=parameters, files=files,
        patch=patch, clear_parameters=clear_parameters)
    check_immutable_parameters(stack, definition)
    current = {r.name: r for r in Resource.objects.filter(stack=stack, replaced_by__isnull=True)
               .exclude(state="DELETE_COMPLETE")}
    changes = {"added": [], "deleted": [], "replaced": [], "updated": [], "unchanged": []}
    for name, defn in definition.resources.items():
        entry = {"resource_name": name, "resource_type": defn.type}
        res = current.get(name)
        if res is None:
            changes["added"].append(entry)
            continue
        props = _static_properties(definition, defn)
        old = res.properties_data or {}
        changed = {k for k in set(props) | set(old)
                   if props.get(k) is not None and props.get(k) != old.get(k)}
        cls = definition.plugins[name]
        if res.type != defn.type or (changed and cls.needs_replacement_for(old, props, changed)):
            changes["replaced"].append(entry)
        elif changed:
            changes["updated"].append(entry)
        else:
            changes["unchanged"].append(entry)
    for name, res in current.items():
        if name not in definition.resources:
            changes["deleted"].append({"resource_name": name, "resource_type": res.type})
    return changes
