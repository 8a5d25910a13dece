"""``{{ value|as_json }}``: a value as the API shows it (JSON, pretty-printed), not a Python repr."""
import json

from django import template

register = template.Library()


@register.filter
def as_json(value):
    """Scalars on one line (``"text"``, ``false``, ``null``); objects and lists indented."""
    indent = 2 if isinstance(value, (dict, list)) and value else None
    return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=False, default=str)
