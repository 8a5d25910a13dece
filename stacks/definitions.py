"""From request input to a validated stack definition, and its per-process cache.

A ``StackDefinition`` is everything the engine needs to converge a stack to
one template version: the parsed template, typed parameters, resource
definitions and the plugin class of each. Building one validates the whole
request; nothing is stored before it succeeds.
"""
import json
from collections import OrderedDict
from dataclasses import dataclass

from django.conf import settings

from heatweb.exceptions import BadRequest, InvalidTemplate, RequestLimitExceeded, \
    StackValidationFailed
from stacks.hot import Limits, Template, load_text
from stacks.hot.loader import check_size
from stacks.resources import registry
from stacks.resources.stack import TemplateResource

ENV_SECTIONS = {"parameters", "parameter_defaults", "resource_registry", "event_sinks",
                "encrypted_param_names", "parameter_merge_strategies"}


@dataclass(frozen=True)
class StackDefinition:
    template: Template
    environment: dict
    params: object
    resources: dict
    plugins: dict

    def plugin_for(self, name):
        return self.plugins[name]


def limits():
    cfg = settings.HEATWEB
    return Limits(max_template_bytes=cfg["MAX_TEMPLATE_BYTES"],
                  max_resources=cfg["MAX_RESOURCES_PER_STACK"],
                  max_yaml_aliases=cfg["MAX_YAML_ALIASES"],
                  max_document_nodes=cfg["MAX_DOCUMENT_NODES"],
                  max_nesting=cfg["MAX_NESTING"],
                  max_value_bytes=cfg["MAX_VALUE_BYTES"],
                  max_resolved_bytes=cfg["MAX_RESOLVED_BYTES"])


def check_files(files):
    """``files`` is a mapping of names to text, each and all within their budgets."""
    if not isinstance(files, dict):
        raise BadRequest("files must be a mapping of file name to content.")
    cfg, total = settings.HEATWEB, 0
    for name, content in files.items():
        if not isinstance(content, str):
            raise BadRequest(f"The content of file {str(name)[:80]} must be text.")
        size = len(content.encode("utf-8", errors="surrogatepass"))
        if size > cfg["MAX_FILE_BYTES"]:
            raise RequestLimitExceeded(f"File {str(name)[:80]} ({size} bytes) exceeds the "
                                       f"maximum file size ({cfg['MAX_FILE_BYTES']} bytes).")
        total += size
    if total > cfg["MAX_FILES_BYTES"]:
        raise RequestLimitExceeded(f"The files ({total} bytes) exceed the maximum total size "
                                   f"of files ({cfg['MAX_FILES_BYTES']} bytes).")
    return files


def parse_template(source, files=None):
    if source in (None, "", {}):
        raise InvalidTemplate("No template specified.")
    return Template.parse(source, files=check_files(files or {}), limits=limits())


def _check_environment_size(environment):
    limit = settings.HEATWEB["MAX_ENVIRONMENT_BYTES"]
    text = environment if isinstance(environment, str) else json.dumps(environment)
    check_size(text, limits(), what="Environment", limit=limit)


def normalize_environment(environment, parameters=None):
    """Heat's environment document with the request's parameters overlaid."""
    if environment is not None:
        _check_environment_size(environment)
    if isinstance(environment, str):
        environment = load_text(environment, limits(), what="environment",
                                limit=settings.HEATWEB["MAX_ENVIRONMENT_BYTES"]) \
            if environment.strip() else {}
    if environment is not None and not isinstance(environment, dict):
        raise InvalidTemplate("The environment is not a JSON object or YAML mapping.")
    environment = dict(environment or {})
    unknown = set(environment) - ENV_SECTIONS
    if unknown:
        raise InvalidTemplate(f"environment has wrong section \"{sorted(unknown)[0]}\"")
    for key in ("parameters", "parameter_defaults", "resource_registry"):
        if not isinstance(environment.get(key, {}), dict):
            raise InvalidTemplate(f"environment section {key} must be a mapping")
    if parameters is not None and not isinstance(parameters, dict):
        raise BadRequest("parameters must be a mapping.")
    merged = dict(environment.get("parameters") or {})
    merged.update(parameters or {})
    environment["parameters"] = merged
    return environment


