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
    meta = model._meta
    columns, params = [], []
    for name, value in values.items():
        field = meta.get_field(name)
        if value is INCREMENT:
            columns.append((field.column, "+1"))
            continue
        columns.append((field.column, "="))
        params.append(field.get_db_prep_save(value, connection))
    conditions = []
    for name, value in where.items():
        field = meta.get_field(name)
        if value is None:
            conditions.append((field.column, "null"))
            continue
        conditions.append((field.column, "="))
        params.append(field.get_db_prep_save(value, connection))
    sql = _statement(model, connection.vendor, tuple(columns), tuple(conditions))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount

