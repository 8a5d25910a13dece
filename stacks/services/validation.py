"""``POST /validate``: a template's parameter schema in Heat's form, or a 400."""
from heatweb.exceptions import BadRequest, HeatError, StackValidationFailed, \
    UserParameterMissing
from stacks.cloud import cloud_for_user
from stacks.definitions import build_definition, normalize_environment, parse_template, \
    request_environment
from stacks.hot import UNRESOLVED
from stacks.resources import registry as resource_registry
from stacks.resources.stack import NestedStackResource, TemplateResource
from stacks.services.custom_constraints import check_custom_constraints

_PLACEHOLDERS = {"string": "", "number": 0, "json": {}, "comma_delimited_list": [],
                 "boolean": False}
# Heat's error codes ``ignore_errors`` may name (exception.ERROR_CODE_MAP): a resource
# type whose service the cloud does not run.
IGNORABLE_ERRORS = {"99001": "ResourceTypeUnavailable"}


def ignorable_errors(value):
    """The error types ``ignore_errors`` (comma separated codes) names; 400 for others."""
    codes = [c for c in (value or "").split(",") if c]
    invalid = [c for c in codes if c not in IGNORABLE_ERRORS]
    if invalid:
        raise BadRequest(f"Invalid codes in ignore_errors : {invalid}")
    return {IGNORABLE_ERRORS[c] for c in codes}


def placeholder(schema):
    """A value that passes the parameter's constraints, for a parameter not given:
    validate checks the template, values are checked at create (as Heat)."""
    for constraint in schema.constraints:
        if constraint.kind == "allowed_values" and constraint.spec:
            return constraint.spec[0]
        if constraint.kind == "range" and constraint.spec.get("min") is not None:
            return constraint.spec["min"]
        if constraint.kind == "length" and constraint.spec.get("min"):
            return "x" * int(constraint.spec["min"]) if schema.type == "string" else \
                [""] * int(constraint.spec["min"])
    return _PLACEHOLDERS[schema.type]


def _stand_in(schema):
    """A parameter's value at validate when it is known only at create: never empty."""
    value = placeholder(schema)
    return "known-at-create" if value == "" else value


def _not_given(template, env):
    """The parameters without a value given or defaulted (validate does not need one)."""
    given = dict(env.get("parameter_defaults") or {}) | dict(env["parameters"])
    return {n for n, s in template.param_schemas.items() if n not in given and s.default is None}


def _validated(template, env, files, *, project_id, ignore, strict=True):
    missing = {n: placeholder(template.param_schemas[n]) for n in _not_given(template, env)}
    trial_env = dict(env, parameters={**env["parameters"], **missing})
    try:
        return build_definition(template, environment=trial_env, files=files,
                                stack_name="validate", stack_id="None", project_id=project_id,
                                strict=strict, unknown=tuple(missing), nested=False)
    except UserParameterMissing:
        raise
    except StackValidationFailed as error:
        if any(f"'{n}'" in error.message for n in missing):
            return None
        raise
    except HeatError as error:
        if type(error).__name__ in ignore:
            return None
        raise


def _parameters(template, env):
    values = env.get("parameters") or {}
    return {n: s.to_heat_dict(values.get(n)) for n, s in template.param_schemas.items()}


def _schema(template, env, files, *, project, ignore, show_nested, depth=0, user=None):
    result = {"Description": template.description or "No description",
              "Parameters": _parameters(template, env)}
    if template.parameter_groups:
        result["ParameterGroups"] = template.parameter_groups
    if depth:
        # A nested template is only read for its parameters here (as Heat's
        # get_nested_parameters): its own errors are the nested create's.
        try:
            definition = _validated(template, env, files, project_id=project.pk,
                                    ignore=ignore, strict=False)
        except HeatError:
            definition = None
    else:
        definition = _validated(template, env, files, project_id=project.pk, ignore=ignore)
        if definition is not None:
            # Values given or defaulted, not the placeholders of parameters not given.
            check_custom_constraints(definition.params, cloud_for_user(user, project.pk),
                                     only=set(template.param_schemas) - _not_given(template, env))
    if show_nested and definition is not None and depth < 5:
        nested = _nested_parameters(definition, files, project=project, ignore=ignore,
                                    depth=depth)
        if nested:
            result["NestedParameters"] = nested
    return result


def _nested_parameters(definition, files, *, project, ignore, depth):
    """Heat's ``NestedParameters``: per nested-stack resource its template's parameters."""
    found = {}
    for name, defn in definition.resources.items():
        plugin = definition.plugins[name]
        props = definition.template.resolve(defn.properties, definition.params, None) or {}
        if issubclass(plugin, NestedStackResource):
            body, values = props.get("template"), props.get("parameters")
        elif issubclass(plugin, TemplateResource) and plugin.template_body:
            body, values = plugin.template_body, props
        else:
            continue
        if not isinstance(body, str) or body is UNRESOLVED:
            continue
        values = {k: v for k, v in (values if isinstance(values, dict) else {}).items()
                  if v is not UNRESOLVED}
        child = parse_template(body, files)
        env = normalize_environment({}, values)
        entry = {"Type": defn.type}
        entry.update(_schema(child, env, files, project=project, ignore=ignore,
                             show_nested=True, depth=depth + 1))
        found[name] = entry
    return found


def nested_template_check(source, *, parameters=None, files=None, project_id=None):
    """A nested stack's template checked at its parent's create, as ``/validate`` checks
    one (with the parent's ``files``, as Heat passes them): parameters not given may be
    missing, and a type may be a parent's file."""
    files = files or {}
    template = parse_template(source, files)
    given = {k: v for k, v in (parameters or {}).items() if k in template.param_schemas}
    # A value known only at create (a get_resource of the parent's) is a stand-in here, as
    # Heat validates with the resource's name: given, so a property it fills is present.
    values = {k: _stand_in(template.param_schemas[k]) if v is UNRESOLVED else v
              for k, v in given.items()}
    _validated(template, normalize_environment({}, values), files, project_id=project_id,
               ignore={"ResourceTypeNotFound"})


def template_validate(body, *, project, user=None, show_nested=False, ignore_errors=None):
    """Validate like a create would (parameters not given are not required here); custom
    constraints are looked up as ``user`` (Keystone mode: their token), as Heat does."""
    ignore = ignorable_errors(ignore_errors)
    if body.get("template_url") and not body.get("template"):
        raise BadRequest("template_url is not supported here: send the template itself.")
    files = body.get("files") or {}
    env = request_environment(body.get("environment"), body.get("parameters"),
                              environment_files=body.get("environment_files"), files=files,
                              template=body.get("template"))
    template = parse_template(body.get("template"), files)
    result = _schema(template, env, files, project=project, ignore=ignore,
                     show_nested=show_nested, user=user)
    registry = dict(env.get("resource_registry") or {})
    # As Heat: a type that is a file of the request is registered as itself.
    for data in template.resources.values():
        kind = data.get("type") if isinstance(data, dict) else None
        if isinstance(kind, str) and kind in files and kind not in registry \
                and not resource_registry.has_type(kind):
            registry[kind] = kind
    result["Environment"] = {
        "parameters": env.get("parameters") or {},
        "parameter_defaults": env.get("parameter_defaults") or {},
        "resource_registry": {"resources": {}, **registry},
        "event_sinks": env.get("event_sinks") or [],
    }
    return result
