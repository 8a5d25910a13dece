"""Reading template and environment text: YAML (safe) or JSON, within limits.

PyYAML's safe loader still expands aliases, so a "billion laughs" document
of a few hundred bytes describes billions of nodes. The loader counts alias
uses while composing and, after loading, measures the expanded size without
expanding it (shared sub-trees are sized once), so such a document is
rejected at once and memory stays flat.
"""
import json
from dataclasses import dataclass

import yaml

from heatweb.exceptions import InvalidTemplate, RequestLimitExceeded

MAX_EXPANDED_NODES = 1_000_000


@dataclass(frozen=True)
class Limits:
    max_template_bytes: int = 512 * 1024
    max_resources: int = 1000
    max_yaml_aliases: int = 100


def _bounded_loader(max_aliases):
    class BoundedLoader(yaml.SafeLoader):
        """Safe loader without implicit dates and with a bounded number of aliases."""

        aliases_seen = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self.aliases_seen += 1
                if self.aliases_seen > max_aliases:
                    raise RequestLimitExceeded(
                        f"The document uses more than {max_aliases} YAML aliases.")
            return super().compose_node(parent, index)

    # Heat reads "2016-10-14" as a string, not a date (and JSON cannot hold dates).
    BoundedLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return BoundedLoader


def expanded_size(document, limit=MAX_EXPANDED_NODES):
    """Number of nodes ``document`` would have written out in full (capped at ``limit``+1)."""
    sizes = {}

    def size(node):
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        sizes[key] = limit + 1  # a cycle counts as unbounded
        items = node.values() if isinstance(node, dict) else node
        total = 1
        for item in items:
            total += size(item)
            if total > limit:
                break
        sizes[key] = min(total, limit + 1)
        return sizes[key]

    return size(document)


def check_size(text, limits):
    length = len(text.encode("utf-8")) if isinstance(text, str) else len(text)
    if length > limits.max_template_bytes:
        raise RequestLimitExceeded(
            f"Template size ({length} bytes) exceeds maximum allowed size "
            f"({limits.max_template_bytes} bytes).")


def load_text(text, limits=Limits(), *, what="template"):
    """Parse YAML or JSON text into Python data; raises InvalidTemplate or RequestLimitExceeded."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    check_size(text, limits)
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            data = json.loads(text)
        else:
            data = yaml.load(text, Loader=_bounded_loader(limits.max_yaml_aliases))  # noqa: S506
    except json.JSONDecodeError as error:
        raise InvalidTemplate(f"Error parsing {what} JSON: {error}") from None
    except yaml.YAMLError as error:
        raise InvalidTemplate(f"Error parsing {what}: {error}") from None
    if expanded_size(data) > MAX_EXPANDED_NODES:
        raise RequestLimitExceeded(
            f"The {what} expands to more than {MAX_EXPANDED_NODES} nodes.")
    return data
