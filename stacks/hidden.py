"""Hidden parameters' values never leave the server once stored.

The API and the pages show a ``hidden: true`` parameter as ``******``; this
module also keeps its value out of everything else they show of a stack:
the stored environment, resource properties and attributes, and event
reasons (an error message may quote a property). A value is recognised
wherever it appears in a string, so one joined into a longer property
(``list_join``, ``str_replace``) is masked too. Outputs are left as the
template author wrote them: an output is an explicit publication, as in Heat.
"""
import json

from heatweb.exceptions import HeatError
from stacks.definitions import definition_cache

MASK = "******"
# Shorter values are masked only where they are a whole string: masking every
# "ab" inside other text would garble the page without hiding anything.
MIN_SUBSTRING = 4


def hidden_values(stack):
    """The string forms of the hidden parameters' values of ``stack`` and its ancestors."""
    values = set()
    seen = 0
    while stack is not None and seen < 64:
        try:
            params = definition_cache.get(stack).params
        except HeatError:
            params = None
        if params is not None:
            for name, schema in params.schemas.items():
                if schema.hidden:
                    values.update(_forms(params[name]))
        stack, seen = stack.parent if stack.parent_id else None, seen + 1
    values.discard("")
    return frozenset(values)


def hidden_values_by_stack(rows):
    """``{stack id: hidden_values(stack)}`` for rows (resources, events) that carry their
    ``stack``: once per stack, however many rows it has."""
    by_stack = {}
    for row in rows:
        if row.stack_id not in by_stack:
            by_stack[row.stack_id] = hidden_values(row.stack)
    return by_stack


def _forms(value):
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return (",".join(str(v) for v in value), json.dumps(value),
                *(str(v) for v in value if isinstance(v, str)))
    return (json.dumps(value), str(value))


def mask(data, values):
    """``data`` (JSON-like) with each hidden value replaced by ``******``."""
    if not values:
        return data
    if isinstance(data, str):
        if data in values:
            return MASK
        for value in sorted(values, key=len, reverse=True):
            if len(value) >= MIN_SUBSTRING and value in data:
                data = data.replace(value, MASK)
        return data
    if isinstance(data, dict):
        return {k: mask(v, values) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [mask(v, values) for v in data]
    if isinstance(data, (int, float)) and not isinstance(data, bool) and str(data) in values:
        return MASK
    return data


def masked_environment(stack, environment=None):
    """The stack's stored environment with hidden parameters' values masked."""
    env = dict(stack.raw_template.environment or {}) if environment is None else environment
    return mask(env, hidden_values(stack))


def masked_files(stack):
    """The stack's stored files with hidden parameters' values masked: an environment file
    given with ``-e`` is among them (heatclient sends its text)."""
    return mask(stack.raw_template.files or {}, hidden_values(stack))
