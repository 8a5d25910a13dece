"""Template parameters: schemas, constraints and typed values.

A ``ParamSchema`` is one entry of a template's ``parameters`` section. It
turns user input into a typed value ("5" for a number is 5) and checks the
constraints, whose ``description`` becomes the error message. ``Parameters``
is the typed mapping a stack resolves ``get_param`` from, pseudo
parameters (``OS::stack_name``...) included.
"""
import contextvars
import functools
import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import regex

try:  # Python's own reader of regular expressions (what Heat's patterns are written for)
    from re import _constants as sre_constants, _parser as sre_parse
except ImportError:  # Python < 3.11
    import sre_constants
    import sre_parse

from heatweb.exceptions import BadRequest, InvalidTemplate, RequestLimitExceeded, \
    StackValidationFailed, UnknownUserParameter, UserParameterMissing
from heatweb.inputs import load_json
from stacks.hot.functions import ITEM_SIZE, value_size

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_BYTES = 1024 * 1024

TYPES = {"string": "String", "number": "Number", "json": "Json",
         "comma_delimited_list": "CommaDelimitedList", "boolean": "Boolean"}
SCHEMA_KEYS = {"type", "default", "hidden", "label", "description", "constraints", "immutable",
               "updatable", "tags"}
CONSTRAINT_KEYS = {"length", "range", "modulo", "allowed_values", "allowed_pattern",
                   "custom_constraint"}
PSEUDO = ("OS::stack_name", "OS::stack_id", "OS::project_id")
_TRUE = {"true", "t", "yes", "y", "on", "1"}
_FALSE = {"false", "f", "no", "n", "off", "0"}


class ParameterValueError(ValueError):
    """A value that does not fit the parameter's type or constraints."""


def parse_number(value):
    """An int or float from a number or its text (booleans are not numbers); ValueError else."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        number = value
    else:
        text = str(value).strip()
        number = int(text) if re.fullmatch(r"[-+]?\d{1,4000}", text) else float(text)
    # nan compares false with every bound, inf passes every max: neither is a number here.
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(value)
    return number


def _number(value):
    try:
        return parse_number(value)
    except ValueError:
        raise ParameterValueError(f"Value '{value}' is not a number") from None


PATTERN_SECONDS = 0.1  # what one allowed_pattern match may take before it counts as no match
PATTERNS_SECONDS = 1.0  # what all the matches of one set of parameters may take
# How large the allowed_patterns of one template may be, together, once their fixed
# repetitions are written out: ``regex`` expands ``(a{1000}){1000}`` when it compiles
# it (a million items, seconds), and compiling cannot be stopped.
MAX_PATTERN_SIZE = 30_000
_PATTERN_DEADLINE = contextvars.ContextVar("pattern_deadline", default=None)
_REPEATS = {getattr(sre_constants, name) for name in (
    "MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(sre_constants, name)}


def _expanded_size(items):
    """What ``regex`` would write out of a parsed pattern (fixed repeats multiplied out)."""
    total = 0
    for op, arg in items:
        if op in _REPEATS:
            low, _high, sub = arg
            total += max(low, 1) * _expanded_size(sub) + 1
        elif op == sre_constants.SUBPATTERN:
            total += _expanded_size(arg[-1]) + 1
        elif op == sre_constants.BRANCH:
            total += sum(_expanded_size(branch) for branch in arg[1]) + 1
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _expanded_size(arg[1]) + 1
        elif op == sre_constants.GROUPREF_EXISTS:
            total += sum(_expanded_size(b) for b in arg[1:] if b is not None) + 1
        else:
            total += 1
        if total > MAX_PATTERN_SIZE:
            break
    return total


def _too_large():
    return ValueError(f"the pattern is larger than {MAX_PATTERN_SIZE} items once its "
                      f"repetitions are expanded")


@functools.lru_cache(maxsize=256)
def pattern_size(pattern):
    """The size of ``pattern`` once compiled, read with Python's ``re`` (Heat's patterns
    are Python's); ValueError for a pattern it does not read, or too large."""
    if len(pattern) > 2 * MAX_PATTERN_SIZE:  # every item is at most 2 characters
        raise _too_large()
    try:
        size = _expanded_size(sre_parse.parse(pattern))
    except (re.error, OverflowError, RecursionError) as error:
        raise ValueError(str(error)) from None
    if size > MAX_PATTERN_SIZE:
        raise _too_large()
    return size


