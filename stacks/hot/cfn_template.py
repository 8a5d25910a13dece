"""CloudFormation-format templates read into the sections a ``Template`` works on.

Heat runs templates written as ``AWSTemplateFormatVersion: '2010-09-09'`` or
``HeatTemplateFormatVersion: '2012-12-12'`` (heat/engine/cfn/template.py):
``Description``, ``Parameters`` (CloudFormation's parameter schema),
``Mappings``, ``Resources`` (``Type``, ``Properties``, ``Metadata``,
``DependsOn``, ``DeletionPolicy``, ``UpdatePolicy``, ``Description``),
``Outputs`` (``Value``, ``Description``) and, in 2010-09-09 only,
``Conditions`` with a ``Condition`` key on resources and outputs.

``read_cfn`` checks that structure and renders each section with the keys
the rest of the template code uses (``type``, ``properties``, ``value``...,
and HOT parameter schemas with constraints), so parsing, dependencies,
conditions and resolution are shared with HOT. The template as submitted is
kept unchanged (``Template.raw``).
"""
from collections.abc import Mapping
from dataclasses import dataclass

from heatweb.exceptions import InvalidTemplate, InvalidTemplateVersion
from stacks.hot.parameters import parse_number
from stacks.hot.versions import CFN_FORMATS, VersionFunctions, cfn_format

CFN_VERSION_KEYS = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion")
_SECTIONS = {"Description", "Mappings", "Parameters", "Resources", "Outputs"}
_RESOURCE_KEYS = {"Type": "type", "Properties": "properties", "Metadata": "metadata",
                  "DependsOn": "depends_on", "DeletionPolicy": "deletion_policy",
                  "UpdatePolicy": "update_policy", "Description": None}
_OUTPUT_KEYS = {"Value": "value", "Description": "description"}
_CONDITION = {"Condition": "condition"}
PARAMETER_TYPES = {"String": "string", "Number": "number", "CommaDelimitedList":
                   "comma_delimited_list", "Json": "json", "Boolean": "boolean"}
_PARAMETER_KEYS = {"Type", "Default", "NoEcho", "AllowedValues", "AllowedPattern", "MaxLength",
                   "MinLength", "MaxValue", "MinValue", "Description", "ConstraintDescription",
                   "Label"}
PSEUDO_PARAMETERS = ("AWS::StackId", "AWS::StackName", "AWS::Region")
REGION = "ap-southeast-1"  # what Heat answers for AWS::Region


@dataclass(frozen=True)
class CfnSections:
    """One CloudFormation template's sections, keyed as the HOT code reads them."""
    version: str
    functions: VersionFunctions
    has_conditions: bool
    sections: dict
    mappings: dict


def read_cfn(raw, key):
    """The ``CfnSections`` of ``raw``, whose version is under ``key``; InvalidTemplate* else."""
    version = raw[key]
    functions = cfn_format(key, version)
    if functions is None:
        known = sorted(date for k, date in CFN_FORMATS if k == key)
        raise InvalidTemplateVersion(explanation=(
            f'"{key}: {version}". "{key}" should be: {", ".join(known)}'))
    has_conditions = bool(functions.conditions)
    allowed = _SECTIONS | {key} | ({"Conditions"} if has_conditions else set())
    for section in raw:
        if section not in allowed:
            raise InvalidTemplate(f"The template section is invalid: {section}")
    resource_keys = {**_RESOURCE_KEYS, **(_CONDITION if has_conditions else {})}
    output_keys = {**_OUTPUT_KEYS, **(_CONDITION if has_conditions else {})}
    sections = {
        "description": raw.get("Description") or "",
        "parameters": {name: _parameter(name, data)
                       for name, data in _mapping(raw, "Parameters").items()},
        "resources": {name: _renamed(data, resource_keys, f"resource {name}", "resource")
                      for name, data in _mapping(raw, "Resources").items()},
        "outputs": {name: _output(name, data, output_keys)
                    for name, data in _mapping(raw, "Outputs").items()},
        "conditions": _mapping(raw, "Conditions"),
    }
    for name, data in sections["resources"].items():
        if "type" not in data:
            raise InvalidTemplate(f'Resource {name} is missing "Type"')
    return CfnSections(version=f"{key}.{version}", functions=functions,
                       has_conditions=has_conditions, sections=sections,
                       mappings=_mapping(raw, "Mappings"))


def stack_arn(*, stack_name, stack_id, project_id):
    """A stack's ARN, as Heat's CloudFormation answers name it."""
    return f"arn:openstack:heat::{project_id}:stacks/{stack_name}/{stack_id}"


def pseudo_parameters(*, stack_name, stack_id, project_id):
    """Heat's CloudFormation pseudo parameters; AWS::StackId is the stack's ARN."""
    arn = (stack_arn(stack_name=stack_name, stack_id=stack_id, project_id=project_id)
           if stack_id else "None")
    return {"AWS::StackId": arn, "AWS::StackName": stack_name, "AWS::Region": REGION}


def _mapping(raw, section):
    value = raw.get(section)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidTemplate(f'The "{section}" section must be a mapping')
    return dict(value)


def _renamed(data, keys, what, kind):
    if not isinstance(data, Mapping):
        raise InvalidTemplate(f"The {what} is not a mapping")
    out = {}
    for key, value in data.items():
        if key not in keys:
            raise InvalidTemplate(f'"{key}" is not a valid keyword inside a {kind} definition')
        if keys[key]:
            out[keys[key]] = value
    return out


def _output(name, data, keys):
    out = _renamed(data, keys, f"output {name}", "output")
    if "value" not in out:
        raise InvalidTemplate(f"Each output definition must contain a Value key (output "
                              f"{name}).")
    return out


def _number(name, key, value):
    try:
        return parse_number(value)
    except ValueError:
        raise InvalidTemplate(f"Invalid {key} for parameter ({name}): {value!r} is not a "
                              f"number") from None


def _parameter(name, data):
    """CloudFormation's parameter schema as the HOT schema ``ParamSchema`` reads."""
    if not isinstance(data, Mapping):
        raise InvalidTemplate(f"Invalid parameter {name}: the schema must be a mapping")
    unknown = set(data) - _PARAMETER_KEYS
    if unknown:
        raise InvalidTemplate(f"Invalid key '{sorted(unknown)[0]}' for parameter ({name})")
    if data.get("Type") not in PARAMETER_TYPES:
        raise InvalidTemplate(f"Invalid type ({data.get('Type')}) for parameter ({name}); "
                              f"must be one of {', '.join(PARAMETER_TYPES)}")
    out = {"type": PARAMETER_TYPES[data["Type"]], "description": data.get("Description") or "",
           "hidden": str(data.get("NoEcho", "false")).lower() == "true"}
    if data.get("Label") is not None:
        out["label"] = data["Label"]
    if data.get("Default") is not None:
        out["default"] = data["Default"]
    described = ({"description": data["ConstraintDescription"]}
                 if data.get("ConstraintDescription") else {})
    constraints = []
    for kind, low, high in (("length", "MinLength", "MaxLength"),
                            ("range", "MinValue", "MaxValue")):
        bounds = {bound: _number(name, key, data[key])
                  for bound, key in (("min", low), ("max", high)) if data.get(key) is not None}
        if bounds:
            constraints.append({kind: bounds, **described})
    if data.get("AllowedValues") is not None:
        constraints.append({"allowed_values": data["AllowedValues"], **described})
    if data.get("AllowedPattern") is not None:
        constraints.append({"allowed_pattern": data["AllowedPattern"], **described})
    if constraints:
        out["constraints"] = constraints
    return out
