"""A parsed template (HOT, or CloudFormation's format read by ``cfn_template``):
sections, resource definitions, dependencies, outputs.

``Template.parse`` checks structure (version, sections, resource keys,
references in ``depends_on``, dependency cycles, limits) and nothing that
needs parameter values; ``validate`` resolves every snippet once with the
stack's parameters, which checks functions and references.
"""
import json
from collections.abc import Mapping
from dataclasses import dataclass

from heatweb.exceptions import CircularDependencyException, InvalidTemplate, \
    InvalidTemplateReference, InvalidTemplateVersion, RequestLimitExceeded, \
    ResourceTypeNotFound, StackValidationFailed, UserParameterMissing
from stacks.hot.cfn_template import CFN_VERSION_KEYS, PSEUDO_PARAMETERS, pseudo_parameters, \
    read_cfn
from stacks.hot.functions import Budget, Resolver, function_name, references
from stacks.hot.loader import Limits, inspect, load_text
from stacks.hot.parameters import PSEUDO, ParamSchema, Parameters, check_patterns_size
from stacks.hot.values import ReferenceOnRead
from stacks.hot.versions import has_conditions, version_info, version_names

SECTIONS = {"heat_template_version", "description", "parameter_groups", "parameters",
            "resources", "outputs", "conditions"}
RESOURCE_KEYS = {"type", "properties", "metadata", "depends_on", "deletion_policy",
                 "update_policy", "condition", "external_id"}
OUTPUT_KEYS = {"value", "description", "condition"}


@dataclass(frozen=True)
class ResourceDefinition:
    name: str
    type: str
    properties: object
    depends_on: tuple
    metadata: object = None
    deletion_policy: str = "Delete"
    update_policy: object = None
    condition: object = None
    external_id: object = None  # an existing object to adopt (stacks.resources.external)