def check_patterns_size(schemas):
    """Refuse a template whose allowed_patterns together are too large to compile quickly."""
    total = sum(pattern_size(c.spec) for schema in schemas.values()
                for c in schema.constraints if c.kind == "allowed_pattern")
    if total > MAX_PATTERN_SIZE:
        raise InvalidTemplate(f"The allowed_patterns of the template are larger than "
                              f"{MAX_PATTERN_SIZE} items together once their repetitions "
                              f"are expanded")


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern):
    """``pattern`` as Heat reads it: a Python regular expression (look-arounds and
    back-references included), run by the ``regex`` package, which can stop a
    match after a time budget. ValueError when ``pattern_size`` refuses it.
    """
    pattern_size(pattern)
    try:
        return regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, OverflowError, RecursionError) as error:
        raise ValueError(str(error)) from None


def pattern_matches(pattern, text):
    """Heat's test: the pattern matches at the start and reaches the end of ``text``.

    A match that takes longer than PATTERN_SECONDS (or than what is left of the
    PATTERNS_SECONDS of the parameters being read) is stopped and raises
    ParameterValueError, so no pattern can hold a process.
    """
    seconds = PATTERN_SECONDS
    deadline = _PATTERN_DEADLINE.get()
    if deadline is not None:
        seconds = min(seconds, deadline - time.monotonic())
    try:
        if seconds <= 0:
            raise TimeoutError
        match = compile_pattern(pattern).match(text, timeout=seconds)
    except ValueError as error:
        raise ParameterValueError(f'allowed_pattern "{pattern}" cannot be used: '
                                  f'{error}') from None
    except TimeoutError:
        raise ParameterValueError(
            f'"{text}" does not match pattern "{pattern}" (the match took longer than '
            f'{PATTERN_SECONDS} s and was stopped)') from None
    return match is not None and match.end() == len(text)


def _list_size(value):
    """``value_size`` of a comma_delimited_list's value, counted before it is split."""
    if isinstance(value, list):
        return None
    text = str(value)
    return len(text) + ITEM_SIZE * (text.count(",") + 2)


def _coerce(kind, value, max_depth=DEFAULT_MAX_DEPTH):
    if kind == "number":
        return _number(value)
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ParameterValueError(f"Unrecognized value '{value}', acceptable values are: "
                                  "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', "
                                  "'y', 'yes'")
    if kind == "json":
        if isinstance(value, (dict, list)):
            return value
        try:
            parsed = load_json(value, max_depth=max_depth, max_nodes=10 * len(value) + 10,
                               what="json parameter") if isinstance(value, str) else None
        except BadRequest as error:
            raise ParameterValueError(f"Value must be valid JSON: {error.message}") from None
        if not isinstance(parsed, (dict, list)):
            raise ParameterValueError(f"Value must be valid JSON: {value}")
        return parsed
    if kind == "comma_delimited_list":
        if isinstance(value, list):
            return [str(v) if not isinstance(v, str) else v for v in value]
        text = str(value)
        return [item.strip() for item in text.split(",")] if text else []
    if isinstance(value, (dict, list)):
        raise ParameterValueError(f"Value must be a string; got {json.dumps(value)}")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Constraint:
    kind: str
    spec: object
    description: str | None = None

    def check(self, value, param_type):
        message = self._failure(value, param_type)
        if message:
            raise ParameterValueError(self.description or message)

    def _failure(self, value, param_type):
        spec = self.spec
        if self.kind in ("length", "range"):
            low, high = spec.get("min"), spec.get("max")
            measured = len(value) if self.kind == "length" else value
            if (low is not None and measured < low) or (high is not None and measured > high):
                what = "length" if self.kind == "length" else "value"
                return f"{what} must be in the range {low} to {high}" if None not in (low, high) \
                    else (f"{what} must be at least {low}" if low is not None
                          else f"{what} must be no greater than {high}")
        elif self.kind == "modulo":
            step, offset = spec.get("step"), spec.get("offset", 0)
            if step and value % step != offset:
                return f"{value} is not a multiple of {step} with an offset of {offset}"
        elif self.kind == "allowed_values":
            items = value if param_type == "comma_delimited_list" else [value]
            allowed = [str(a) for a in spec] if param_type == "string" else spec
            if any(i not in allowed for i in items):
                return f'"{value}" is not an allowed value {spec}'
        elif self.kind == "allowed_pattern":
            if not pattern_matches(spec, str(value)):
                return f'"{value}" does not match pattern "{spec}"'
        return None

    def to_heat(self, out):
        if self.kind == "length":
            out.update({k: v for k, v in (("MinLength", self.spec.get("min")),
                                          ("MaxLength", self.spec.get("max"))) if v is not None})
        elif self.kind == "range":
            out.update({k: v for k, v in (("MinValue", self.spec.get("min")),
                                          ("MaxValue", self.spec.get("max"))) if v is not None})
        elif self.kind == "allowed_values":
            out["AllowedValues"] = self.spec
        elif self.kind == "allowed_pattern":
            out["AllowedPattern"] = self.spec
        elif self.kind == "custom_constraint":
            out["CustomConstraint"] = self.spec
        elif self.kind == "modulo":
            out.update({k: v for k, v in (("Step", self.spec.get("step")),
                                          ("Offset", self.spec.get("offset"))) if v is not None})
        if self.description:  # Heat joins the descriptions of all constraints
            out["ConstraintDescription"] = " ".join(
                filter(None, (out.get("ConstraintDescription"), self.description)))


