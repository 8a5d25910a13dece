"""One row's compare-and-swap UPDATE, in SQL written once per shape.

The engine writes a resource row three times per action (lock, wait,
finish), each a conditional UPDATE of one row. Built through the ORM
(``filter(...).update(...)``) most of a write's time is spent building the
query; here the statement text is made once per set of columns and cached,
and every value still goes through its field's own ``get_db_prep_save``
(JSON, dates), so what is stored is what the ORM would store.
"""
from functools import lru_cache

from django.db import connections, router

# ``row_update(..., atomic_key=INCREMENT)`` adds one to the column in SQL.
INCREMENT = object()


@lru_cache(maxsize=256)
def _statement(model, vendor, columns, conditions):
    table = model._meta.db_table
    ops = connections[router.db_for_write(model)].ops
    sets = ", ".join(f"{ops.quote_name(c)} = {ops.quote_name(c)} + 1" if how == "+1"
                     else f"{ops.quote_name(c)} = %s" for c, how in columns)
    where = " AND ".join(f"{ops.quote_name(c)} IS NULL" if how == "null"
                         else f"{ops.quote_name(c)} = %s" for c, how in conditions)
    return f"UPDATE {ops.quote_name(table)} SET {sets} WHERE {where}"


def row_update(model, where, values):
    """``UPDATE model SET values WHERE where``; returns the number of rows changed (0 or 1).

    ``where`` and ``values`` map field names to values; a ``where`` value of
    None means IS NULL, a ``values`` value of ``INCREMENT`` adds one.
    """
    connection = connections[router.db_for_write(model)]
    columns, params = _terms(model, connection, values, where=False)
    conditions, where_params = _terms(model, connection, where, where=True)
    sql = _statement(model, connection.vendor, columns, conditions)
    with connection.cursor() as cursor:
        cursor.execute(sql, params + where_params)
        return cursor.rowcount


def _terms(model, connection, values, *, where):
    """``((column, how), ...)`` and the parameters, each value adapted by its field."""
    terms, params = [], []
    for name, value in values.items():
        field = model._meta.get_field(name)
        if value is INCREMENT:
            terms.append((field.column, "+1"))
        elif where and value is None:
            terms.append((field.column, "null"))
        else:
            terms.append((field.column, "="))
            params.append(field.get_db_prep_save(value, connection))
    return tuple(terms), params