class Template:
    """One template with its ``files``; immutable once parsed."""

    def __init__(self, raw, *, files=None, limits=Limits()):
        self.raw = raw
        self.files = files or {}
        self.limits = limits
        self.yaql_answers = {}
        self._check_structure()

    @classmethod
    def parse(cls, source, *, files=None, limits=Limits()):
        if isinstance(source, (str, bytes)):
            raw = load_text(source, limits)
        else:
            # The same measure as for text, so a stored template always parses again.
            inspect(source, limits)
            raw = source
        if not isinstance(raw, Mapping):
            raise InvalidTemplate("The template is not a JSON object or YAML mapping.")
        return cls(dict(raw), files=files, limits=limits)

    # Structure ---------------------------------------------------------------------

    def _check_structure(self):
        raw = self.raw
        present = [k for k in ("heat_template_version", *CFN_VERSION_KEYS) if k in raw]
        if len(present) > 1:
            raise InvalidTemplateVersion(explanation=f"Ambiguous versions ({', '.join(present)})")
        if present and present[0] in CFN_VERSION_KEYS:
            cfn = read_cfn(raw, present[0])
            self.format, self.version, self.functions = "cfn", cfn.version, cfn.functions
            self._sections, self.mappings = cfn.sections, cfn.mappings
            self.pseudo_names = PSEUDO_PARAMETERS
        else:
            self._check_hot_version()
        self.description = self._sections.get("description") or ""
        self.resources = self._section("resources")
        self.outputs = self._section("outputs")
        self.conditions = self._section("conditions")
        self.parameter_groups = self._sections.get("parameter_groups") or []
        if not isinstance(self.parameter_groups, list):
            raise InvalidTemplate("parameter_groups should be a list")
        self.param_schemas = {
            name: ParamSchema.from_template(name, data, max_depth=self.limits.max_nesting,
                                            max_bytes=self.limits.max_value_bytes)
            for name, data in self._section("parameters").items()}
        check_patterns_size(self.param_schemas)
        if len(self.resources) > self.limits.max_resources:
            raise RequestLimitExceeded(
                f"Maximum resources per stack exceeded ({len(self.resources)} > "
                f"{self.limits.max_resources}).")
        self._check_parameter_groups()
        # Once, not per resource: a set of every resource name per resource made the
        # parse of a 10,000-member group's template O(N^2) (seconds).
        self._parameters_only = (set(self.param_schemas) | set(self.pseudo_names)) - \
            set(self.resources)
        self.dependencies = {name: self._dependencies(name, data)
                             for name, data in self.resources.items()}
        self._check_cycles()
        for name, data in self.outputs.items():
            if not isinstance(data, Mapping) or "value" not in data:
                raise InvalidTemplate(f"Each output definition must contain a value key "
                                      f"(output {name}).")
            unknown = set(data) - OUTPUT_KEYS
            if unknown:
                raise InvalidTemplate(f'"{sorted(unknown)[0]}" is not a valid keyword inside '
                                      f'an output definition')

    def _check_hot_version(self):
        raw = self.raw
        if "heat_template_version" not in raw:
            raise InvalidTemplateVersion(explanation="Template version was not provided")
        info = version_info(raw["heat_template_version"])
        if info is None:
            raise InvalidTemplateVersion(explanation=(
                f'"heat_template_version: {raw["heat_template_version"]}". '
                f'"heat_template_version" should be one of: {", ".join(version_names())}'))
        self.format = "hot"
        self.version, self.functions = info
        for section in raw:
            if section not in SECTIONS or (section == "conditions"
                                           and not has_conditions(self.version)):
                raise InvalidTemplate(f"The template section is invalid: {section}")
        self._sections, self.mappings, self.pseudo_names = raw, {}, PSEUDO

    def _section(self, name):
        value = self._sections.get(name)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InvalidTemplate(f'The "{name}" section must be a mapping')
        return dict(value)

    def _check_parameter_groups(self):
        seen = set()
        for group in self.parameter_groups:
            params = group.get("parameters") if isinstance(group, Mapping) else None
            if not isinstance(params, list):
                raise StackValidationFailed("Parameters must be provided for each Parameter "
                                            "Group.")
            for param in params:
                if param not in self.param_schemas:
                    raise StackValidationFailed(f"The grouped parameter {param} does not "
                                                f"reference a valid parameter.")
                if param in seen:
                    raise StackValidationFailed(f"The {param} parameter must be assigned to "
                                                f"one parameter group only.")
                seen.add(param)

    def _dependencies(self, name, data):
        if not isinstance(data, Mapping):
            raise InvalidTemplate(f"Resource {name} is not a mapping")
        unknown = set(data) - RESOURCE_KEYS
        if unknown:
            raise InvalidTemplate(f'"{sorted(unknown)[0]}" is not a valid keyword inside a '
                                  f'resource definition')
        if not isinstance(data.get("type"), str) or not data["type"]:
            raise InvalidTemplate(f'Resource {name}: "type" must be a string')
        explicit = data.get("depends_on") or []
        explicit = [explicit] if isinstance(explicit, str) else explicit
        if not isinstance(explicit, list) or not all(isinstance(d, str) for d in explicit):
            raise InvalidTemplate(f"Resource {name}: depends_on must be a name or a list of "
                                  f"names")
        key = "DependsOn" if self.format == "cfn" else "depends_on"
        for dep in explicit:
            if dep not in self.resources:
                raise InvalidTemplateReference(resource=dep, key=f"{name}.{key}")
        implicit = references([data.get("properties"), data.get("metadata")],
                              self.functions.functions)
        implicit -= self._parameters_only  # a Ref to a parameter or a pseudo parameter
        for dep in implicit:
            if dep not in self.resources:
                raise InvalidTemplateReference(resource=dep, key=f"resources.{name}")
        return tuple(sorted(set(explicit) | implicit))

    def _check_cycles(self):
        state = {}
        for start in self.dependencies:
            if start in state:
                continue
            path, stack = [], [(start, iter(self.dependencies[start]))]
            state[start] = "open"
            path.append(start)
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    state[node] = "done"
                    stack.pop()
                    path.pop()
                elif state.get(child) == "open":
                    cycle = path[path.index(child):] + [child]
                    raise CircularDependencyException(cycle=", ".join(cycle))
                elif child not in state:
                    state[child] = "open"
                    path.append(child)
                    stack.append((child, iter(self.dependencies[child])))

    # Parameters and conditions ------------------------------------------------------------

    def parameters(self, values, *, stack_name=None, stack_id=None, project_id=None):
        pseudo = pseudo_parameters(stack_name=stack_name, stack_id=stack_id,
                                   project_id=project_id) if self.format == "cfn" else None
        return Parameters(self.param_schemas, values or {}, stack_name=stack_name,
                          stack_id=stack_id, project_id=project_id, pseudo=pseudo)

    def condition_value(self, condition, params, path, _seen=()):
        """True or False for a condition name or an inline condition expression."""
        if isinstance(condition, bool):
            return condition
        if isinstance(condition, str):
            if condition not in self.conditions:
                raise StackValidationFailed(f'{path}: Invalid condition "{condition}"')
            if condition in _seen:
                raise StackValidationFailed(f'{path}: condition "{condition}" refers to itself')
            return self.condition_value(self.conditions[condition], params,
                                        f"conditions.{condition}", (*_seen, condition))
        name = function_name(condition, self.functions.conditions, self.functions.removed)
        if name is None:
            raise StackValidationFailed(f"{path}: Invalid condition {json.dumps(condition)}")
        return bool(Resolver(self, params, conditions=True).resolve(condition, path))

    def enabled(self, data, params, path):
        condition = data.get("condition") if isinstance(data, Mapping) else None
        return True if condition is None else self.condition_value(condition, params, path)

    # Resolution ---------------------------------------------------------------------------

    def budget(self):
        """A fresh budget for the values one evaluation may produce (``Limits``)."""
        return Budget(per_value=self.limits.max_value_bytes,
                      total=self.limits.max_resolved_bytes,
                      yaql_seconds=self.limits.yaql.total_seconds)

    def resolve(self, snippet, params, lookup, path="template", *, budget=None):
        return Resolver(self, params, lookup, budget).resolve(snippet, path)

    def validate(self, params, *, resource_type_exists, known=None):
        """Check types, functions and references of every section for these parameters.

        ``known``: the parameters as resources and outputs see them, when some values are
        stand-ins (a validate without them: UNRESOLVED there, so a path into one is not
        taken, as Heat's validate does not resolve them). One budget covers the whole
        template, so the sum of everything its functions produce is bounded too.
        """
        budget = self.budget()
        known = params if known is None else known
        for name in self.conditions:
            self.condition_value(name, params, f"conditions.{name}")
        definitions = self.resource_definitions(params)
        for name, data in self.resources.items():
            if not resource_type_exists(data["type"]):
                raise ResourceTypeNotFound(type_name=data["type"])
            if name in definitions:
                for section in ("properties", "metadata"):
                    self.resolve(data.get(section), known, None,
                                 f"resources.{name}.{section}", budget=budget)
        for name, data in self.outputs.items():
            if self.enabled(data, params, f"outputs.{name}"):
                try:
                    self.resolve(data["value"], known, None, f"outputs.{name}", budget=budget)
                except (UserParameterMissing, ReferenceOnRead):
                    pass  # as Heat: outputs resolve lazily; reading shows its output_error

    def resource_definitions(self, params):
        """The enabled resources' definitions, in template order."""
        enabled = {name for name, data in self.resources.items()
                   if self.enabled(data, params, f"resources.{name}")}
        return {name: ResourceDefinition(
            name=name, type=data["type"], properties=data.get("properties") or {},
            depends_on=tuple(d for d in self.dependencies[name] if d in enabled),
            metadata=data.get("metadata"), deletion_policy=data.get("deletion_policy", "Delete"),
            update_policy=data.get("update_policy"), condition=data.get("condition"),
            external_id=data.get("external_id"))
            for name, data in self.resources.items() if name in enabled}

    def resolve_outputs(self, params, lookup):
        """Heat's output list; an output that cannot be resolved carries ``output_error``."""
        outputs = []
        for key, data in self.outputs.items():
            entry = {"output_key": key, "description": data.get("description") or "No description given"}
            try:
                entry["output_value"] = (self.resolve(data["value"], params, lookup,
                                                      f"outputs.{key}")
                                         if self.enabled(data, params, f"outputs.{key}") else None)
            except Exception as error:  # noqa: BLE001 - shown to the user as the output's error
                entry["output_value"] = None
                entry["output_error"] = getattr(error, "message", str(error))
            outputs.append(entry)
        return outputs