@dataclass
class ParamSchema:
    name: str
    type: str
    default: object = None
    hidden: bool = False
    immutable: bool = False
    label: str | None = None
    description: str = ""
    constraints: list = field(default_factory=list)
    max_depth: int = DEFAULT_MAX_DEPTH
    max_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def from_template(cls, name, data, *, max_depth=DEFAULT_MAX_DEPTH,
                      max_bytes=DEFAULT_MAX_BYTES):
        if not isinstance(data, Mapping):
            raise InvalidTemplate(f"Invalid parameter {name}: the schema must be a mapping")
        unknown = set(data) - SCHEMA_KEYS
        if unknown:
            raise InvalidTemplate(f'Invalid key \'{sorted(unknown)[0]}\' for parameter ({name})')
        kind = data.get("type")
        if kind not in TYPES:
            raise InvalidTemplate(f'Invalid type ({kind}) for parameter ({name}); '
                                  f'must be one of {", ".join(TYPES)}')
        schema = cls(name=name, type=kind, hidden=bool(data.get("hidden", False)),
                     immutable=_immutable(name, data),
                     label=data.get("label"), description=data.get("description") or "",
                     constraints=[_constraint(name, kind, c) for c in data.get("constraints") or []],
                     max_depth=max_depth, max_bytes=max_bytes)
        if data.get("default") is not None:
            try:
                schema.default = schema.coerce(data["default"])
            except StackValidationFailed as error:
                raise InvalidTemplate(f"Invalid default for parameter {name}: "
                                      f"{error.message}") from None
        return schema

    def coerce(self, value):
        """The typed, constraint-checked value; raises StackValidationFailed naming the parameter."""
        if self.type == "comma_delimited_list":
            self._check_size(value)
        try:
            typed = _coerce(self.type, value, self.max_depth)
            for constraint in self.constraints:
                constraint.check(typed, self.type)
        except ParameterValueError as error:
            raise StackValidationFailed(f"Parameter '{self.name}' is invalid: {error}") from None
        return typed

    def _check_size(self, value):
        """A list's items count too (a million empty items is a small text, a big list)."""
        size = _list_size(value)
        if size is None:
            size = value_size(value, self.max_bytes)
        if size > self.max_bytes:
            raise RequestLimitExceeded(
                f"The value of parameter {self.name} is larger than {self.max_bytes} bytes "
                f"(its text plus {ITEM_SIZE} per item).")

    def to_heat_dict(self, value=None):
        """Heat's validate entry (exactly its keys); ``value``: the one the user gave."""
        out = {"Type": TYPES[self.type], "Description": self.description,
               "Label": self.label or self.name, "NoEcho": "true" if self.hidden else "false"}
        if self.default is not None:
            out["Default"] = self.default
        if value not in (None, ""):
            out["Value"] = value
        for constraint in self.constraints:
            constraint.to_heat(out)
        return out


