"""A stack with its template, owner and locker, read by a written-out statement.

Every show and resource list of a stack starts with this lookup. The ORM
builds and compiles the same ``select_related`` query on every call, which
cost ~2 ms of CPU against ~0.05 ms for the statement (docs/benchmarks.md,
bench_api). ``stack_by_pk`` runs that statement, written once, and builds
the same instances with the same converters (the database backend's and
the fields' ``from_db_value``) as the ORM does.
"""
import functools
import json

from django.contrib.auth import get_user_model
from django.db import connection

from heatweb import written_sql

from stacks.models import RawTemplate, Stack

# The stack fields a summary shows (Heat's stack list), besides the owner's and
# the locker's names and the template's description.
STACK_SUMMARY_FIELDS = ("id", "name", "state", "status_reason", "created_at", "updated_at",
                        "deleted_at", "parent_id", "project_id", "tags", "lock_level",
                        "lock_reason", "locked_at", "lock_expires_at", "user_id",
                        "locked_by_id", "pre_lock_state", "lock_allow", "lock_pending")

# (alias, model, the stack's foreign key to it, joined with LEFT OUTER JOIN)
_JOINS = (("t", RawTemplate, "raw_template", False), ("u", None, "user", True),
          ("l", None, "locked_by", True))


def stack_by_pk(project, pk):
    """The project's stack with primary key ``pk`` (live or deleted), or None; its
    ``raw_template``, ``user`` and ``locked_by`` are loaded as ``select_related`` loads them."""
    rows = written_sql.fetch(_sql(), [project.pk, Stack._meta.pk.get_db_prep_value(pk, connection)])
    if not rows:
        return None
    row, instances, start = rows[0], [], 0
    for alias, model, fields in _parts():
        instances.append(written_sql.instance(model, alias, row[start:start + len(fields)]))
        start += len(fields)
    stack = instances[0]
    for (_, _, name, _), related in zip(_JOINS, instances[1:]):
        setattr(stack, name, related)
    return stack


@functools.cache
def _parts():
    """``[(alias, model, fields)]`` in the order of the statement's columns."""
    user = get_user_model()
    return [("s", Stack, written_sql.concrete_fields(Stack))] + [
        (alias, model or user, written_sql.concrete_fields(model or user))
        for alias, model, _, _ in _JOINS]


@functools.cache
def _sql():
    columns = ", ".join(written_sql.columns(model, alias) for alias, model, _ in _parts())
    joins = "".join(
        f' {"LEFT OUTER" if outer else "INNER"} JOIN "{model._meta.db_table}" {alias} '
        f'ON {alias}."{model._meta.pk.column}" = s."{Stack._meta.get_field(name).column}"'
        for (alias, model, _), (_, _, name, outer) in zip(_parts()[1:], _JOINS))
    return (f'SELECT {columns} FROM "{Stack._meta.db_table}" s{joins} '
            f'WHERE s."{Stack._meta.get_field("project").column}" = %s '
            f'AND s."{Stack._meta.pk.column}" = %s')


# The stack list: one written-out statement for Heat's filters, sort and page
# (``stacks.selectors.stack_list`` gives the terms). Terms are ``(sql, params)``
# over the aliases ``s`` (the stack), ``u`` (its owner), ``l`` (its locker)
# and ``t`` (its template).

def sql_all(terms):
    return "(" + " AND ".join(sql for sql, _ in terms) + ")", [p for _, ps in terms for p in ps]


def sql_any(terms):
    return "(" + " OR ".join(sql for sql, _ in terms) + ")", [p for _, ps in terms for p in ps]


def sql_not(term):
    return f"NOT {term[0]}", term[1]


def sql_tags_have(tag):
    """The stack's tags (a JSON list) hold ``tag``."""
    if connection.vendor == "postgresql":
        return '(s."tags" @> %s::jsonb)', [json.dumps([tag])]
    return ("EXISTS (SELECT 1 FROM json_each(s.\"tags\") AS j WHERE j.type = 'text' "
            "AND j.value = %s)"), [tag]


