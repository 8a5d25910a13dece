"""The immutable-parameter rule, one check used by every update path."""
from heatweb.exceptions import ImmutableParameterModified


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
    from stacks.services.definitions import definition_cache

    old = definition_cache.get(stack.raw_template, stack)
    changed = immutable_changes(old.params, new_definition)
    if changed:
        raise ImmutableParameterModified(*changed)
