"""From request input to a validated stack definition, and its per-process cache.

A ``StackDefinition`` is everything the engine needs to converge a stack to
one template version: the parsed template, typed parameters, resource
definitions and the plugin class of each. Building one validates the whole
request; nothing is stored before it succeeds.
"""
import dataclasses
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from django.conf import settings

from heatweb.exceptions import BadRequest, HeatError, InvalidTemplate, RequestLimitExceeded, \
    ResourceTypeNotFound, ResourceTypeUnavailable, StackValidationFailed
from stacks.hot import UNRESOLVED, Template, load_text
from stacks.hot.environment_files import merge_environment_files, parameter_types
from stacks.hot.hooks import check_hooks
from stacks.hot.environment import child_environment
from stacks.hot.functions import contains_unresolved
from stacks.hot.loader import check_size
from stacks.resources import registry
from stacks.resources.external import check_external, external_plugin
from stacks.resources.unavailable import check_extension
from stacks.resources.stack import TemplateResource
from stacks.template_limits import limits

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
    check_hooks(environment.get("resource_registry"))
    if parameters is not None and not isinstance(parameters, dict):
        raise BadRequest("parameters must be a mapping.")
    merged = dict(environment.get("parameters") or {})
    merged.update(parameters or {})
    environment["parameters"] = merged
    return environment


def request_environment(environment, parameters, *, environment_files=None, files=None,
                        template=None):
    """The environment a request gives: its ``environment`` with its ``parameters``, or,
    when it names ``environment_files``, those files of ``files`` merged in order after its
    ``parameters`` (its ``environment`` ignored, as Heat's API does;
    ``stacks.hot.environment_files``). ``template``: the request's (or, for a PATCH, the
    stack's), whose parameters and those of the files' templates the merge takes."""
    if not environment_files:
        return normalize_environment(environment, parameters)
    if parameters is not None and not isinstance(parameters, dict):
        raise BadRequest("parameters must be a mapping.")
    check_files(files or {})

    def load(text):
        return load_text(text, limits(), what="environment",
                         limit=settings.HEATWEB["MAX_ENVIRONMENT_BYTES"]) \
            if isinstance(text, str) else text

    env = merge_environment_files(environment_files, files or {}, parameters,
                                  parameter_types(template, files, load), load)
    _check_environment_size(env)
    check_hooks(env.get("resource_registry"))
    return env


def registry_mapping(registry_section, type_name):
    """What a resource_registry maps ``type_name`` to: its own entry, else the first
    glob entry whose prefix it has (``"OS::Networking::*": "OS::Neutron::*"`` maps
    ``OS::Networking::Net`` to ``OS::Neutron::Net``, as Heat's); None when unmapped."""
    mapped = registry_section.get(type_name)
    if mapped is not None:
        return mapped
    for pattern, target in registry_section.items():
        if isinstance(pattern, str) and pattern.endswith("*") and isinstance(target, str) \
                and target.endswith("*") and type_name.startswith(pattern[:-1]):
            return target[:-1] + type_name[len(pattern) - 1:]
    return None


# Heat's global environment (its etc/heat/environment.d/default.yaml): the aliases every
# stack's resource_registry falls back to, so older templates keep working.
GLOBAL_REGISTRY = {
    "OS::Quantum*": "OS::Neutron*",
    # "AWS::CloudWatch::Alarm" (Heat's maps it to a template of one OS::Aodh::Alarm) and
    # "AWS::RDS::DBInstance" are template resources of their own (aws_cloudwatch.py,
    # aws_rds.py) on heatweb's own templates.
    "OS::Metering::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::GnocchiResourcesAlarm": "OS::Aodh::GnocchiResourcesAlarm",
    "OS::Ceilometer::GnocchiAggregationByMetricsAlarm":
        "OS::Aodh::GnocchiAggregationByMetricsAlarm",
    "OS::Ceilometer::GnocchiAggregationByResourcesAlarm":
        "OS::Aodh::GnocchiAggregationByResourcesAlarm",
    "OS::Ceilometer::CombinationAlarm": "OS::Aodh::CombinationAlarm",
}


def plugin_class_for_type(type_name, environment, files):
    """The plugin class for a type, after the environment's resource_registry, then
    Heat's global one (``GLOBAL_REGISTRY``)."""
    mapped = registry_mapping(environment.get("resource_registry") or {}, type_name)
    if isinstance(mapped, str):
        type_name = mapped
    if not registry.has_type(type_name) and type_name not in files:
        alias = registry_mapping(GLOBAL_REGISTRY, type_name)
        if alias:
            try:
                return registry.get_plugin(alias)
            except ResourceTypeUnavailable as error:  # named as written, as Heat names it
                raise ResourceTypeUnavailable(
                    service_name=error.kwargs["service_name"], resource_type=type_name,
                    reason=error.kwargs["reason"]) from None
    if type_name in files and not registry.has_type(type_name):
        return TemplateResource.for_file(type_name, files[type_name])
    return registry.get_plugin(type_name)


