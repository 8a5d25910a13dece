"""Intrinsic functions: resolving a template snippet to plain data.

A ``Resolver`` resolves one snippet against typed parameters and a resource
lookup. With no lookup (validation, previews) ``get_resource`` and
``get_attr`` yield ``UNRESOLVED``, and so does any function whose arguments
contain it. Argument and reference errors are raised as Heat's errors with
the path they occurred at, so the same pass validates a template.
"""
import hashlib
import itertools
import json
import math
import re

from heatweb.exceptions import InvalidTemplate, InvalidTemplateReference, \
    InvalidTemplateVersion, RequestLimitExceeded, StackValidationFailed, UserParameterMissing
from stacks.hot.cfn_functions import CfnFunctions
from stacks.hot.make_url import check_url_parts, make_url
from stacks.hot.values import UNRESOLVED, as_text, contains_unresolved, item_at, join_texts
from stacks.hot.yaql_expressions import YaqlError, evaluate, parse

__all__ = ["Budget", "Resolver", "contains_unresolved", "function_name", "references"]


def function_name(snippet, functions, removed=frozenset()):
    """The function a one-key mapping calls, or None for plain data.

    As in Heat, only the template version's own functions are calls: any
    other one-key mapping (``{get_input: x}`` in a software config, a
    workflow task named ``get_vm_id``) is data. A function the version
    removed is refused.
    """
    if not isinstance(snippet, dict) or len(snippet) != 1:
        return None
    (key,) = snippet
    if key in functions:
        return key
    if key in removed:
        raise InvalidTemplateVersion(
            explanation=f"The function {key} is not supported in this version of HOT.")
    return None


YAQL_ANSWERS_KEPT = 256  # yaql answers a template keeps
ITEM_SIZE = 8  # what one list item, map entry or scalar counts, besides its text


