"""Previews: what a create or update would do, computed without storing anything.

Shapes as Heat's: a create preview is the stack (``disable_rollback``,
``parameters``, ...) with each resource as Heat formats one (INIT_COMPLETE,
``resource_identity``, ``stack_identity``, ``attributes``, ``properties``);
a nested stack's or group's resources are a list in the place of their
resource. Values only known once the stack exists (``get_attr``,
``get_resource``) are null.
"""
from django.utils import timezone

from heatweb.exceptions import HeatError, InvalidTemplateAttribute
from stacks.definitions import NamesLookup, build_definition, normalize_environment, \
    parse_template, update_definition
from stacks.hot import UNRESOLVED
from stacks.models import Resource
from stacks.plugins import REPLACE, UNCHANGED, UPDATE, InputLookup, node_data, plugin_for, \
    resolved_properties, stack_context, update_decision
from stacks.resources.resource_group import member_definition
from stacks.resources.stack import NestedStackResource, TemplateResource
from stacks.services.parameters import check_immutable_parameters
from stacks.services.validation import placeholder

GROUP_TYPE = "OS::Heat::ResourceGroup"
MAX_PREVIEW_DEPTH = 5


def known(value):
    """``value`` with what is not known before the stack exists (UNRESOLVED) as None."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, dict):
        return {k: known(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [known(v) for v in value]
    return value


def _static_properties(definition, defn, plugin=None, lookup=None):
    """The properties as far as known before the stack exists, with the schema's defaults."""
    raw = definition.template.resolve(defn.properties, definition.params, lookup) or {}
    props = known(raw) if isinstance(raw, dict) else {}
    for key, prop in (getattr(plugin, "properties_schema", None) or {}).items():
        if key not in props and prop.default is not None:
            props[key] = prop.default
    return props


def _time():
    return timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")


class _Scope:
    """Where the previewed resources live: the stack's name, project and files."""

    def __init__(self, *, stack_name, project_id, files, parent_resource=None, stack_id="None"):
        self.stack_name, self.project_id, self.files = stack_name, project_id, files
        self.parent_resource, self.stack_id = parent_resource, stack_id

    def identity(self, path=""):
        return {"stack_name": self.stack_name, "stack_id": self.stack_id,
                "tenant": self.project_id, "path": path}

    def child(self, name):
        return _Scope(stack_name=f"{self.stack_name}-{name}", project_id=self.project_id,
                      files=self.files, parent_resource=name)


def resource_entry(scope, *, name, type_name, plugin=None, properties=None, required_by=(),
                   state=("INIT", "COMPLETE"), reason="", physical_id="", times=(None, None)):
    """One resource as Heat's format_stack_resource gives it (times: null in a preview)."""
    entry = {
        "resource_name": name, "resource_type": type_name,
        "resource_action": state[0], "resource_status": state[1],
        "resource_status_reason": reason, "physical_resource_id": physical_id,
        "creation_time": times[0], "updated_time": times[1],
        "resource_identity": scope.identity(f"/resources/{name}"),
        "stack_identity": scope.identity(), "stack_name": scope.stack_name,
        "required_by": list(required_by), "description": "", "metadata": {},
        "attributes": {a: None for a in getattr(plugin, "attributes_schema", {}) or {}},
    }
    if scope.parent_resource:
        entry["parent_resource"] = scope.parent_resource
    if properties is not None:
        entry["properties"] = properties
    return entry


def _nested_preview(scope, *, template, params, depth):
    """The resources of a nested template, or None when it cannot be previewed alone
    (its parameters depend on resources not yet made)."""
    if depth >= MAX_PREVIEW_DEPTH or not isinstance(template, (str, dict)):
        return None
    params = {k: v for k, v in (params or {}).items() if v is not None} \
        if isinstance(params, dict) else {}
    try:
        parsed = parse_template(template, scope.files)
        # A value only known once the parent exists (a get_resource, a get_attr) is
        # previewed as a placeholder that passes the parameter's constraints.
        params.update({n: placeholder(p) for n, p in parsed.param_schemas.items()
                       if n not in params and p.default is None})
        definition = build_definition(parsed, environment=normalize_environment({}, params),
                                      files=scope.files, stack_name=scope.stack_name,
                                      stack_id="None", project_id=scope.project_id)
    except HeatError:
        return None
    return _resources(definition, scope, depth=depth + 1)