def build_definition(template, *, environment, files=None, stack_name=None, stack_id=None,
                     project_id=None, strict=True, facade=None, unknown=(), nested=True):
    """Validate everything and return a StackDefinition (raises HeatError).

    ``nested`` (with ``strict``): the templates of template resources, and of group
    members that are template resources, are looked into (``validate_nested_types``), as
    Heat's create validates the nested stacks; Heat's ``/validate`` does not.

    ``facade``: the parent resource's ``metadata``, ``deletion_policy`` and
    ``update_policy`` that ``resource_facade`` answers in a child stack.
    ``unknown``: parameters whose values are stand-ins (a validate without them); the
    properties they give are not checked, as Heat's validate leaves them unchecked.
    """
    files = files or {}
    if not isinstance(template, Template):
        template = parse_template(template, files)
    values = dict(environment.get("parameter_defaults") or {})
    values = {k: v for k, v in values.items() if k in template.param_schemas}
    values.update(environment.get("parameters") or {})
    params = template.parameters(values, stack_name=stack_name, stack_id=stack_id,
                                 project_id=project_id)
    params.facade = facade
    known_params = {**params, **{n: UNRESOLVED for n in unknown}} if unknown else params
    template.validate(params, resource_type_exists=lambda t: _type_exists(t, environment, files),
                      known=known_params)
    defs = template.resource_definitions(params)
    plugins = {}
    for name, defn in defs.items():
        plugin = plugin_class_for_type(defn.type, environment, files)
        if defn.external_id is not None:
            plugins[name] = external_plugin(plugin, check_external(
                template.resolve(defn.external_id, params, None), resource_name=name,
                type_name=defn.type,
                depends_on=template.resources[name].get("depends_on")))
            continue  # an external resource's properties are not used (Heat)
        plugins[name] = plugin
        if strict:
            raw = template.resolve(defn.properties, known_params, None)
            if raw is not None and not isinstance(raw, dict):
                raise StackValidationFailed(
                    f"Property error: resources.{name}.properties: must be a mapping")
            props = plugin.validate_properties(raw or {}, resource_name=name)
            plugin.validate_with_files(props, files=files, resource_name=name)
            policy = template.resolve(defn.update_policy, known_params, None)
            if not contains_unresolved(policy):
                plugin.validate_update_policy(policy, resource_name=name)
            _validate_members(plugin, props, environment=environment, files=files,
                              resource_name=name, nested=nested)
            if nested:
                validate_nested_types(plugin, environment=environment, files=files,
                                      resource_name=name, path=f"resources.{name}")
    defs = with_implicit_dependencies(template, params, defs, plugins)
    return StackDefinition(template=template, environment=environment, params=params,
                           resources=defs, plugins=plugins)


class NamesLookup:
    """Resource values as Heat sees them before anything exists: a reference is the
    resource's name, an attribute is None."""

    def get_reference_id(self, name):
        return name

    def get_attribute(self, name, *path):
        return None


def with_implicit_dependencies(template, params, defs, plugins):
    """``defs`` with each plugin's ``implicit_depends_on`` added to its ``depends_on``
    (an edge that would close a cycle is left out)."""
    resolved = {}

    def properties_of(name):
        if name not in resolved:
            try:
                value = template.resolve(defs[name].properties, params, NamesLookup())
            except HeatError:
                value = None
            resolved[name] = value if isinstance(value, dict) else {}
        return resolved[name]

    graph = {name: set(defn.depends_on) for name, defn in defs.items()}
    changed = False
    for name, plugin in plugins.items():
        for dep in plugin.implicit_depends_on(name, defs, properties_of):
            if dep in defs and dep != name and dep not in graph[name] and \
                    not _reaches(graph, dep, name):
                graph[name].add(dep)
                changed = True
    if not changed:
        return defs
    return {name: dataclasses.replace(defn, depends_on=tuple(sorted(graph[name])))
            for name, defn in defs.items()}


def _reaches(graph, start, target):
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == target:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(graph.get(node, ()))
    return False


def _validate_members(plugin, properties, *, environment, files, resource_name, nested):
    """The resources a plugin will put in its child stack, checked as the child will check them.

    A child stack gets the parent's files and environment (``child_environment``), so
    its types are resolved with the parent's resource_registry.
    """
    env = child_environment(environment, resource_name=resource_name)
    for member, (type_name, member_properties) in plugin.member_definitions(properties).items():
        member_class = plugin_class_for_type(type_name, env, files)
        member_class.validate_properties(member_properties,
                                         resource_name=f"{resource_name}.{member}")
        if nested:
            validate_nested_types(member_class, environment=env, files=files,
                                  resource_name=member,
                                  path=f"resources.{resource_name}<nested_stack>."
                                       f"resources.{member}")


