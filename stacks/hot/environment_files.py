"""A request's ``environment_files``, merged as Heat's engine merges them (pure Python).

A create, update, preview or validate may name environment files (``environment_files``,
their text in ``files``) instead of sending one merged ``environment``: Magnum's driver
does (its cluster environments), and ``openstack stack create -e`` sends both. As Heat
(``heat.api...InstantiationData.environment`` and ``heat.common.environment_util``):
with environment files the request's ``environment`` is ignored; its ``parameters`` come
first, then each file in order merges into the environment. A file's ``parameters`` and
``parameter_defaults`` override what came before, or merge by the file's
``parameter_merge_strategies`` (``merge``, ``deep_merge``: strings joined, numbers added,
lists and comma delimited lists extended, maps merged); only the parameters some
template of the request declares are taken once a value is there. Other sections
replace the earlier one's top-level keys.
"""
import json
from collections.abc import Mapping, Sequence

from heatweb.exceptions import BadRequest, InvalidTemplate

SECTIONS = ("parameters", "resource_registry", "parameter_defaults",
            "encrypted_param_names", "event_sinks", "parameter_merge_strategies")
OVERWRITE, MERGE, DEEP_MERGE = "overwrite", "merge", "deep_merge"
STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE)
# A parameter's type as Heat's schema names it, from HOT's and CFN's spellings.
_TYPES = {"string": "string", "number": "number", "json": "map", "boolean": "boolean",
          "comma_delimited_list": "list", "commadelimitedlist": "list"}


class ConflictingMergeStrategyForParam(BadRequest):
    pass


class InvalidMergeStrategyForParam(BadRequest):
    pass


def merge_environment_files(names, files, parameters, param_types, load):
    """The environment of a request naming ``names`` (files of ``files``), its
    ``parameters`` first. ``param_types``: every template's parameters of the request
    and their types (``parameter_types``); ``load``: text to data within the budgets."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise BadRequest("environment_files must be a list of file names.")
    env = {"parameters": dict(parameters or {}), "resource_registry": {},
           "parameter_defaults": {}, "encrypted_param_names": [], "event_sinks": []}
    chosen = {}
    for name in names:
        if name not in files:
            raise InvalidTemplate(f"Environment file {name[:200]} is not in the request's "
                                  f"files.")
        parsed = _parsed(load(files[name]), name)
        strategies = parsed.pop("parameter_merge_strategies", {}) or {}
        for section, value in parsed.items():
            if not value:
                continue
            if section in ("parameters", "parameter_defaults"):
                env[section] = _merge_parameters(env[section], value, param_types,
                                                 strategies, chosen, name)
            elif isinstance(value, Mapping) and isinstance(env.get(section), Mapping):
                env[section] = {**env[section], **value} if env[section] else dict(value)
            else:
                env[section] = value
    return env


def _parsed(data, name):
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidTemplate("The environment is not a valid YAML mapping data type.")
    for section, value in data.items():
        if section not in SECTIONS:
            raise InvalidTemplate(f'environment has wrong section "{section}"')
        if value is None:
            raise InvalidTemplate(f'environment has empty section "{section}"')
    for section in ("parameters", "parameter_defaults", "resource_registry",
                    "parameter_merge_strategies"):
        if not isinstance(data.get(section, {}), dict):
            raise InvalidTemplate(f"environment section {section} of {name[:200]} must be "
                                  f"a mapping")
    return dict(data)


def _strategy(strategies, key, chosen):
    default = strategies.get("default", OVERWRITE)
    strategy = strategies.get(key, chosen.get(key, default))
    return strategy if strategy in STRATEGIES else default


def _merge_parameters(old, new, param_types, strategies, chosen, name):
    for key, value in new.items():
        if key in param_types and value is not None:
            strategy = _strategy(strategies, key, chosen)
            if key not in chosen:
                chosen[key] = strategy
            elif strategy != chosen[key]:
                raise ConflictingMergeStrategyForParam(
                    f"Conflicting merge strategy '{strategy}' for parameter '{key}' in file "
                    f"'{name}'.")
    if not old:
        return dict(new)
    old = dict(old)
    for key, value in new.items():
        if key not in param_types or value is None:
            continue
        if chosen[key] == OVERWRITE:
            old[key] = value
        else:
            old[key] = _merged_value(key, old, value, param_types[key],
                                     deep=chosen[key] == DEEP_MERGE)
    return old


def _merged_value(key, old, value, kind, *, deep):
    value = _typed(value, kind)
    if kind == "map":
        return _merge_map(old.get(key) or {}, value, deep)
    if kind == "list":
        return _merge_list(old.get(key), value)
    if kind == "string":
        return "".join([str(old.get(key, "")), value])
    if kind == "number":
        return old.get(key, 0) + value
    raise InvalidMergeStrategyForParam(f"Invalid merge strategy 'merge' for parameter "
                                       f"'{key}'.")


def _typed(value, kind):
    try:
        if kind == "map":
            if not isinstance(value, str):
                value = json.dumps(value)
            return json.loads(value) if value else value
        if not isinstance(value, Sequence):
            raise ValueError(f"{value!r} is not a sequence")
    except (ValueError, TypeError) as error:
        raise InvalidTemplate(f"Invalid parameter in environment {error}.") from None
    return value


def _merge_list(old, new):
    if not old:
        return new
    if isinstance(new, list):
        return [*old, *new] if isinstance(old, list) else new
    return ",".join([str(old), new])


def _merge_map(old, new, deep):
    if not old:
        return new
    old = dict(old)
    for key, value in new.items():
        if value is None:
            continue
        if not deep:
            old[key] = value
        elif isinstance(value, Mapping):
            old[key] = _merge_map(old.get(key), value, deep) if old.get(key) else value
        elif isinstance(value, Sequence) and not isinstance(value, str):
            old[key] = _merge_list(old.get(key), value) if old.get(key) else value
        elif isinstance(value, str):
            old[key] = "".join([str(old.get(key, "")), value])
        else:
            old[key] = value
    return old


def parameter_types(template, files, load):
    """Every parameter a template of the request declares (its files' templates first, the
    template's own last, as Heat's ``all_param_schemata``) and its type."""
    types = {}
    for text in (files or {}).values():
        try:
            data = load(text)
        except Exception:  # noqa: BLE001 - a file that is not a template declares nothing
            continue
        types.update(_declared(data))
    types.update(_declared(load(template) if isinstance(template, str) else template))
    return types


def _declared(data):
    if not isinstance(data, dict):
        return {}
    section = data.get("parameters") if "heat_template_version" in data else \
        data.get("Parameters") if "AWSTemplateFormatVersion" in data \
        or "HeatTemplateFormatVersion" in data else None
    if not isinstance(section, dict):
        return {}
    return {name: _TYPES.get(str((spec or {}).get("type") or (spec or {}).get("Type")
                                 or "string").lower(), "string")
            for name, spec in section.items() if isinstance(spec, dict) or spec is None}
