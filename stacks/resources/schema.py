"""Declarative property and attribute schemas of resource plugins.

A ``Property`` knows its type, default, constraints and whether it can be
updated in place; the same schema drives validation, typing, the
update-or-replace decision and the ``resource_types`` documentation.
"""
import json
import re
from dataclasses import dataclass, field

from stacks.hot.parameters import parse_number
from stacks.hot.values import UNRESOLVED

TYPES = ("String", "Integer", "Number", "Boolean", "List", "Map", "Json", "Any")


class PropertyError(ValueError):
    """A value that does not fit a property; the message is the user-facing reason."""


@dataclass(frozen=True)
class Length:
    min: int | None = None
    max: int | None = None
    description: str | None = None

    def check(self, value):
        size = len(value)
        if (self.min is not None and size < self.min) or (self.max is not None and size > self.max):
            raise PropertyError(self.description or
                                f"length ({size}) is out of range (min: {self.min}, max: {self.max})")

    def doc(self):
        return {"length": {"min": self.min, "max": self.max}, "description": self.description}


@dataclass(frozen=True)
class Range:
    min: float | None = None
    max: float | None = None
    description: str | None = None

    def check(self, value):
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise PropertyError(self.description or
                                f"{value} is out of range (min: {self.min}, max: {self.max})")

    def doc(self):
        return {"range": {"min": self.min, "max": self.max}, "description": self.description}


@dataclass(frozen=True)
class JsonString:
    """Heat's ``json_string`` custom constraint: the string is a JSON document."""

    description: str | None = None

    def check(self, value):
        try:
            json.loads(value)
        except (TypeError, ValueError) as error:
            raise PropertyError(self.description or f"Value must be a valid JSON string: "
                                f"{error}") from None

    def doc(self):
        return {"custom_constraint": "json_string", "description": self.description}


@dataclass(frozen=True)
class AllowedValues:
    values: tuple
    description: str | None = None

    def check(self, value):
        if value not in self.values:
            raise PropertyError(self.description or
                                f'"{value}" is not an allowed value {list(self.values)}')

    def doc(self):
        return {"allowed_values": list(self.values), "description": self.description}


@dataclass(frozen=True)
class AllowedPattern:
    pattern: str
    description: str | None = None

    def check(self, value):
        if not re.fullmatch(self.pattern, value):
            raise PropertyError(self.description or
                                f'"{value}" does not match pattern "{self.pattern}"')

    def doc(self):
        return {"allowed_pattern": self.pattern, "description": self.description}


@dataclass(frozen=True)
class Attribute:
    description: str = ""
    type: str | None = None


@dataclass(frozen=True)
class Property:
    type: str
    description: str = ""
    required: bool = False
    default: object = None
    constraints: tuple = field(default_factory=tuple)
    update_allowed: bool = False
    schema: object = None  # items (List) or {name: Property} (Map)

    def coerce(self, value):
        """The typed value, constraints checked; UNRESOLVED is kept as it is."""
        if value is UNRESOLVED:
            return value
        typed = _COERCE[self.type](self, value)
        for constraint in self.constraints:
            constraint.check(typed)
        return typed

    def doc(self):
        out = {"type": self.type.lower(), "description": self.description,
               "required": self.required, "update_allowed": self.update_allowed,
               "immutable": False, "constraints": [c.doc() for c in self.constraints]}
        if self.default is not None:
            out["default"] = self.default
        if isinstance(self.schema, dict):
            out["schema"] = {k: p.doc() for k, p in self.schema.items()}
        elif isinstance(self.schema, Property):
            out["schema"] = {"*": self.schema.doc()}
        return out


def _string(prop, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise PropertyError(f"Value must be a string; got {json.dumps(value)[:80]}")


def _integer(prop, value):
    if isinstance(value, bool):
        raise PropertyError(f'"{value}" is not an integer')
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise PropertyError(f'"{value}" is not an integer') from None


def _number(prop, value):
    try:
        return parse_number(value)
    except ValueError:
        raise PropertyError(f'"{value}" is not a number') from None


def _boolean(prop, value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "t", "yes", "y", "on", "1"):
        return True
    if text in ("false", "f", "no", "n", "off", "0"):
        return False
    raise PropertyError(f'"{value}" is not a valid boolean')


def _list(prop, value):
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")] if value else []
    if not isinstance(value, list):
        raise PropertyError(f'"{value}" is not a list')
    if isinstance(prop.schema, Property):
        return [prop.schema.coerce(v) for v in value]
    return value


def _map(prop, value):
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if not isinstance(value, dict):
        raise PropertyError(f'"{value}" is not a map')
    if isinstance(prop.schema, dict):
        out = dict(value)
        for key, sub in prop.schema.items():
            if key in value:
                out[key] = sub.coerce(value[key])
            elif sub.required:
                raise PropertyError(f"Property {key} not assigned")
            elif sub.default is not None:
                out[key] = sub.default
        return out
    return value


def _json(prop, value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise PropertyError(f'"{value}" is not valid JSON') from None
    return value


_COERCE = {"String": _string, "Integer": _integer, "Number": _number, "Boolean": _boolean,
           "List": _list, "Map": _map, "Json": _json, "Any": lambda prop, value: value}
