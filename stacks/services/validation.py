"""``POST /validate``: a template's parameter schema in Heat's form, or a 400."""
from heatweb.exceptions import BadRequest, StackValidationFailed, UserParameterMissing
from stacks.definitions import build_definition, normalize_environment, \
    parse_template

_PLACEHOLDERS = {"string": "", "number": 0, "json": {}, "comma_delimited_list": [],
                 "boolean": False}


def template_validate(body, *, project):
    """Validate like a create would (parameters not given are not required here)."""
    if body.get("template_url") and not body.get("template"):
        raise BadRequest("template_url is not supported here: send the template itself.")
    files = body.get("files") or {}
    env = normalize_environment(body.get("environment"), body.get("parameters"))
    template = parse_template(body.get("template"), files)
    given = dict(env.get("parameter_defaults") or {}) | dict(env["parameters"])
    missing = {n: _PLACEHOLDERS[s.type] for n, s in template.param_schemas.items()
               if n not in given and s.default is None}
    trial_env = dict(env, parameters={**env["parameters"], **missing})
    try:
        build_definition(template, environment=trial_env, files=files, stack_name="validate",
                         stack_id="None", project_id=project.pk)
    except StackValidationFailed as error:
        if not any(f"'{n}'" in error.message for n in missing):
            raise
    except UserParameterMissing:
        raise
    return {
        "Description": template.description or "No description",
        "Parameters": {n: s.to_heat_dict() for n, s in template.param_schemas.items()},
        "ParameterGroups": template.parameter_groups or [],
        "Environment": {k: env.get(k, {}) for k in ("parameters", "parameter_defaults",
                                                    "resource_registry")},
    }