def validate_nested_types(plugin, *, environment, files, resource_name, path, seen=()):
    """Heat's ``validate_nested_stack`` at a create, for what a template can tell before
    anything exists: every type of a template resource's template (and of the template
    resources in it) is one this cloud has. An unknown type, or one whose service the
    catalog lacks, is the parent's 400 with Heat's path
    (``ResourceTypeUnavailable: resources.servers<nested_stack>.resources.m0<server.yaml>:
    HEAT-E99001 ...``). A resource under a ``condition`` may not exist: not looked at.
    """
    if not issubclass(plugin, TemplateResource) or not plugin.template_body \
            or plugin.template_file in seen:
        return
    where = f"{path}<{plugin.template_file}>"
    env = child_environment(environment, resource_name=resource_name,
                            template_file=plugin.template_file)
    for name, type_name in plugin.nested_types():
        try:
            member = plugin_class_for_type(type_name, env, files)
            check_extension(member, type_name)
        except (ResourceTypeNotFound, ResourceTypeUnavailable) as error:
            raise StackValidationFailed(f"{error.error_type}: {where}: {error.message}") \
                from None
        validate_nested_types(member, environment=env, files=files, resource_name=name,
                              path=f"{where}.resources.{name}",
                              seen=(*seen, plugin.template_file))


def _type_exists(type_name, environment, files):
    try:
        check_extension(plugin_class_for_type(type_name, environment, files), type_name)
    except ResourceTypeUnavailable:
        raise  # known, but its service is missing: Heat's own answer, not "not found"
    except Exception:  # ResourceTypeNotFound
        return False
    return True


class _DefinitionCache:
    """Raw templates never change, so each process keeps their definitions, the most
    recently used first: at most ``size`` of them, with at most ``weight`` resources,
    outputs and parameters in all (the newest is kept whatever its weight).

    Every stack show and resource list asks for its stack's definition, and
    building one (parsing, checking and resolving the template) cost about a
    third of the CPU of those reads (docs/benchmarks.md, bench_api): the stacks
    being read and polled stay here. A definition of a small template takes ~4
    KB besides its template's own data; the weight bounds the memory of large
    ones.
    """

    def __init__(self, size=1024, weight=10000):
        self.size = size
        self.weight = weight
        self.weights = {}  # key -> the weight of its definition
        self.total = 0
        self.items = OrderedDict()
        self.lock = threading.Lock()
        # ``(stack) -> InputLookup`` of a stack's stored resources: a child's facade
        # resolves its parent's references with it. Registered at start (StacksConfig.ready:
        # ``stacks.selectors.stored_lookup``), as the lookup is made of plugins, above here.
        self.stored_lookup = None

    def stored_lookup_register(self, lookup):
        self.stored_lookup = lookup

    def get(self, stack):
        """The stack's definition; its raw template is read only when it is not cached."""
        key = (stack.raw_template_id, str(stack.pk))
        hit = self.items.get(key)
        if hit is None:
            raw_template = stack.raw_template
            hit = build_definition(
                raw_template.template, environment=raw_template.environment,
                files=raw_template.files, stack_name=stack.name, stack_id=str(stack.pk),
                project_id=stack.project_id, strict=False, facade=self._facade(stack))
            self._keep(key, hit)
        else:
            with self.lock:
                if key in self.items:
                    self.items.move_to_end(key)
        return hit

    def _keep(self, key, definition):
        weight = 1 + len(definition.resources) + len(definition.template.outputs) + \
            len(definition.template.param_schemas)
        with self.lock:  # a web worker's threads share the cache
            if key in self.items:  # another thread built it meanwhile
                self.items.move_to_end(key)
                return
            self.items[key] = definition
            self.weights[key] = weight
            self.total += weight
            while len(self.items) > 1 and (len(self.items) > self.size
                                           or self.total > self.weight):
                self.total -= self.weights.pop(self.items.popitem(last=False)[0])

    def _facade(self, stack):
        """What ``resource_facade`` answers in a child stack: its parent resource's
        metadata, deletion and update policy, resolved as the parent resolves them (its
        parameters, and the stored references and attributes of the parent's resources
        they name: those are made before the resource that holds the child)."""
        if not stack.parent_id or not stack.parent_resource_name:
            return None
        parent = self.get(stack.parent)
        defn = parent.resources.get(stack.parent_resource_name)
        if defn is None:
            return None

        def resolved(snippet, section):
            where = f"resources.{defn.name}.{section}"
            try:
                value = parent.template.resolve(snippet, parent.params, None, where)
                if contains_unresolved(value):  # get_resource/get_attr: their stored data
                    value = parent.template.resolve(snippet, parent.params,
                                                    self.stored_lookup(stack.parent), where)
            except HeatError:
                return None
            return None if contains_unresolved(value) else value

        return {"metadata": resolved(defn.metadata, "metadata") or {},
                "deletion_policy": defn.deletion_policy or "Delete",
                "update_policy": resolved(defn.update_policy, "update_policy") or {}}


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
