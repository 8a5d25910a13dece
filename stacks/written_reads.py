"""A stack with its template, owner and locker, read by a written-out statement.

Every show and resource list of a stack starts with this lookup. The ORM
builds and compiles the same ``select_related`` query on every call, which
cost ~2 ms of CPU against ~0.05 ms for the statement (docs/benchmarks.md,
bench_api). ``stack_by_pk`` runs that statement, written once, and builds
the same instances with the same converters (the database backend's and
the fields' ``from_db_value``) as the ORM does.
"""
import functools

from django.contrib.auth import get_user_model
from django.db import connection

from stacks.models import RawTemplate, Stack

# (alias, model, the stack's foreign key to it, joined with LEFT OUTER JOIN)
_JOINS = (("t", RawTemplate, "raw_template", False), ("u", None, "user", True),
          ("l", None, "locked_by", True))


def stack_by_pk(project, pk):
    """The project's stack with primary key ``pk`` (live or deleted), or None; its
    ``raw_template``, ``user`` and ``locked_by`` are loaded as ``select_related`` loads them."""
    parts = _parts()
    with connection.cursor() as cursor:
        cursor.execute(_sql(), [project.pk, Stack._meta.pk.get_db_prep_value(pk, connection)])
        row = cursor.fetchone()
    if row is None:
        return None
    instances, start = [], 0
    for alias, model, fields in parts:
        values = row[start:start + len(fields)]
        start += len(fields)
        instances.append(_instance(model, alias, fields, values))
    stack = instances[0]
    for (_, _, name, _), related in zip(_JOINS, instances[1:]):
        setattr(stack, name, related)
    return stack


def _instance(model, alias, fields, values):
    if values[0] is None:  # an outer join that found nothing (the pk comes first)
        return None
    converted = list(values)
    for index, col, converters in _converters(connection.ops, model, alias):
        for converter in converters:
            converted[index] = converter(converted[index], col, connection)
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


@functools.lru_cache(maxsize=256)
def _converters(ops, model, alias):
    """``[(index, column, converters)]`` of the fields of ``model`` the ORM converts
    (per connection: a backend's converters belong to its connection)."""
    found = []
    for index, field in enumerate(_fields(model)):
        col = field.get_col(alias)
        converters = ops.get_db_converters(col) + col.get_db_converters(ops.connection)
        if converters:
            found.append((index, col, converters))
    return found


def _fields(model):
    """The concrete fields, primary key first (so a missing outer-joined row shows)."""
    fields = model._meta.concrete_fields
    return [model._meta.pk] + [f for f in fields if f is not model._meta.pk]


@functools.cache
def _parts():
    """``[(alias, model, fields)]`` in the order of the statement's columns."""
    user = get_user_model()
    return [("s", Stack, _fields(Stack))] + [
        (alias, model or user, _fields(model or user)) for alias, model, _, _ in _JOINS]


@functools.cache
def _sql():
    columns = ", ".join(f'{alias}."{f.column}"' for alias, _, fields in _parts() for f in fields)
    joins = "".join(
        f' {"LEFT OUTER" if outer else "INNER"} JOIN "{model._meta.db_table}" {alias} '
        f'ON {alias}."{model._meta.pk.column}" = s."{Stack._meta.get_field(name).column}"'
        for (alias, model, _), (_, _, name, outer) in zip(_parts()[1:], _JOINS))
    return (f'SELECT {columns} FROM "{Stack._meta.db_table}" s{joins} '
            f'WHERE s."{Stack._meta.get_field("project").column}" = %s '
            f'AND s."{Stack._meta.pk.column}" = %s')