def _immutable(name, data):
    """Heat's ``immutable: true`` and the seed's ``updatable: false`` mean the same."""
    for key in ("immutable", "updatable"):
        if key in data and not isinstance(data[key], bool):
            raise InvalidTemplate(f"Invalid value for \"{key}\" of parameter {name}: "
                                  f"must be true or false")
    if "immutable" in data and "updatable" in data and data["immutable"] == data["updatable"]:
        raise InvalidTemplate(f"Parameter {name} says both immutable: {str(data['immutable']).lower()} "
                              f"and updatable: {str(data['updatable']).lower()}")
    return data.get("immutable", False) or data.get("updatable", True) is False


def _constraint(name, kind, data):
    if not isinstance(data, Mapping):
        raise InvalidTemplate(f"Invalid parameter constraints for parameter {name}, "
                              "expected a list of mappings")
    keys = set(data) & CONSTRAINT_KEYS
    if len(keys) != 1 or set(data) - CONSTRAINT_KEYS - {"description"}:
        raise InvalidTemplate(f"Invalid constraint for parameter {name}: {sorted(data)}")
    ckind = keys.pop()
    spec = data[ckind]
    allowed_for = {"length": ("string", "comma_delimited_list", "json"),
                   "range": ("number",), "modulo": ("number",),
                   "allowed_pattern": ("string",)}
    if ckind in allowed_for and kind not in allowed_for[ckind]:
        raise InvalidTemplate(f"Invalid {ckind} constraint for {kind} parameter {name}")
    if ckind in ("length", "range", "modulo") and not isinstance(spec, Mapping):
        raise InvalidTemplate(f"Invalid {ckind} constraint for parameter {name}")
    if ckind == "allowed_values" and not isinstance(spec, list):
        raise InvalidTemplate(f"allowed_values for parameter {name} must be a list")
    if ckind == "allowed_pattern":
        if not isinstance(spec, str):
            raise InvalidTemplate(f"Invalid allowed_pattern for parameter {name}: "
                                  f"must be a string")
        try:
            pattern_size(spec)  # compiled at its first match (compile_pattern)
        except ValueError as error:
            raise InvalidTemplate(f"Invalid allowed_pattern for parameter {name}: "
                                  f"{error}") from None
    if ckind in ("length", "range", "modulo"):
        _check_bounds(name, ckind, spec)
    return Constraint(kind=ckind, spec=spec, description=data.get("description"))


def _check_bounds(name, ckind, spec):
    keys = ("step", "offset") if ckind == "modulo" else ("min", "max")
    for key in keys:
        bound = spec.get(key)
        if bound is None:
            continue
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or \
                not math.isfinite(bound):
            raise InvalidTemplate(f"Invalid {ckind} constraint for parameter {name}: {key} "
                                  f"must be a finite number")


class Parameters(Mapping):
    """Typed parameter values of one stack, pseudo parameters included."""

    def __init__(self, schemas, values, *, stack_name=None, stack_id=None, project_id=None,
                 pseudo=None):
        self.schemas = schemas
        for key in values:
            if key not in schemas:
                raise UnknownUserParameter(key=key)
        self.values = {}
        # One budget for every allowed_pattern of these parameters (see pattern_matches).
        budget = _PATTERN_DEADLINE.set(time.monotonic() + PATTERNS_SECONDS)
        try:
            for name, schema in schemas.items():
                if name in values and values[name] is not None:
                    self.values[name] = schema.coerce(values[name])
                elif schema.default is not None:
                    self.values[name] = schema.default
                else:
                    raise UserParameterMissing(key=name)
        finally:
            _PATTERN_DEADLINE.reset(budget)
        # A CloudFormation template has its own pseudo parameters (AWS::StackName...).
        self.pseudo = pseudo if pseudo is not None else dict(
            zip(PSEUDO, (stack_name, stack_id, project_id)))

    def __getitem__(self, key):
        if key in self.values:
            return self.values[key]
        return self.pseudo[key]

    def __iter__(self):
        yield from self.values
        yield from self.pseudo

    def __len__(self):
        return len(self.values) + len(self.pseudo)

    def shown(self):
        """Values as Heat shows them: strings, hidden ones masked."""
        out = {}
        for key in self:
            value = self[key]
            schema = self.schemas.get(key)
            if schema and schema.hidden:
                out[key] = "******"
            elif isinstance(value, (dict, list)) and not (
                    schema and schema.type == "comma_delimited_list"):
                out[key] = json.dumps(value)
            elif isinstance(value, list):
                out[key] = ",".join(value)
            elif isinstance(value, bool):
                out[key] = "true" if value else "false"
            else:
                out[key] = "None" if value is None else str(value)
        return out
