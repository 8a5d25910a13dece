"""Reads used by the API and the pages."""
import json

from django.db import NotSupportedError
from django.db.models import F, Func, Q, TextField

from heatweb.api import as_uuid, page_limit
from heatweb.exceptions import BadRequest, EntityNotFound, HeatError
from stacks.definitions import definition_cache
from stacks.models import Event, Resource, Stack
from stacks.models import states as st
from stacks.plugins import InputLookup, node_data, plugin_for, stack_context

STACK_SORT_KEYS = {"stack_name": "name", "stack_status": "state", "creation_time": "created_at",
                   "updated_time": "updated_at"}
STACK_FILTERS = ("name", "status", "action", "id", "tenant", "username", "owner_id")
# The stack fields a summary shows (Heat's stack list), besides the owner's and
# the locker's names and the template's description.
STACK_SUMMARY_FIELDS = ("id", "name", "state", "status_reason", "created_at", "updated_at",
                        "deleted_at", "parent_id", "project_id", "tags", "lock_level",
                        "lock_reason", "locked_at", "lock_expires_at", "user_id",
                        "locked_by_id")


class JsonMemberText(Func):
    """One member of a JSON column, as JSON text (NULL when the key is absent).

    JSON text, unlike Django's KeyTransform, decodes to the same value on
    SQLite and PostgreSQL (KeyTransform turns the string "123" into 123 on
    SQLite, KT turns the number 123 into "123" on PostgreSQL).
    """

    output_field = TextField()

    def __init__(self, column, key, **extra):
        super().__init__(column, **extra)
        self.key = key

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"JsonMemberText does not support {connection.vendor}")

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) -> %s)::text", (*params, self.key)

    def as_sqlite(self, compiler, connection, **extra):
        # The -> operator (SQLite 3.38) answers the member's JSON text.
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) -> %s)", (*params, "$." + json.dumps(self.key))


def stack_get(project, name_or_id, stack_id=None, *, show_deleted=False):
    """One stack of the project by name, id, or name+id (404 otherwise)."""
    qs = Stack.objects.select_related("raw_template", "locked_by", "user").filter(project=project)
    if stack_id is not None:
        sid = as_uuid(stack_id)
        stack = _by_pk(qs, sid) if sid else None
        if stack is None or stack.name != name_or_id and str(stack.pk) != name_or_id:
            raise EntityNotFound(entity="Stack", name=name_or_id)
        return stack
    # As Heat's identify_stack: an id finds a deleted stack too (it shows
    # DELETE_COMPLETE), a name only a live one.
    live = qs if show_deleted else qs.filter(deleted_at__isnull=True)
    sid = as_uuid(name_or_id)
    stack = (_by_pk(qs, sid) if sid else None) or \
        live.filter(name=name_or_id).order_by("-created_at").first()
    if stack is None:
        raise EntityNotFound(entity="Stack", name=name_or_id)
    return stack


def _by_pk(qs, pk):
    """The row with this primary key, or None (get(), not first(): no ORDER BY to build)."""
    try:
        return qs.get(pk=pk)
    except qs.model.DoesNotExist:
        return None


def stack_list(project, *, params):
    """Summary rows of the project's stacks after Heat's filters, sort and marker/limit paging.

    A row is a dict of ``STACK_SUMMARY_FIELDS`` with ``owner`` and
    ``locked_by_name`` (user names) and the template's ``description``, as
    ``stack_summary_row`` gives it for a loaded stack: one query, no model
    instance and no template decoded per stack.
    """
    qs = Stack.objects.all()
    qs = qs.filter(project=project) if project is not None else qs
    scoped = qs
    if params.get("show_deleted") not in ("true", "True", "1"):
        qs = qs.filter(deleted_at__isnull=True)
    if params.get("show_nested") not in ("true", "True", "1"):
        qs = qs.filter(parent__isnull=True)
    for key in ("name", "status", "action", "id"):
        values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
        values = [v for v in values if v]
        if not values:
            continue
        cond = Q()
        for value in values:
            # Status and action as lists of whole states, so the (project, state) index serves.
            cond |= {"name": Q(name=value), "id": Q(pk=as_uuid(value)),
                     "status": Q(state__in=[s for s in st.ALL_STATES
                                            if s.endswith(f"_{value.upper()}")]),
                     "action": Q(state__in=[s for s in st.ALL_STATES
                                            if s.startswith(f"{value.upper()}_")])}[key]
        qs = qs.filter(cond)
    sort_key = STACK_SORT_KEYS.get(params.get("sort_keys") or "creation_time")
    if sort_key is None:
        raise BadRequest(f"Sort key {params.get('sort_keys')} is not supported.")
    direction = params.get("sort_dir") or "desc"
    if direction not in ("asc", "desc"):
        raise BadRequest(f"Unknown sort direction {direction}, must be 'desc' or 'asc'.")
    order = [("-" if direction == "desc" else "") + k for k in (sort_key, "id")]
    qs = qs.order_by(*order)
    marker = params.get("marker")
    if marker:
        # The marker is looked up among the stacks this list may show (the
        # caller's project): another project's stack id is "not found".
        anchor = scoped.filter(pk=as_uuid(marker)).values(sort_key, "id").first()
        if anchor is None:
            raise BadRequest(f"Marker {marker} not found.")
        op = "lt" if direction == "desc" else "gt"
        qs = qs.filter(Q(**{f"{sort_key}__{op}": anchor[sort_key]})
                       | Q(**{sort_key: anchor[sort_key], f"id__{op}": anchor["id"]}))
    rows = qs.values(*STACK_SUMMARY_FIELDS, owner=F("user__username"),
                     locked_by_name=F("locked_by__username"),
                     description_json=JsonMemberText("raw_template__template", "description"))
    return [_summary_row(row) for row in rows[:page_limit(params.get("limit"))]]


