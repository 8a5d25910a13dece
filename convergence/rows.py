"""Rows' compare-and-swap UPDATEs, in SQL written once per shape.

The engine writes a resource row three times per action (lock, wait,
finish), each a conditional UPDATE of one row. Built through the ORM
(``filter(...).update(...)``) most of a write's time is spent building the
query; here the statement text is made once per set of columns and cached,
and every value still goes through its field's own ``get_db_prep_save``
(JSON, dates), so what is stored is what the ORM would store. A batch of
nodes writes its rows together (``rows_update``): one statement, each row
with its own condition and values.
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


def rows_update(model, items):
    """Many rows' compare-and-swap UPDATEs, one statement per shape of columns; returns the
    ids of the rows changed.

    ``items`` is ``[(where, values), ...]`` as for ``row_update``, each ``where``
    naming its row by ``id``. Each row keeps its own
    condition and values (a table of them joined to the rows: ``UPDATE ... FROM``),
    so a row another engine changed meanwhile is left out, as ``row_update`` leaves it.
    """
    connection = connections[router.db_for_write(model)]
    ids = [where["id"] for where, _ in items]
    if connection.vendor not in ("postgresql", "sqlite") or len(set(ids)) < len(ids):
        # One after the other: another database, or a row named twice (each sees the last).
        return {where["id"] for where, values in items if row_update(model, where, values)}
    shapes = {}
    for where, values in items:
        columns, params = _terms(model, connection, values, where=False)
        conditions, where_params = _terms(model, connection, where, where=True)
        shapes.setdefault((columns, conditions), []).append(params + where_params)
    changed = set()
    with connection.cursor() as cursor:
        for (columns, conditions), rows in shapes.items():
            head, row_sql = _many_statement(model, connection.vendor, columns, conditions)
            cursor.execute(head.format(values=", ".join([row_sql] * len(rows))),
                           [param for row in rows for param in row])
            changed.update(row[0] for row in cursor.fetchall())
    return changed


@lru_cache(maxsize=256)
def _many_statement(model, vendor, columns, conditions):
    """``(statement with a {values} slot, one row of the values table)`` for a shape."""
    connection = connections[router.db_for_write(model)]
    ops, table = connection.ops, model._meta.db_table
    fields = {field.column: field for field in model._meta.concrete_fields}
    names, casts = [], []

    def terms(pairs, prefix, target, literal):
        """Each ``(column, how)`` as SQL: ``literal[how]`` of its target, or ``target =``
        a column of the values table (named and typed into ``names`` / ``casts``)."""
        out = []
        for index, (column, how) in enumerate(pairs):
            if how in literal:
                out.append(literal[how](target(column)))
                continue
            names.append(f"{prefix}{index}")
            casts.append(fields[column])
            out.append(f"{target(column)} = v.{prefix}{index}")
        return out

    sets = terms(columns, "s", ops.quote_name, {"+1": lambda name: f"{name} = {name} + 1"})
    wheres = terms(conditions, "w", lambda column: f"{ops.quote_name(table)}."
                                                   f"{ops.quote_name(column)}",
                   {"null": lambda name: f"{name} IS NULL"})
    if vendor == "postgresql":  # a VALUES list's parameters are typed by its column
        row_sql = "(" + ", ".join(f"CAST(%s AS {field.cast_db_type(connection)})"
                                  for field in casts) + ")"
    else:
        row_sql = "(" + ", ".join("%s" for _ in casts) + ")"
    head = (f"WITH v ({', '.join(names)}) AS (VALUES {{values}}) "
            f"UPDATE {ops.quote_name(table)} SET {', '.join(sets)} FROM v "
            f"WHERE {' AND '.join(wheres)} RETURNING {ops.quote_name(table)}.{ops.quote_name('id')}")
    return head, row_sql
