"""Reading template and environment text: YAML (safe) or JSON, within limits.

PyYAML's safe loader still expands aliases, so a "billion laughs" document
of a few hundred bytes describes billions of nodes. The loader counts alias
uses and nesting while composing and, after loading, measures the expanded
node count without expanding it (shared sub-trees are sized once, by
``heatweb.inputs``), so such a document is refused at parse time with flat
memory, and so is one nested deeper than the budget or holding text that
cannot be stored (lone surrogates, NUL), numbers that are not finite or
integers too long to write back as text. A mapping that names a key twice
keeps the last value, as Heat's loader (PyYAML's, and ``json.loads``) does:
Magnum's cluster templates repeat a key and run on Heat.
"""
from dataclasses import dataclass

import yaml

from heatweb.exceptions import BadRequest, InvalidTemplate, RequestLimitExceeded
from heatweb.inputs import (MAX_INTEGER_DIGITS, InvalidInput, NestingTooDeep,
                            bad_text, huge_integer, inspect_document, load_json)
from stacks.hot.yaql_expressions import YaqlLimits



@dataclass(frozen=True)
class Limits:
    """The budgets a template is parsed and evaluated within (settings ``HEATWEB``)."""

    max_template_bytes: int = 512 * 1024
    max_resources: int = 1000
    max_yaml_aliases: int = 100
    max_document_nodes: int = 100_000
    max_nesting: int = 64
    max_value_bytes: int = 1024 * 1024
    max_resolved_bytes: int = 4 * 1024 * 1024
    yaql: YaqlLimits = YaqlLimits()


def _bounded_loader(limits, what):
    max_aliases, max_depth = limits.max_yaml_aliases, limits.max_nesting

    class BoundedLoader(yaml.SafeLoader):
        """Safe loader without implicit dates, with bounded aliases and nesting."""

        aliases_seen = 0
        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self.aliases_seen += 1
                if self.aliases_seen > max_aliases:
                    raise RequestLimitExceeded(
                        f"The document uses more than {max_aliases} YAML aliases.")
            # PyYAML composes recursively: refuse deep documents long before
            # Python's recursion limit.
            self.depth += 1
            if self.depth > max_depth:
                raise NestingTooDeep(f"The document is nested more than {max_depth} levels "
                                     f"deep (line {self.peek_event().start_mark.line + 1}).")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_yaml_int(self, node):
            # int() of more than 4,300 decimal digits is a ValueError (and a
            # long hex literal converts but cannot be written back): refuse a
            # long literal before converting it; inspect() bounds the value.
            if len(node.value) > MAX_INTEGER_DIGITS + 2:
                raise huge_integer(f"{what} (line {node.start_mark.line + 1})")
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)

    # Heat reads "2016-10-14" as a string, not a date (and JSON cannot hold dates).
    BoundedLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return BoundedLoader


def check_size(text, limits, *, what="Template", limit=None):
    limit = limits.max_template_bytes if limit is None else limit
    length = len(text.encode("utf-8", errors="surrogatepass")) if isinstance(text, str) \
        else len(text)
    if length > limit:
        raise RequestLimitExceeded(
            f"{what} size ({length} bytes) exceeds maximum allowed size ({limit} bytes).")


def inspect(data, limits, *, what="template", max_bytes=None):
    """Refuse bad text, non-finite numbers, deep nesting, too many nodes or bytes in ``data``."""
    return inspect_document(data, max_depth=limits.max_nesting,
                            max_nodes=limits.max_document_nodes,
                            max_bytes=max_bytes or limits.max_template_bytes, what=what)


def load_text(text, limits=Limits(), *, what="template", limit=None):
    """Parse YAML or JSON text into Python data; raises InvalidTemplate or a budget's error."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidTemplate(f"The {what} is not UTF-8 text: {error}") from None
    check_size(text, limits, what=what.capitalize(), limit=limit)
    problem = bad_text(text)
    if problem:
        raise InvalidInput(f"Invalid text in the {what}: it holds {problem}.")
    if text.lstrip().startswith("{"):
        try:
            return load_json(text, max_depth=limits.max_nesting,
                             max_nodes=limits.max_document_nodes, what=what,
                             unique_keys=False)
        except InvalidInput:
            raise
        except BadRequest as error:
            if isinstance(error, (NestingTooDeep, RequestLimitExceeded)):
                raise
            raise InvalidTemplate(f"Error parsing {what} JSON: {error.message}") from None
    try:
        data = yaml.load(text, Loader=_bounded_loader(limits, what))  # noqa: S506
    except yaml.YAMLError as error:
        refusal = InvalidTemplate(f"Error parsing {what}: {error}")
        mark = getattr(error, "problem_mark", None)
        # Where and what, for a page to list: (line, column, problem), counted from 1.
        refusal.positions = [(mark.line + 1, mark.column + 1,
                              getattr(error, "problem", None) or str(error))] if mark else []
        raise refusal from None
    except RecursionError:
        raise NestingTooDeep(f"The {what} is nested too deeply.") from None
    inspect(data, limits, what=what, max_bytes=limit)
    return data