def _resource_preview(definition, scope, name, *, depth):
    defn = definition.resources[name]
    plugin = definition.plugins[name]
    props = _static_properties(definition, defn, plugin)
    required_by = sorted(o for o, od in definition.resources.items() if name in od.depends_on)
    nested = None
    if issubclass(plugin, NestedStackResource):
        nested = _nested_preview(scope.child(name), template=props.get("template"),
                                 params=props.get("parameters"), depth=depth)
    elif issubclass(plugin, TemplateResource) and plugin.template_body:
        nested = _nested_preview(scope.child(name), template=plugin.template_body,
                                 params=props, depth=depth)
    elif defn.type == GROUP_TYPE:
        # Its members are previewed with a reference to a resource not made yet as Heat
        # gives it (the resource's name), so a member's template still validates.
        nested = _group_preview(scope.child(name), _static_properties(
            definition, defn, plugin, NamesLookup()), depth=depth)
    if nested is not None:
        return nested
    return resource_entry(scope, name=name, type_name=defn.type, plugin=plugin,
                          properties=props, required_by=required_by)


def _group_preview(scope, props, *, depth):
    resource_def = props.get("resource_def")
    count = props.get("count", 1)
    if not isinstance(resource_def, dict) or not isinstance(resource_def.get("type"), str) \
            or not isinstance(count, int) or depth >= MAX_PREVIEW_DEPTH:
        return None
    index_var = props.get("index_var") or "%index%"
    members = {str(i): member_definition(resource_def, index_var=index_var, index=i)
               for i in range(max(count, 0))}
    template = {"heat_template_version": "2016-10-14", "resources": members}
    try:
        definition = build_definition(template, environment={"parameters": {}},
                                      files=scope.files, stack_name=scope.stack_name,
                                      stack_id="None", project_id=scope.project_id)
    except HeatError:
        return None
    return _resources(definition, scope, depth=depth + 1)


def _resources(definition, scope, *, depth=0):
    return [_resource_preview(definition, scope, n, depth=depth) for n in definition.resources]


def stack_preview(*, project, name, template, environment=None, parameters=None, files=None,
                  timeout_mins=None, tags=None, disable_rollback=True, user=None):
    """The stack a create would make (validated exactly like a create), as Heat previews it."""
    env = normalize_environment(environment, parameters)
    definition = build_definition(template, environment=env, files=files or {},
                                  stack_name=name, stack_id="None", project_id=project.pk)
    scope = _Scope(stack_name=name, project_id=project.pk, files=files or {})
    description = definition.template.description or "No description"
    return {
        "stack_name": name, "id": "None", "creation_time": _time(), "updated_time": None,
        "deletion_time": None, "notification_topics": [], "capabilities": [],
        "description": description, "template_description": description,
        "parameters": {k: _param_text(v) for k, v in definition.params.items()},
        "disable_rollback": disable_rollback, "timeout_mins": timeout_mins,
        "stack_owner": getattr(user, "username", None), "parent": None,
        "stack_user_project_id": project.pk, "tags": tags,
        "outputs": [{"output_key": key, "description": data.get("description")
                     or "No description given", "output_value": None}
                    for key, data in definition.template.outputs.items()],
        "resources": _resources(definition, scope),
    }


def flat_resources(resources):
    """The preview's resources with nested ones (lists) laid out in order, for pages."""
    for item in resources:
        if isinstance(item, list):
            yield from flat_resources(item)
        else:
            yield item


