"""The immutable-parameter rule: one check, used by every update path.

PUT, PATCH, ``clear_parameters``, update previews, the web update form and
nested stacks whose parameters a parent's update changes all call
``check_immutable_parameters`` before anything is stored or enqueued.
"""
from heatweb.exceptions import ImmutableParameterModified
from stacks.definitions import definition_cache, update_definition
from stacks.models import Resource, Stack
from stacks.hot.environment import child_environment
from stacks.hot.functions import contains_unresolved


def immutable_changes(old_params, new_definition):
    """Names of parameters in both templates, immutable in the new one, whose typed value changed."""
    new_params = new_definition.params
    changed = []
    for name, schema in new_definition.template.param_schemas.items():
        if not schema.immutable or name not in old_params.schemas:
            continue
        if old_params[name] != new_params[name]:
            changed.append(name)
    return changed


def check_immutable_parameters(stack, new_definition):
    """Raise ImmutableParameterModified naming every offending parameter of this stack or its children."""
    old = definition_cache.get(stack)
    changed = immutable_changes(old.params, new_definition)
    if changed:
        raise ImmutableParameterModified(*changed)
    _check_children(stack, new_definition)


def _check_children(stack, new_definition):
    """A parent's update that would pass a changed immutable parameter down is refused too."""
    resources = {r.name: r for r in Resource.objects.filter(
        stack=stack, replaced_by__isnull=True).exclude(physical_resource_id="")
        .exclude(state__startswith="DELETE")}
    nested = {name: res for name, res in resources.items()
              if name in new_definition.resources
              and res.type == new_definition.resources[name].type
              and new_definition.plugins[name].nested_stack}
    stacks = Stack.objects.filter(pk__in=[r.physical_resource_id for r in nested.values()],
                                  deleted_at__isnull=True).select_related("raw_template")
    children = {str(child.pk): child for child in stacks}
    for name, res in nested.items():
        cls, defn = new_definition.plugins[name], new_definition.resources[name]
        child = children.get(res.physical_resource_id)
        raw = new_definition.template.resolve(defn.properties, new_definition.params, None)
        if child is None or contains_unresolved(raw):
            continue  # values known only at run time: the child's own update checks them
        plugin = cls(name=name, properties=cls.validate_properties(raw or {}, resource_name=name),
                     context=None, data=dict(res.plugin_data or {}))
        child_definition, _, _ = update_definition(
            child, template=plugin._template(),
            environment=child_environment(new_definition.environment, resource_name=name,
                                          template_file=cls.template_file),
            parameters=plugin._parameters(), files=new_definition.template.files, patch=False,
            clear_parameters=())
        check_immutable_parameters(child, child_definition)
