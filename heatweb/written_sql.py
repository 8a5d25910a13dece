"""Model instances from written-out statements, converted and built as the ORM builds them.

The reads every API request makes (its token's user, its project, a stack,
its resources, the stack list) are written-out statements: the ORM (and
``raw()``, which resolves the model's columns and converters again on every
call) cost many times the statement itself (docs/benchmarks.md, bench_api).
``columns`` names a model's columns in a fixed order, ``instance`` builds
the instance of a row of them with the converters the ORM applies (the
backend's and the fields' ``from_db_value``), cached per connection.
A read that needs only some of a model's fields names them (``names``): the
others are not read and stay deferred, as ``only()`` leaves them (reading
one then costs a query).
"""
import functools

from django.db import connection
from django.db.models.base import ModelState


@functools.cache
def concrete_fields(model, names=None):
    """The concrete fields (those of ``names``, a tuple of field names, when given),
    primary key first (so a missing outer-joined row shows)."""
    fields = [f for f in model._meta.concrete_fields if f is not model._meta.pk
              and (names is None or f.name in names)]
    if names is not None and len(fields) + (model._meta.pk.name in names) != len(names):
        raise ValueError(f"not all concrete fields of {model.__name__}: {names}")
    return (model._meta.pk, *fields)


@functools.cache
def columns(model, alias, names=None):
    """``alias."column", ...`` of ``concrete_fields(model, names)``, for a SELECT."""
    return ", ".join(f'{alias}."{f.column}"' for f in concrete_fields(model, names))


def instance(model, alias, values, names=None):
    """The instance of ``model`` from the values of ``columns(model, alias, names)`` (None
    when its primary key is NULL: an outer join that found nothing), as ``from_db`` makes
    it; the fields left out of ``names`` are deferred.

    Built as ``Model.__init__`` builds it from a whole row (its fields'
    attributes and a ``ModelState`` from the database), without the
    per-field work ``__init__`` does for arguments it is not given here;
    ``pre_init``/``post_init`` have no receivers for these models (checked).
    """
    if values[0] is None:
        return None
    values = list(values)
    for index, col, converters in _converters(connection.ops, model, alias, names):
        for converter in converters:
            values[index] = converter(values[index], col, connection)
    obj = model.__new__(model)
    state = obj._state = ModelState()
    state.adding = False
    state.db = connection.alias
    obj.__dict__.update(zip(_attnames(model, names), values))
    return obj


@functools.cache
def _attnames(model, names=None):
    return tuple(f.attname for f in concrete_fields(model, names))


@functools.lru_cache(maxsize=256)
def _converters(ops, model, alias, names=None):
    """``[(index, column, converters)]`` of the fields of ``model`` (of ``names``) the ORM
    converts (per connection: a backend's converters belong to its connection)."""
    found = []
    for index, field in enumerate(concrete_fields(model, names)):
        col = field.get_col(alias)
        converters = ops.get_db_converters(col) + col.get_db_converters(ops.connection)
        if converters:
            found.append((index, col, converters))
    return tuple(found)


def fetch(sql, params):
    """All rows of a statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