def _param_text(value):
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


def stack_update_preview(stack, *, template, environment, parameters, files, patch,
                         clear_parameters, show_nested=False):
    """Heat's resource_changes: added, deleted, replaced, updated, unchanged, each a list of
    resources as Heat formats them. ``show_nested``: also what happens inside nested stacks
    (the resources of removed and replaced ones deleted, of new ones added, and the changes
    of updated ones)."""
    definition, _, files = update_definition(
        stack, template=template, environment=environment, parameters=parameters, files=files,
        patch=patch, clear_parameters=clear_parameters)
    check_immutable_parameters(stack, definition)
    return _update_changes(stack, definition, files=files or {}, show_nested=show_nested)


def _update_changes(stack, definition, *, files, show_nested, depth=0):
    current = {r.name: r for r in Resource.objects.filter(stack=stack, replaced_by__isnull=True)
               .exclude(state="DELETE_COMPLETE")}
    scope = _Scope(stack_name=stack.name, project_id=stack.project_id, files=files,
                   stack_id=str(stack.pk), parent_resource=stack.parent_resource_name or None)
    changes = {"added": [], "deleted": [], "replaced": [], "updated": [], "unchanged": []}
    nested = {"added": [], "deleted": [], "updated": []}
    decisions = _decisions(stack, definition, current)
    kinds = {REPLACE: "replaced", UPDATE: "updated", UNCHANGED: "unchanged"}
    for name, defn in definition.resources.items():
        res = current.get(name)
        cls = definition.plugins[name]
        kind = "added" if res is None else kinds[decisions[name]]
        if kind in ("added", "replaced"):
            changes[kind].append(resource_entry(scope, name=name, type_name=defn.type,
                                                plugin=cls))
            nested["added"].append(name)
        else:
            changes[kind].append(_existing_entry(scope, res, cls))
        if kind == "replaced":
            nested["deleted"].append(res)
        elif kind == "updated":
            nested["updated"].append((res, name))
    for name, res in current.items():
        if name not in definition.resources:
            changes["deleted"].append(_existing_entry(scope, res, None))
            nested["deleted"].append(res)
    if show_nested and depth < MAX_PREVIEW_DEPTH:
        _nested_changes(changes, nested, definition, scope, depth=depth)
    return changes


class _CurrentLookup(InputLookup):
    """get_resource/get_attr from the stack's resources as they are now; a resource the
    update adds or replaces is not known before the update runs (UNRESOLVED)."""

    def __init__(self, input_data, *, unknown, plugins=None):
        super().__init__(input_data, plugins)
        self.unknown = unknown

    def get_reference_id(self, name):
        if name in self.unknown or name not in self.by_name:
            return UNRESOLVED
        return super().get_reference_id(name)

    def get_attribute(self, name, attr, *path):
        if name in self.unknown or name not in self.by_name:
            return UNRESOLVED
        return super().get_attribute(name, attr, *path)


class _Unknown:
    """A property value known only when the update runs: counted as changed."""

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def _has_unresolved(value):
    if value is UNRESOLVED:
        return True
    if isinstance(value, dict):
        return any(_has_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unresolved(v) for v in value)
    return False


def _update_properties(definition, name, res, lookup):
    """The properties the engine would converge ``res`` to, as far as they are known now:
    resolved like the engine does, validated (defaults filled in)."""
    defn, cls = definition.resources[name], definition.plugins[name]
    try:
        raw = resolved_properties(definition, name, lookup) or {}
    except InvalidTemplateAttribute:  # the update fails it when it runs; shown as changed
        raw = definition.template.resolve(defn.properties, definition.params, lookup) or {}
    old = res.properties_data or {}
    unknown = {k for k, v in raw.items() if _has_unresolved(v)}
    known = {k: (old.get(k) if k in unknown else v) for k, v in raw.items()}
    try:
        props = cls.validate_properties({k: v for k, v in known.items() if v is not None},
                                        resource_name=name)
    except HeatError:
        props = known
    return {**props, **{k: _Unknown() for k in unknown}}


