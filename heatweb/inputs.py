"""Checks of untrusted data: what a request body or template may hold.

Pure Python (no Django), so the template loader and the API's body parser
share it. ``inspect_document`` walks a parsed document without recursion
and refuses, with Heat's errors:

* text that is not Unicode scalar values (a lone surrogate such as
  ``"\\ud800"``) or that holds NUL: PostgreSQL cannot store it and SQLite
  stores what no later read can encode;
* numbers that are not finite (``NaN``, ``Infinity``) and integers of more
  than ``MAX_INTEGER_DIGITS`` decimal digits (Python cannot write one of more
  than 4,300 back as text, so it could be parsed but never stored);
* nesting deeper than ``max_depth`` (recursive code downstream must never
  meet a RecursionError);
* more than ``max_nodes`` nodes once aliases are expanded. Shared
  sub-trees (YAML aliases) are measured once, so a "billion laughs"
  document is refused in time proportional to its text, not its expansion.
"""
import json
import math
import re

from heatweb.exceptions import BadRequest, RequestLimitExceeded

_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")

MAX_INTEGER_DIGITS = 1000
_INTEGER_BOUND = 10 ** MAX_INTEGER_DIGITS


class InvalidInput(BadRequest):
    """Text or a number that cannot be stored and read back."""


class NestingTooDeep(BadRequest):
    """Lists and maps nested deeper than the budget allows."""


def bad_text(text):
    """Why ``text`` cannot be stored, or None when it can."""
    found = _BAD_TEXT.search(text)
    if found is None:
        return None
    char = found.group(0)
    if char == "\x00":
        return "a NUL character"
    return f"a lone surrogate (U+{ord(char):04X}), which is not a Unicode character"


def _check_scalar(value, where):
    if isinstance(value, str):
        problem = bad_text(value)
        if problem:
            raise InvalidInput(f"Invalid text in the {where()}: it holds {problem}.")
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"Invalid number in the {where()}: {value} is not a finite number.")
    elif isinstance(value, int) and not -_INTEGER_BOUND < value < _INTEGER_BOUND:
        raise huge_integer(where())


def huge_integer(where):
    """The refusal of an integer longer than ``MAX_INTEGER_DIGITS`` digits."""
    return InvalidInput(f"Invalid number in the {where}: an integer of more than "
                        f"{MAX_INTEGER_DIGITS} digits.")


def _path(link):
    keys = []
    while link is not None:
        link, key = link
        keys.append(key)
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys)) or "."


def _scalar_bytes(value):
    if isinstance(value, str):
        return (len(value) if value.isascii() else len(value.encode("utf-8"))) + 3
    return 8


def inspect_document(root, *, max_depth, max_nodes, max_bytes=None, what="request body"):
    """Node count of ``root`` expanded; raises when a limit or a value is bad.

    ``max_bytes`` bounds the expanded document's size (about its JSON length),
    so a few aliases of a long list cannot expand past the template size limit.
    """
    max_bytes = max_bytes or float("inf")
    sizes = {}  # id(container) -> (expanded nodes, expanded bytes, height); None while walked
    # Entries: (value, depth, link, children_done); link is (parent link, key).
    stack = [(root, 1, None, False)]
    while stack:
        value, depth, link, done = stack.pop()
        if not isinstance(value, (dict, list)):
            _check_scalar(value, lambda: f"{what} at {_path(link)}")
            continue
        key = id(value)
        if done:
            sizes[key] = _measure(value, sizes, max_nodes, max_bytes)
            continue
        if key in sizes:
            if sizes[key] is None:
                raise InvalidInput(f"The {what} refers to itself (a recursive alias).")
            if depth + sizes[key][2] - 1 > max_depth:
                raise _too_deep(what, max_depth, link)
            continue
        if depth > max_depth:
            raise _too_deep(what, max_depth, link)
        sizes[key] = None
        stack.append((value, depth, link, True))
        pairs = value.items() if isinstance(value, dict) else enumerate(value)
        for name, item in pairs:
            if isinstance(value, dict):
                _check_scalar(name, lambda: f"{what}: a key at {_path(link)}")
            stack.append((item, depth + 1, (link, name), False))
    nodes, size = (sizes[id(root)][:2] if isinstance(root, (dict, list))
                   else (1, _scalar_bytes(root)))
    if nodes > max_nodes:
        raise RequestLimitExceeded(
            f"The {what} has more than {max_nodes} nodes once its aliases are expanded.")
    if size > max_bytes:
        raise RequestLimitExceeded(
            f"The {what} is larger than {max_bytes} bytes once its aliases are expanded.")
    return nodes


def _measure(container, sizes, max_nodes, max_bytes):
    """(nodes, bytes, height) of a container whose children are measured (capped)."""
    nodes, size, height = 1, 2, 1
    if isinstance(container, dict):
        size += sum(_scalar_bytes(k) + 1 for k in container)
        items = container.values()
    else:
        items = container
    for item in items:
        if isinstance(item, (dict, list)):
            child = sizes[id(item)]
            nodes, size = nodes + child[0], size + child[1] + 1
            height = max(height, child[2] + 1)
        else:
            nodes, size = nodes + 1, size + _scalar_bytes(item) + 1
    return min(nodes, max_nodes + 1), min(size, max_bytes + 1), height


def _too_deep(what, max_depth, link):
    return NestingTooDeep(
        f"The {what} is nested more than {max_depth} levels deep (at {_path(link)[:200]}).")


def _refuse_constant(name):
    raise ValueError(f"{name} is not a finite number")


class DuplicateKey(BadRequest):
    """A mapping that names one key twice: which value is meant is ambiguous."""


def _unique_object(pairs):
    data = dict(pairs)
    if len(data) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"the key {key[:200]!r} appears twice in one object.")
            seen.add(key)
    return data


def _refuse_long_integer(literal):
    if len(literal.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise InvalidInput(f"an integer of more than {MAX_INTEGER_DIGITS} digits.")
    return int(literal)


def load_json(text, *, max_depth, max_nodes, what="request body", unique_keys=True):
    """``json.loads`` that refuses NaN/Infinity, huge integers, bad text, deep or huge
    documents and, unless ``unique_keys`` is false (then the last value of a key wins,
    as in ``json.loads``), duplicate keys."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_refuse_long_integer,
                          object_pairs_hook=_unique_object if unique_keys else dict)
    except BadRequest as error:
        raise type(error)(f"The {what} is not valid: {error.message}") from None
    except RecursionError:
        raise NestingTooDeep(
            f"The {what} is nested more than {max_depth} levels deep.") from None
    except ValueError as error:  # JSONDecodeError, numbers past Python's digit limit
        raise BadRequest(f"The {what} is not valid JSON: {error}") from None
    inspect_document(data, max_depth=max_depth, max_nodes=max_nodes, what=what)
    return data