def _summary_row(row):
    text = row.pop("description_json")
    row["description"] = "" if text is None else json.loads(text)
    return row


def stack_summary_row(stack):
    """The summary row (as ``stack_list`` gives them) of a stack loaded with its template."""
    row = {field: getattr(stack, field) for field in STACK_SUMMARY_FIELDS}
    row["owner"] = stack.user.username if stack.user_id else None
    row["locked_by_name"] = stack.locked_by.username if stack.locked_by_id else None
    row["description"] = (stack.raw_template.template or {}).get("description", "")
    return row


def stack_resources(stack, *, nested_depth=0):
    """Current resources (nested ones down to ``nested_depth``), with their stack."""
    rows = list(Resource.objects.filter(stack=stack, replaced_by__isnull=True)
                .exclude(state="DELETE_COMPLETE").order_by("id"))
    for row in rows:
        row.stack = stack  # the one already loaded, rather than a copy joined per row
    if nested_depth > 0:
        children = Stack.objects.filter(parent=stack, deleted_at__isnull=True)
        for child in children:
            rows.extend(stack_resources(child, nested_depth=nested_depth - 1))
    return rows


def dependency_names(stack, rows):
    """``{resource name: names it depends on}`` for the stack's current ``rows``.

    A resource records what it requires when its action completes; one not
    created yet (or being created) takes its dependencies from the stack's
    template, so a graph read during a create has its edges too.
    """
    by_pk = {r.pk: r.name for r in rows}
    planned = {}
    if any(not r.requires for r in rows):
        try:
            planned = {n: d.depends_on for n, d in
                       definition_cache.get(stack).resources.items()}
        except HeatError:
            planned = {}
    names = set(by_pk.values())
    return {r.name: sorted(by_pk[k] for k in r.requires if k in by_pk) if r.requires else
            sorted(n for n in planned.get(r.name, ()) if n in names) for r in rows}


def required_by(deps):
    """The reverse of ``dependency_names``: ``{name: names that depend on it}``."""
    result = {}
    for name, needed in deps.items():
        for other in needed:
            result.setdefault(other, []).append(name)
    return {k: sorted(v) for k, v in result.items()}


def required_by_ids(rows):
    """``{resource pk: names of the resources that need it}`` over rows of one or more stacks."""
    per_stack = {}
    for r in rows:
        per_stack.setdefault(r.stack_id, (r.stack, []))[1].append(r)
    result = {}
    for stack, stack_rows in per_stack.values():
        needed_by = required_by(dependency_names(stack, stack_rows))
        result.update({r.pk: needed_by.get(r.name, []) for r in stack_rows})
    return result


def stack_resource(stack, name):
    res = (Resource.objects.filter(stack=stack, name=name, replaced_by__isnull=True)
           .exclude(state="DELETE_COMPLETE").select_related("stack").first())
    if res is None:
        raise EntityNotFound(entity="Resource", name=name)
    return res


def stack_events(stack, *, params, resource_name=None):
    qs = Event.objects.filter(stack=stack)
    if resource_name is not None:
        qs = qs.filter(resource_name=resource_name)
    for key, field in (("resource_action", "resource_action"),
                       ("resource_status", "resource_status"),
                       ("resource_name", "resource_name"),
                       ("resource_type", "resource_type")):
        values = params.getlist(key) if hasattr(params, "getlist") else []
        if values:
            qs = qs.filter(**{f"{field}__in": values})
    direction = params.get("sort_dir") or "asc"
    qs = qs.order_by("id" if direction == "asc" else "-id")
    marker = params.get("marker")
    if marker:
        anchor = Event.objects.filter(stack=stack, uuid=as_uuid(marker)).values("id").first()
        if anchor is None:
            raise BadRequest(f"Marker {marker} not found.")
        qs = qs.filter(id__gt=anchor["id"]) if direction == "asc" else qs.filter(id__lt=anchor["id"])
    return qs[:page_limit(params.get("limit"), default=10000)]


def stack_event(stack, event_id):
    event = Event.objects.filter(stack=stack, uuid=as_uuid(event_id)).first()
    if event is None:
        raise EntityNotFound(entity="Event", name=event_id)
    return event


def stack_outputs(stack):
    """Resolve the template's outputs from the stored resource data."""
    ctx = stack_context(stack)
    data = {}
    for res in Resource.objects.filter(stack=stack, replaced_by__isnull=True).exclude(
            state="DELETE_COMPLETE").exclude(state="INIT_COMPLETE"):
        data[res.name] = node_data(res, plugin_for(ctx, res)) \
            if res.name in ctx.definition.plugins else \
            {"id": res.pk, "name": res.name, "ref": None, "attrs": res.attributes_data}
    return ctx.definition.template.resolve_outputs(ctx.definition.params, InputLookup(data))
