"""Template parameters: schemas, constraints and typed values.

A ``ParamSchema`` is one entry of a template's ``parameters`` section. It
turns user input into a typed value ("5" for a number is 5) and checks the
constraints, whose ``description`` becomes the error message. ``Parameters``
is the typed mapping a stack resolves ``get_param`` from, pseudo
parameters (``OS::stack_name``...) included.
"""
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import re2

from heatweb.exceptions import BadRequest, InvalidTemplate, StackValidationFailed, \
    UnknownUserParameter, UserParameterMissing
from heatweb.inputs import load_json

DEFAULT_MAX_DEPTH = 64

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


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern):
    """``pattern`` on RE2, whose matching time is linear in the text (no backtracking).

    Raises ValueError for a pattern RE2 cannot run (back-references, look-arounds).
    """
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) \
            else str(error)
        raise ValueError(reason) from None


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
            if not compile_pattern(spec).fullmatch(str(value)):
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
        elif self.kind == "modulo":
            out["Modulo"] = self.spec
        if self.description:
            out["ConstraintDescription"] = self.description


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

    @classmethod
    def from_template(cls, name, data, *, max_depth=DEFAULT_MAX_DEPTH):
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
                     max_depth=max_depth)
        if data.get("default") is not None:
            try:
                schema.default = schema.coerce(data["default"])
            except StackValidationFailed as error:
                raise InvalidTemplate(f"Invalid default for parameter {name}: "
                                      f"{error.message}") from None
        return schema

    def coerce(self, value):
        """The typed, constraint-checked value; raises StackValidationFailed naming the parameter."""
        try:
            typed = _coerce(self.type, value, self.max_depth)
            for constraint in self.constraints:
                constraint.check(typed, self.type)
        except ParameterValueError as error:
            raise StackValidationFailed(f"Parameter '{self.name}' is invalid: {error}") from None
        return typed

    def to_heat_dict(self):
        out = {"Type": TYPES[self.type], "Description": self.description,
               "Label": self.label or self.name, "NoEcho": "true" if self.hidden else "false",
               "Immutable": self.immutable}
        if self.default is not None:
            out["Default"] = self.default
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
            compile_pattern(spec)
        except ValueError as error:
            raise InvalidTemplate(f"Invalid allowed_pattern for parameter {name}: {error} "
                                  f"(patterns run on RE2: no back-references or "
                                  f"look-arounds)") from None
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

    def __init__(self, schemas, values, *, stack_name=None, stack_id=None, project_id=None):
        self.schemas = schemas
        for key in values:
            if key not in schemas:
                raise UnknownUserParameter(key=key)
        self.values = {}
        for name, schema in schemas.items():
            if name in values and values[name] is not None:
                self.values[name] = schema.coerce(values[name])
            elif schema.default is not None:
                self.values[name] = schema.default
            else:
                raise UserParameterMissing(key=name)
        self.pseudo = dict(zip(PSEUDO, (stack_name, stack_id, project_id)))

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