def plugin_class_for_type(type_name, environment, files):
    """The plugin class for a type, after the environment's resource_registry."""
    mapped = (environment.get("resource_registry") or {}).get(type_name)
    if isinstance(mapped, str):
        type_name = mapped
    if type_name in files and not registry.has_type(type_name):
        return TemplateResource.for_file(type_name, files[type_name])
    return registry.get_plugin(type_name)


def build_definition(template, *, environment, files=None, stack_name=None, stack_id=None,
                     project_id=None, strict=True):
    """Validate everything and return a StackDefinition (raises HeatError)."""
    files = files or {}
    if not isinstance(template, Template):
        template = parse_template(template, files)
    values = dict(environment.get("parameter_defaults") or {})
    values = {k: v for k, v in values.items() if k in template.param_schemas}
    values.update(environment.get("parameters") or {})
    params = template.parameters(values, stack_name=stack_name, stack_id=stack_id,
                                 project_id=project_id)
    template.validate(params, resource_type_exists=lambda t: _type_exists(t, environment, files))
    defs = template.resource_definitions(params)
    plugins = {}
    for name, defn in defs.items():
        plugin = plugin_class_for_type(defn.type, environment, files)
        plugins[name] = plugin
        if strict:
            raw = template.resolve(defn.properties, params, None)
            if raw is not None and not isinstance(raw, dict):
                raise StackValidationFailed(
                    f"Property error: resources.{name}.properties: must be a mapping")
            props = plugin.validate_properties(raw or {}, resource_name=name)
            _validate_members(plugin, props, files=files, resource_name=name)
    return StackDefinition(template=template, environment=environment, params=params,
                           resources=defs, plugins=plugins)


def _validate_members(plugin, properties, *, files, resource_name):
    """The resources a plugin will put in its child stack, checked as the child will check them.

    A child stack gets the parent's files but not its environment, so its
    types are resolved without the parent's resource_registry.
    """
    for member, (type_name, member_properties) in plugin.member_definitions(properties).items():
        member_class = plugin_class_for_type(type_name, {}, files)
        member_class.validate_properties(member_properties,
                                         resource_name=f"{resource_name}.{member}")


def _type_exists(type_name, environment, files):
    try:
        plugin_class_for_type(type_name, environment, files)
    except Exception:  # ResourceTypeNotFound
        return False
    return True


class _DefinitionCache:
    """Raw templates never change, so each worker keeps their definitions."""

    def __init__(self, size=64):
        self.size = size
        self.items = OrderedDict()

    def get(self, stack):
        """The stack's definition; its raw template is read only when it is not cached."""
        key = (stack.raw_template_id, str(stack.pk))
        hit = self.items.get(key)
        if hit is None:
            raw_template = stack.raw_template
            hit = build_definition(
                raw_template.template, environment=raw_template.environment,
                files=raw_template.files, stack_name=stack.name, stack_id=str(stack.pk),
                project_id=stack.project_id, strict=False)
            self.items[key] = hit
            if len(self.items) > self.size:
                self.items.popitem(last=False)
        self.items.move_to_end(key)
        return hit


definition_cache = _DefinitionCache()


def update_definition(stack, *, template, environment, parameters, files, patch,
                      clear_parameters):
    """The definition an update would converge to (PUT replaces, PATCH overlays)."""
    old_raw = stack.raw_template
    if patch:
        old_env = dict(old_raw.environment or {})
        given = normalize_environment(environment, parameters) if (environment or parameters) \
            else {"parameters": {}}
        merged = {k: v for k, v in (old_env.get("parameters") or {}).items()
                  if k not in set(clear_parameters or ())}
        merged.update(given.get("parameters") or {})
        env = {**old_env, **{k: v for k, v in given.items() if k != "parameters"}}
        env["parameters"] = merged
        files = old_raw.files if files is None else {**old_raw.files, **files}
        template = old_raw.template if template in (None, "", {}) else template
    else:
        env = normalize_environment(environment, parameters)
        files = files or {}
    parsed = parse_template(template, files)
    definition = build_definition(parsed, environment=env, files=files, stack_name=stack.name,
                                  stack_id=str(stack.pk), project_id=stack.project_id)
    return definition, env, files