def stack_pk_value(pk):
    """A stack id (a UUID) as the database takes it."""
    return Stack._meta.pk.get_db_prep_value(pk, connection)


def stack_sort_anchor(terms, sort_key, pk):
    """``(sort column's value, id)`` as stored of the stack ``pk`` among ``terms``, or None."""
    where = sql_all([*terms, ('s."id" = %s', [stack_pk_value(pk)])])
    column = Stack._meta.get_field(sort_key).column
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT s."{column}", s."id" FROM "{Stack._meta.db_table}" s '
                       f"WHERE {where[0]}", where[1])
        return cursor.fetchone()


def sql_after(sort_key, direction, anchor):
    """The stacks after ``anchor`` (``stack_sort_anchor``'s) in the list's order."""
    column = f's."{Stack._meta.get_field(sort_key).column}"'
    op = "<" if direction == "desc" else ">"
    return (f'({column} {op} %s OR ({column} = %s AND s."id" {op} %s))',
            [anchor[0], anchor[0], anchor[1]])


def stack_list_rows(terms, sort_key, direction, limit):
    """The summary rows (``stacks.selectors.stack_list``) of the stacks matching all
    ``terms``, sorted by ``sort_key`` then id in ``direction``, at most ``limit``."""
    names, sql = _list_sql()
    where = sql_all(terms) if terms else ("1 = 1", [])
    column = Stack._meta.get_field(sort_key).column
    order = "DESC" if direction == "desc" else "ASC"
    rows = written_sql.fetch(f'{sql} WHERE {where[0]} ORDER BY s."{column}" {order}, '
                             f's."id" {order} LIMIT %s', [*where[1], limit])
    converters = _list_converters(connection.ops)
    found = []
    for row in rows:
        row = list(row)
        for index, col, each in converters:
            for converter in each:
                row[index] = converter(row[index], col, connection)
        summary = dict(zip(names, row))
        text = summary.pop("description_json")
        summary["description"] = "" if text is None else json.loads(text)
        found.append(summary)
    return found


def _summary_fields():
    return [Stack._meta.get_field(name) for name in STACK_SUMMARY_FIELDS]


@functools.lru_cache(maxsize=8)
def _list_sql_for(vendor):
    fields = _summary_fields()
    user = get_user_model()._meta
    if vendor == "postgresql":
        member = [f"((t.\"template\") -> '{key}')::text" for key in ("description", "Description")]
    else:  # SQLite's -> answers the member's JSON text
        member = [f"(t.\"template\" -> '$.\"{key}\"')" for key in ("description", "Description")]
    columns = ", ".join([f's."{f.column}"' for f in fields] + [
        'u."username"', 'l."username"', f"COALESCE({member[0]}, {member[1]})"])
    names = [*STACK_SUMMARY_FIELDS, "owner", "locked_by_name", "description_json"]
    sql = (f'SELECT {columns} FROM "{Stack._meta.db_table}" s '
           f'LEFT OUTER JOIN "{user.db_table}" u ON u."{user.pk.column}" = s."user_id" '
           f'LEFT OUTER JOIN "{user.db_table}" l ON l."{user.pk.column}" = s."locked_by_id" '
           f'INNER JOIN "{RawTemplate._meta.db_table}" t '
           f'ON t."{RawTemplate._meta.pk.column}" = s."raw_template_id"')
    return names, sql


def _list_sql():
    return _list_sql_for(connection.vendor)


@functools.lru_cache(maxsize=8)
def _list_converters(ops):
    """``[(index, column, converters)]`` of the summary fields the ORM converts."""
    found = []
    for index, field in enumerate(_summary_fields()):
        col = field.get_col("s")
        converters = ops.get_db_converters(col) + col.get_db_converters(ops.connection)
        if converters:
            found.append((index, col, converters))
    return found