def value_size(value, limit):
    """Approximate size of ``value``: its text plus ITEM_SIZE per item (stops past ``limit``)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        total += ITEM_SIZE
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


class Budget:
    """What the functions of one evaluation may produce: each value, and all of them."""

    def __init__(self, *, per_value, total, yaql_seconds=5.0):
        self.per_value, self.total, self.spent = per_value, total, 0
        self.yaql_seconds, self.yaql_left = yaql_seconds, yaql_seconds

    def yaql_time(self, limits):
        """The seconds the next yaql evaluation may take (one's and all's budget)."""
        if self.yaql_left <= 0:
            raise YaqlError(f"the template's yaql expressions took more than "
                            f"{self.yaql_seconds:g} s together and were stopped.")
        return min(limits.seconds, self.yaql_left)

    def check(self, size, path):
        """Refuse a value of ``size`` before it is made."""
        if size > self.per_value:
            raise RequestLimitExceeded(
                f"{path}: the value would be larger than {self.per_value} bytes "
                f"(the budget of one function's value).")

    def charge(self, value, path):
        size = value_size(value, self.per_value)
        self.check(size, path)
        self.spent += size
        if self.spent > self.total:
            raise RequestLimitExceeded(
                f"{path}: the template's resolved values are larger than {self.total} bytes.")
        return value


class Resolver(CfnFunctions):
    """Resolves snippets of one template for one set of parameters and resources."""

    def __init__(self, template, params, lookup=None, budget=None, *, conditions=False):
        self.template = template
        self.params = params
        self.lookup = lookup
        table = template.functions
        # A condition is evaluated with the version's condition functions only, as in Heat.
        self.functions = table.conditions if conditions else table.functions
        self.in_conditions = conditions
        self.removed = table.removed
        self.budget = budget or template.budget()

    def resolve(self, snippet, path):
        name = function_name(snippet, self.functions, self.removed)
        if name is not None:
            handler = getattr(self, "fn_" + name.replace("::", "_").lower(), None)
            if handler is None:
                raise InvalidTemplate(f'{path}: the function "{name}" is not supported')
            result = handler(snippet[name], f"{path}.{name}")
            if result is UNRESOLVED or isinstance(result, (bool, int, float)) or result is None:
                return result
            return self.budget.charge(result, f"{path}.{name}")
        if isinstance(snippet, dict):
            return {k: self.resolve(v, f"{path}.{k}") for k, v in snippet.items()}
        if isinstance(snippet, list):
            return [self.resolve(v, f"{path}[{i}]") for i, v in enumerate(snippet)]
        return snippet

    def _args(self, args, path, *, kind, size=None):
        resolved = self.resolve(args, path)
        if resolved is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(resolved, kind) or (size and not size[0] <= len(resolved) <= size[1]):
            raise StackValidationFailed(f"{path}: Arguments to \"{path.rsplit('.', 1)[-1]}\" "
                                        f"are not valid")
        return resolved

    # References -----------------------------------------------------------------

    def fn_get_param(self, args, path):
        args = self.resolve(args, path)
        if contains_unresolved(args):
            return UNRESOLVED
        name, steps = (args, []) if isinstance(args, str) else (
            (args[0], args[1:]) if isinstance(args, list) and args else (None, None))
        if not isinstance(name, str):
            raise StackValidationFailed(f"{path}: Function \"get_param\" must have a parameter "
                                        f"name")
        if name not in self.params:
            where = path.removesuffix(".get_param")
            if where.startswith("resources.") and ".properties" in where:
                # Heat's GetParam: UserParameterMissing, as a property's error
                raise StackValidationFailed(f"Property error: : {where}: : The Parameter "
                                            f"({name}) was not provided.")
            if where.startswith("outputs."):
                raise UserParameterMissing(key=name)  # the output's error, on reading
            raise InvalidTemplateReference(resource=name, key=path)
        value = self.params[name]
        for step in steps:
            if value is UNRESOLVED:  # a parameter known at create only
                return UNRESOLVED
            value = item_at(value, step, path)
        return value

    def fn_get_resource(self, name, path):
        name = self.resolve(name, path)
        if not isinstance(name, str):
            raise StackValidationFailed(f"{path}: Argument to \"get_resource\" must be a string")
        if name not in self.template.resources:
            raise InvalidTemplateReference(resource=name, key=path)
        if self.lookup is None:
            return UNRESOLVED
        return self.lookup.get_reference_id(name)

    def fn_get_attr(self, args, path):
        args = self._args(args, path, kind=list, size=(1, 100))
        if args is UNRESOLVED or not args:
            return UNRESOLVED
        name = args[0]
        if not isinstance(name, str) or name not in self.template.resources:
            raise InvalidTemplateReference(resource=name, key=path)
        if self.lookup is None:
            return UNRESOLVED
        if len(args) == 1:
            return getattr(self.lookup, "get_attributes", lambda n: None)(name)
        return self.lookup.get_attribute(name, *args[1:])

    def fn_get_file(self, key, path):
        key = self.resolve(key, path)
        if not isinstance(key, str):
            raise StackValidationFailed(f"{path}: Argument to \"get_file\" must be a string")
        files = self.template.files
        if key not in files:
            raise InvalidTemplate(f'No content found in the "files" section for get_file path: '
                                  f'{key}')
        return files[key]

    # Strings and lists ---------------------------------------------------------------

    def fn_str_replace(self, args, path, strict=False):
        args = self._args(args, path, kind=dict)
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        template, params = args.get("template"), args.get("params")
        if not isinstance(template, str) or not isinstance(params, dict) or set(args) - {
                "template", "params"}:
            raise StackValidationFailed(f'{path}: "str_replace" needs "template" (a string) '
                                        f'and "params" (a mapping)')
        for key in params:
            if strict and str(key) not in template:
                raise StackValidationFailed(f'{path}: The following params were not found in '
                                            f'the template: {key}')
        keys = sorted((str(k) for k in params), key=len, reverse=True)
        if not keys:
            return template
        pattern = re.compile("|".join(re.escape(k) for k in keys))
        # As Heat's str_replace: a boolean is Python's text of it ("True"), a list or map
        # its JSON.
        values = {str(k): str(v) if isinstance(v, bool) else as_text(v)
                  for k, v in params.items()}
        growth = sum(len(values[m.group(0)]) - len(m.group(0)) for m in pattern.finditer(template))
        self.budget.check(len(template) + growth, path)
        return pattern.sub(lambda m: values[m.group(0)], template)

    def fn_str_replace_strict(self, args, path):
        return self.fn_str_replace(args, path, strict=True)

    fn_str_replace_vstrict = fn_str_replace_strict

    def fn_list_join(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 100))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        delim, *lists = args
        items = []
        for part in lists:
            if isinstance(part, str):
                part = json.loads(part) if part.startswith("[") else [part]
            if not isinstance(part, list):
                raise StackValidationFailed(f'{path}: "list_join" joins lists')
            items.extend(part)
        return join_texts(str(delim), items, self.budget, path)

    def fn_str_split(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 3))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        delim, text = str(args[0]), str(args[1])
        if not delim:
            raise StackValidationFailed(f'{path}: "str_split" needs a non-empty delimiter')
        # Refused before it is built: each part costs ITEM_SIZE whatever its length.
        count = text.count(delim) + 1
        self.budget.check(ITEM_SIZE * (count + 1) + len(text) - len(delim) * (count - 1), path)
        parts = text.split(delim)
        return item_at(parts, args[2], path) if len(args) == 3 else parts

    def fn_map_merge(self, args, path):
        args = self._args(args, path, kind=list)
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        if not all(isinstance(item, dict) for item in args):
            raise StackValidationFailed(f'{path}: "map_merge" merges mappings')
        # Refused before it is built: never larger than its mappings together.
        self.budget.check(sum(value_size(item, self.budget.per_value) for item in args), path)
        merged = {}
        for item in args:
            merged.update(item)
        return merged

    def fn_map_replace(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        source, spec = args
        if not isinstance(source, dict) or not isinstance(spec, dict):
            raise StackValidationFailed(f'{path}: "map_replace" takes a mapping and a spec')
        keys, values = spec.get("keys") or {}, spec.get("values") or {}
        return {keys.get(k, k): values.get(v, v) if isinstance(v, (str, int)) else v
                for k, v in source.items()}

    def fn_repeat(self, args, path):
        args = self._args(args, path, kind=dict)
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        for_each, template = args.get("for_each"), args.get("template")
        if not isinstance(for_each, dict) or template is None:
            raise StackValidationFailed(f'{path}: "repeat" needs "for_each" and "template"')
        names = list(for_each)
        lists = [for_each[n] if isinstance(for_each[n], list) else [] for n in names]
        permutations = args.get("permutations", True)
        count = math.prod(len(x) for x in lists) if permutations else min(map(len, lists),
                                                                          default=0)
        self.budget.check(count * value_size(template, self.budget.per_value), path)
        combos = itertools.product(*lists) if permutations else zip(*lists)
        out, size = [], 0
        for combo in combos:
            item = _substitute(template, dict(zip(names, combo)), self.budget, path)
            size += value_size(item, self.budget.per_value)
            self.budget.check(size, path)
            out.append(item)
        return out

    def fn_digest(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        algorithm, value = args
        if algorithm not in hashlib.algorithms_available:
            raise StackValidationFailed(f"{path}: Algorithm {algorithm} is not available")
        return hashlib.new(algorithm, str(value).encode()).hexdigest()

    def fn_list_concat(self, args, path, unique=False):
        args = self._args(args, path, kind=list)
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        if not all(isinstance(item, list) for item in args):
            raise StackValidationFailed(f'{path}: "list_concat" concatenates lists')
        self.budget.check(ITEM_SIZE * sum(len(item) for item in args), path)
        out, seen = [], set()
        for item in args:
            for value in item:
                if unique:
                    # A set of keys, not "value in out": linear, not quadratic.
                    key = _key(value)
                    if key in seen:
                        continue
                    seen.add(key)
                out.append(value)
        return out

    def fn_list_concat_unique(self, args, path):
        return self.fn_list_concat(args, path, unique=True)

    def fn_filter(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        remove, items = args
        if not isinstance(remove or [], list) or not isinstance(items or [], list):
            raise StackValidationFailed(f'{path}: "filter" takes a list of values to remove '
                                        f'and a list')
        removed = {_key(value) for value in remove or []}
        return [i for i in (items or []) if _key(i) not in removed]

    def fn_make_url(self, args, path):
        args = self._args(args, path, kind=dict)
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        problem = check_url_parts(args)
        if problem:
            raise StackValidationFailed(f"{path}: {problem}")
        return make_url(args)

    def fn_yaql(self, args, path):
        """Heat's yaql: ``expression`` evaluated on ``{"data": data}`` (see
        ``stacks.hot.yaql_expressions`` for its budgets). A literal expression is
        parsed even when its data is not known yet, as Heat's validate does."""
        if not isinstance(args, dict) or "expression" not in args or set(args) - {
                "expression", "data"}:
            raise StackValidationFailed(
                f'{path}: "yaql" syntax should be yaql:\n  expression: $.data.var1.sum()\n'
                f'  data:\n    var1: [3, 2, 1]')
        limits = self.template.limits.yaql
        try:
            if function_name(args["expression"], self.functions, self.removed) is None:
                parse(args["expression"], limits)
            expression = self.resolve(args["expression"], f"{path}.expression")
            data = self.resolve(args.get("data", {}), f"{path}.data")
            if contains_unresolved(expression) or contains_unresolved(data):
                return UNRESOLVED
            return self._yaql_answer(expression, data, limits)
        except YaqlError as error:
            raise StackValidationFailed(f"{path}: {error}") from None

    def _yaql_answer(self, expression, data, limits):
        # A template resolved again (validate, create, outputs) evaluates each once.
        answers = self.template.yaql_answers
        key = (expression, json.dumps(data, sort_keys=True, default=str))
        if key not in answers:
            seconds = self.budget.yaql_time(limits)
            spent = []  # the evaluation's CPU seconds (a wait for a core is not its cost)
            try:
                answer = evaluate(expression, data, limits, seconds=seconds, spent=spent)
            finally:
                self.budget.yaql_left -= sum(spent)
            if len(answers) >= YAQL_ANSWERS_KEPT:
                answers.pop(next(iter(answers)))
            answers[key] = answer
        return answers[key]

    FACADE_ATTRIBUTES = ("metadata", "deletion_policy", "update_policy")
    CFN_FACADE_ATTRIBUTES = {"Metadata": "metadata", "DeletionPolicy": "deletion_policy",
                             "UpdatePolicy": "update_policy"}

    def fn_resource_facade(self, args, path):
        """The parent resource's metadata, deletion_policy or update_policy (a provider
        template's view of the resource it implements); unknown until the stack runs
        as a child."""
        if args not in self.FACADE_ATTRIBUTES:
            raise StackValidationFailed(f'{path}: Incorrect arguments to "resource_facade" '
                                        f'should be one of: {", ".join(self.FACADE_ATTRIBUTES)}')
        facade = getattr(self.params, "facade", None)
        if facade is None:
            return UNRESOLVED
        return facade.get(args)

    def fn_fn_resourcefacade(self, args, path):
        """``Fn::ResourceFacade``: as resource_facade, with CFN's names (Metadata, ...)."""
        if args not in self.CFN_FACADE_ATTRIBUTES:
            raise StackValidationFailed(
                f'{path}: Incorrect arguments to "Fn::ResourceFacade" should be one of: '
                f'{", ".join(self.CFN_FACADE_ATTRIBUTES)}')
        return self.fn_resource_facade(self.CFN_FACADE_ATTRIBUTES[args], path)

    # Conditions ---------------------------------------------------------------------

    def fn_if(self, args, path):
        if not isinstance(args, list) or len(args) not in (2, 3):
            raise StackValidationFailed(f'{path}: Arguments to "if" must be of the form '
                                        f'[condition_name, value_if_true, value_if_false]')
        chosen = args[1] if self.template.condition_value(args[0], self.params, path) else (
            args[2] if len(args) == 3 else None)
        return self.resolve(chosen, path)

    def fn_equals(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if contains_unresolved(args):
            return UNRESOLVED  # a resource's value is not known before it exists
        return args[0] == args[1]

    def fn_not(self, args, path):
        return not self.template.condition_value(args, self.params, path)

    def fn_and(self, args, path):
        if not isinstance(args, list) or len(args) < 2:
            raise StackValidationFailed(f'{path}: "and" takes a list of at least 2 conditions')
        return all(self.template.condition_value(a, self.params, path) for a in args)

    def fn_or(self, args, path):
        if not isinstance(args, list) or len(args) < 2:
            raise StackValidationFailed(f'{path}: "or" takes a list of at least 2 conditions')
        return any(self.template.condition_value(a, self.params, path) for a in args)

    def fn_contains(self, args, path):
        args = self._args(args, path, kind=list, size=(2, 2))
        if args is UNRESOLVED or contains_unresolved(args):
            return UNRESOLVED
        return args[0] in (args[1] or [])


def _key(value):
    """A hashable stand-in for ``value`` that is equal when the values are."""
    if isinstance(value, (dict, list)):
        return ("json", json.dumps(value, sort_keys=True))
    return value


def _substitute(template, values, budget, path):
    if isinstance(template, str):
        for name, value in values.items():
            name, text = str(name), as_text(value)
            if name and name in template:
                budget.check(len(template) + template.count(name) * (len(text) - len(name)), path)
                template = template.replace(name, text)
        return template
    if isinstance(template, dict):
        return {_substitute(k, values, budget, path): _substitute(v, values, budget, path)
                for k, v in template.items()}
    if isinstance(template, list):
        return [_substitute(v, values, budget, path) for v in template]
    return template


def references(snippet, functions):
    """Names a snippet refers to with get_resource or get_attr (and ``Ref``, ``Fn::GetAtt``
    where the version has them).

    A ``Ref`` may name a parameter as well as a resource: the caller keeps the
    names that are resources.
    """
    found = set()
    stack = [snippet]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len(item) == 1:
                (key,) = item
                value = item[key]
                if key in ("get_resource", "Ref") and key in functions and \
                        isinstance(value, str):
                    found.add(value)
                elif key in ("get_attr", "Fn::GetAtt") and key in functions and \
                        isinstance(value, list) and value and isinstance(value[0], str):
                    found.add(value[0])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