def _decisions(stack, definition, current):
    """``{name: REPLACE | UPDATE | UNCHANGED}`` of the kept resources: the engine's own
    answer (``plugins.update_decision``) on the properties the update would give each,
    resolved against the resources as they are (a flavor change is a resize in place).
    A resource added or replaced changes what refers to it: decide again until no new
    resource joins them."""
    ctx = stack_context(stack, with_definition=False)
    data = {r.pk: node_data(r, plugin_for(ctx, r)) for r in current.values()}
    unknown = {n for n in definition.resources if n not in current}
    while True:
        lookup = _CurrentLookup(data, unknown=unknown, plugins=definition.plugins)
        decisions = {}
        for name, defn in definition.resources.items():
            if name in current:
                props = _update_properties(definition, name, current[name], lookup)
                decisions[name] = update_decision(current[name], resource_type=defn.type,
                                                  cls=definition.plugins[name],
                                                  props=props)[0]
        replaced = {n for n, d in decisions.items() if d == REPLACE}
        if replaced <= unknown:
            return decisions
        unknown |= replaced


def _child_stack(res):
    from stacks.models import Stack

    child = res.plugin_data.get("nested_stack_id") or \
        (res.physical_resource_id if res.type == "OS::Heat::Stack" else None)
    return Stack.objects.filter(pk=child, deleted_at__isnull=True).first() if child else None


def _nested_changes(changes, nested, definition, scope, *, depth):
    """Heat's show_nested: recurse into the nested stacks of changed resources."""
    for res in nested["deleted"]:
        child = _child_stack(res)
        if child is not None:
            changes["deleted"].extend(_tree_entries(child, depth=depth + 1))
    for name in nested["added"]:
        preview = _resource_preview(definition, scope, name, depth=depth)
        if isinstance(preview, list):
            changes["added"].extend(flat_resources(preview))
    for res, name in nested["updated"]:
        child = _child_stack(res)
        plugin = definition.plugins[name]
        props = _static_properties(definition, definition.resources[name])
        if child is None:
            continue
        if issubclass(plugin, NestedStackResource):
            template, params = props.get("template"), props.get("parameters") or {}
        elif issubclass(plugin, TemplateResource) and plugin.template_body:
            template, params = plugin.template_body, props
        else:
            continue
        try:
            child_definition, _, files = update_definition(
                child, template=template, environment=None, files=scope.files, patch=False,
                parameters={k: v for k, v in params.items() if v is not None},
                clear_parameters=())
        except HeatError:
            continue  # its values are only known during the update
        child_changes = _update_changes(child, child_definition, files=files or {},
                                        show_nested=True, depth=depth + 1)
        for kind, entries in child_changes.items():
            changes[kind].extend(entries)


def _tree_entries(stack, *, depth):
    """Every current resource of ``stack`` and of its nested stacks, as entries."""
    scope = _Scope(stack_name=stack.name, project_id=stack.project_id, files={},
                   stack_id=str(stack.pk), parent_resource=stack.parent_resource_name or None)
    entries = []
    for res in Resource.objects.filter(stack=stack, replaced_by__isnull=True) \
            .exclude(state="DELETE_COMPLETE").order_by("id"):
        entries.append(_existing_entry(scope, res, None))
        child = _child_stack(res)
        if child is not None and depth < MAX_PREVIEW_DEPTH:
            entries.extend(_tree_entries(child, depth=depth + 1))
    return entries


def _existing_entry(scope, res, plugin):
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return resource_entry(scope, name=res.name, type_name=res.type, plugin=plugin,
                          state=tuple(res.state.split("_", 1)), reason=res.status_reason,
                          physical_id=res.physical_resource_id or "",
                          times=(res.created_at.strftime(fmt), res.updated_at.strftime(fmt)))
