"""Values shared by the template code and the resource plugins, and helpers on them."""
import json

from heatweb.exceptions import InvalidTemplateReference, StackValidationFailed


class ReferenceOnRead(InvalidTemplateReference):
    """Heat's ``Ref`` (ParamRef) naming neither a resource nor a parameter in an output:
    Heat's validate does not resolve outputs, so it is the output's error on reading."""


class _Unresolved:
    """Stands for a value known only once resources exist (get_resource, get_attr).

    Validation before anything is created sees this instead of the value;
    property checks skip it.
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "<unresolved>"

    def __bool__(self):
        return False

    def __reduce__(self):
        return (_Unresolved, ())


UNRESOLVED = _Unresolved()


def contains_unresolved(value):
    """True when ``value`` is or holds UNRESOLVED."""
    if value is UNRESOLVED:
        return True
    if isinstance(value, dict):
        return any(contains_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_unresolved(v) for v in value)
    return False


def as_text(value):
    """``value`` as the string functions write it (JSON for lists and maps)."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)  # as Heat's str_replace and list_join
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def item_at(value, step, path):
    """Item ``step`` of a list or map; StackValidationFailed naming ``path`` otherwise."""
    try:
        if isinstance(value, list):
            return value[int(step)]
        if isinstance(value, dict):
            return value[step]
    except (KeyError, IndexError, ValueError, TypeError):
        pass
    raise StackValidationFailed(f"{path}: cannot take item {step!r} of {as_text(value)[:80]}")


def join_texts(delim, items, budget, path):
    """``items`` as text joined by ``delim``, refused beforehand past ``budget``."""
    texts = [as_text(i) for i in items]
    budget.check(sum(map(len, texts)) + len(delim) * max(len(texts) - 1, 0), path)
    return delim.join(texts)
