"""The admin shows a row as the API would: its stack's hidden parameter values masked.

Heat never returns a ``hidden: true`` parameter's value, not even to an
admin; the admin pages are no exception. A model admin names the stacks a row
belongs to (``hidden_stacks``) and the row's own values that are hidden
(``own_hidden_values``, e.g. a raw template's environment read against its own
parameter schemas); the change page then shows a copy of the row with every
text and JSON field masked (``stacks.hidden.mask``). Nothing is saved: the
admins here are read-only.
"""
from django.db import models

from heatweb.admin import ReadOnlyAdmin
from heatweb.exceptions import HeatError
from stacks.definitions import parse_template
from stacks.hidden import hidden_values, mask

MASKED_FIELDS = (models.JSONField, models.TextField, models.CharField)


def masked_row(obj, values):
    """``obj`` with each text and JSON field's hidden values replaced by ``******``."""
    if values:
        for field in obj._meta.concrete_fields:
            if isinstance(field, MASKED_FIELDS):
                setattr(obj, field.attname, mask(getattr(obj, field.attname), values))
    return obj


def template_hidden_values(raw):
    """The values a raw template's own environment gives its hidden parameters."""
    try:
        schemas = parse_template(raw.template, raw.files).param_schemas
    except (HeatError, ValueError, TypeError, AttributeError):
        return frozenset()
    env = raw.environment or {}
    values = set()
    for section in ("parameters", "parameter_defaults"):
        given = env.get(section) or {}
        for name, schema in schemas.items():
            if schema.hidden and given.get(name) not in (None, ""):
                value = given[name]
                values.add(value if isinstance(value, str) else str(value))
    return frozenset(values)


def row_hidden_values(stacks):
    values = set()
    for stack in stacks:
        values |= hidden_values(stack)
    return frozenset(values)


class HiddenMaskingAdmin(ReadOnlyAdmin):
    """A read-only admin whose change page masks the hidden values of the row's stacks."""

    def hidden_stacks(self, obj):
        """The stacks whose hidden parameter values ``obj`` may hold."""
        stack = getattr(obj, "stack", None)
        return [stack] if stack is not None else []

    def own_hidden_values(self, obj):
        return frozenset()

    def hidden_of(self, obj):
        return row_hidden_values(self.hidden_stacks(obj)) | self.own_hidden_values(obj)

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        return masked_row(obj, self.hidden_of(obj)) if obj is not None else None

    def masked(self, obj, value):
        return mask(value, self.hidden_of(obj))
