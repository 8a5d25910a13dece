"""A template's budgets (sizes, counts, nesting), from the operator's settings.

Used wherever a template or a file of one is read: a stack's definition
(``stacks.definitions``), a template resource's body (``stacks.resources.stack``),
an adopt's data (``stacks.api``).
"""
from django.conf import settings

from stacks.hot import Limits, YaqlLimits

# The resource budget the template budgets below are sized for.
TEMPLATE_BUDGET_RESOURCES = 1000


def limits():
    """The budgets of a template. An operator who raises ``MAX_RESOURCES_PER_STACK``
    past 1,000 gets the template's bytes and nodes budgets raised in proportion: a
    group of 10,000 members generates a members' template of 10,000 resources,
    which must fit (the HTTP body stays bounded by ``MAX_REQUEST_BYTES``)."""
    cfg = settings.HEATWEB
    scale = max(1, -(-cfg["MAX_RESOURCES_PER_STACK"] // TEMPLATE_BUDGET_RESOURCES))
    return Limits(max_template_bytes=cfg["MAX_TEMPLATE_BYTES"] * scale,
                  max_resources=cfg["MAX_RESOURCES_PER_STACK"],
                  max_yaml_aliases=cfg["MAX_YAML_ALIASES"],
                  max_document_nodes=cfg["MAX_DOCUMENT_NODES"] * scale,
                  max_nesting=cfg["MAX_NESTING"],
                  max_value_bytes=cfg["MAX_VALUE_BYTES"],
                  max_resolved_bytes=cfg["MAX_RESOLVED_BYTES"],
                  yaql=YaqlLimits(limit_iterators=cfg["YAQL_LIMIT_ITERATORS"],
                                  memory_quota=cfg["YAQL_MEMORY_QUOTA"],
                                  seconds=cfg["YAQL_SECONDS"],
                                  total_seconds=cfg["YAQL_TOTAL_SECONDS"]))
