"""Reads used by the API and the pages."""
import functools
import json

from django.conf import settings
from django.db import NotSupportedError, connection
from django.db.models import BooleanField, F, Func, Q, TextField
from django.db.models.functions import Coalesce

from heatweb.api import as_uuid, page_limit, param_int
from heatweb.exceptions import BadRequest, EntityNotFound, HeatError
from stacks.definitions import definition_cache
from stacks.models import Event, Resource, Stack
from stacks.models import states as st
from stacks.plugins import InputLookup, node_data, plugin_for, stack_context
from stacks.resources import registry
from stacks.written_reads import stack_by_pk

STACK_SORT_KEYS = {"stack_name": "name", "stack_status": "state", "creation_time": "created_at",
                   "updated_time": "updated_at"}
STACK_FILTERS = ("name", "status", "action", "id", "tenant", "username", "owner_id")
# The stack fields a summary shows (Heat's stack list), besides the owner's and
# the locker's names and the template's description.
STACK_SUMMARY_FIELDS = ("id", "name", "state", "status_reason", "created_at", "updated_at",
                        "deleted_at", "parent_id", "project_id", "tags", "lock_level",
                        "lock_reason", "locked_at", "lock_expires_at", "user_id",
                        "locked_by_id", "pre_lock_state", "lock_allow", "lock_pending")


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


class JsonListHas(Func):
    """Whether a JSON list column holds ``value`` (a string), on SQLite and PostgreSQL."""

    output_field = BooleanField()

    def __init__(self, column, value, **extra):
        super().__init__(column, **extra)
        self.value = value

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"JsonListHas does not support {connection.vendor}")

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) @> %s::jsonb)", (*params, json.dumps([self.value]))

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"EXISTS (SELECT 1 FROM json_each({sql}) AS t WHERE t.type = 'text' "
                f"AND t.value = %s)"), (*params, self.value)


# Heat's tag filters of the stack list: each a comma-separated list of tags.
TAG_FILTERS = ("tags", "tags_any", "not_tags", "not_tags_any")


def _tag_list(params, key):
    values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
    tags = [t.strip() for v in values if v for t in str(v).split(",")]
    return [t for t in tags if t]


def tag_filter(params):
    """The ``Q`` of Heat's ``tags`` (all of), ``tags_any`` (any of), ``not_tags`` (not all
    of) and ``not_tags_any`` (none of) filters; an empty ``Q`` when none is given."""
    cond = Q()
    for key in TAG_FILTERS:
        tags = _tag_list(params, key)
        if not tags:
            continue
        each = [Q(JsonListHas("tags", tag)) for tag in tags]
        combined = each[0]
        for term in each[1:]:
            combined = combined & term if key in ("tags", "not_tags") else combined | term
        cond &= ~combined if key.startswith("not_") else combined
    return cond


def stack_get(project, name_or_id, stack_id=None, *, show_deleted=False):
    """One stack of the project by name, id, or name+id (404 otherwise)."""
    if stack_id is not None:
        sid = as_uuid(stack_id)
        stack = stack_by_pk(project, sid) if sid else None
        if stack is None or stack.name != name_or_id and str(stack.pk) != name_or_id:
            raise EntityNotFound(entity="Stack", name=name_or_id)
        return stack
    qs = Stack.objects.select_related("raw_template", "locked_by", "user").filter(project=project)
    # As Heat's identify_stack: an id finds a deleted stack too (it shows
    # DELETE_COMPLETE), a name only a live one.
    live = qs if show_deleted else qs.filter(deleted_at__isnull=True)
    sid = as_uuid(name_or_id)
    stack = (stack_by_pk(project, sid) if sid else None) or \
        live.filter(name=name_or_id).order_by("-created_at").first()
    if stack is None:
        raise EntityNotFound(entity="Stack", name=name_or_id)
    return stack


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
    qs = exclude_hidden_stacks(qs, params)
    for key in STACK_FILTERS:
        values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
        values = [v for v in values if v]
        if not values:
            continue
        cond = Q()
        for value in values:
            # Status and action as lists of whole states, so the (project, state) index serves.
            cond |= {"name": Q(name=value), "id": _uuid_is("pk", value),
                     "tenant": Q(project_id=value), "username": Q(user__username=value),
                     # Heat's owner_id: the parent stack (found with show_nested, as in Heat)
                     "owner_id": _uuid_is("parent_id", value),
                     "status": Q(state__in=[s for s in st.ALL_STATES
                                            if s.endswith(f"_{value.upper()}")]),
                     "action": Q(state__in=[s for s in st.ALL_STATES
                                            if s.startswith(f"{value.upper()}_")])}[key]
        qs = qs.filter(cond)
    qs = qs.filter(tag_filter(params))
    sort_key = (sort_columns(_values(params, "sort_keys"), STACK_SORT_KEYS) or
                ["created_at"])[0]
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
                     description_json=Coalesce(  # a CloudFormation template's "Description"
                         JsonMemberText("raw_template__template", "description"),
                         JsonMemberText("raw_template__template", "Description")))
    return [_summary_row(row) for row in rows[:page_limit(params.get("limit"))]]


def _uuid_is(field, value):
    """``field`` equals the UUID ``value``; nothing matches a value that is no UUID."""
    uid = as_uuid(value)
    return Q(**{field: uid}) if uid is not None else Q(pk__in=[])


def exclude_hidden_stacks(qs, params):
    """Heat's ``hidden_stack_tags``: stacks with a hidden tag (``HEATWEB_HIDDEN_STACK_TAGS``)
    are left out of a list unless it asks ``show_hidden=true``."""
    hidden = settings.HEATWEB["HIDDEN_STACK_TAGS"]
    if not hidden or str(params.get("show_hidden")).lower() in ("true", "1", "yes", "on"):
        return qs
    cond = Q()
    for tag in hidden:
        cond |= Q(JsonListHas("tags", tag))
    return qs.exclude(cond)


def _summary_row(row):
    text = row.pop("description_json")
    row["description"] = "" if text is None else json.loads(text)
    return row


def template_description(template):
    """A template's description: HOT's ``description`` or CloudFormation's ``Description``."""
    template = template or {}
    return template.get("description", template.get("Description", ""))


def stack_summary_row(stack):
    """The summary row (as ``stack_list`` gives them) of a stack loaded with its template."""
    row = {field: getattr(stack, field) for field in STACK_SUMMARY_FIELDS}
    row["owner"] = stack.user.username if stack.user_id else None
    row["locked_by_name"] = stack.locked_by.username if stack.locked_by_id else None
    row["description"] = template_description(stack.raw_template.template)
    return row


def stack_resources(stack, *, nested_depth=0):
    """Current resources (nested ones down to ``nested_depth``), with their stack."""
    rows = current_resources(stack, ordered=True)
    for row in rows:
        row.stack = stack  # the one already loaded, rather than a copy joined per row
    if nested_depth > 0:
        children = Stack.objects.filter(parent=stack, deleted_at__isnull=True)
        for child in children:
            rows.extend(stack_resources(child, nested_depth=nested_depth - 1))
    return rows


def nested_stack_names(rows):
    """``{nested stack id: name}`` of the nested stacks the resource ``rows`` own."""
    ids = {as_uuid(str(r.plugin_data.get("nested_stack_id") or r.physical_resource_id))
           for r in rows if r.type == "OS::Heat::Stack" or r.plugin_data.get("nested_stack_id")}
    ids.discard(None)
    return {str(pk): name for pk, name in
            Stack.objects.filter(pk__in=ids).values_list("pk", "name")} if ids else {}


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


# Heat's resource list: its filters (each may repeat) and its other parameters.
RESOURCE_FILTERS = ("type", "status", "name", "action", "id", "physical_resource_id")
RESOURCE_LIST_PARAMS = (*RESOURCE_FILTERS, "nested_depth", "with_detail")
EVENT_FILTERS = ("resource_action", "resource_status", "resource_name", "resource_type")
EVENT_SORT_KEYS = {"event_time": "created_at", "resource_type": "resource_type",
                   "resource_name": "resource_name", "resource_action": "resource_action",
                   "resource_status": "resource_status"}


def sort_columns(keys, mapping):
    """The columns of the sort keys a list knows, in order; the others are dropped, as
    Heat's ``_get_sort_keys`` drops them (``sort_keys=colour`` is the default order)."""
    return [mapping[part.strip()] for key in keys for part in key.split(",")
            if part.strip() in mapping]


def check_list_params(params, known):
    """400 for a query parameter the list does not know. Only Heat's resource list does
    this; its other lists read the parameters they know and ignore the rest."""
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise BadRequest(f"Invalid filter parameters {unknown}")


def _values(params, key):
    values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
    return [v for v in values if v not in (None, "")]


def _resource_matches(res, key, values):
    if key == "type":  # Heat: a substring of the type ("Server" finds OS::Nova::Server)
        return any(v in res.type for v in values)
    if key in ("status", "action"):
        return getattr(res, key) in {v.upper() for v in values}
    if key == "id":
        return str(res.uuid) in values or str(res.pk) in values
    return getattr(res, key) in values


def filter_resources(rows, params):
    """The rows of ``stack_resources`` that pass Heat's resource list filters."""
    for key in RESOURCE_FILTERS:
        values = _values(params, key)
        if values:
            rows = [r for r in rows if _resource_matches(r, key, values)]
    return rows


def nested_stack_tree(stack, depth):
    """``{id: stack}`` of ``stack`` and its live nested stacks down to ``depth`` levels."""
    found = {stack.pk: stack}
    level = [stack.pk]
    for _ in range(max(depth, 0)):
        children = list(Stack.objects.filter(parent_id__in=level, deleted_at__isnull=True))
        if not children:
            break
        found.update({c.pk: c for c in children})
        level = [c.pk for c in children]
    return found


def stack_events(stack, *, params, resource_name=None):
    """Events of the stack (and of its nested stacks to ``nested_depth``) after Heat's
    filters, sort keys and marker/limit paging; each event's ``stack`` is set."""
    depth = param_int(params.get("nested_depth"), "nested_depth", default=0)
    if depth < 0:
        raise BadRequest("nested_depth must not be negative.")
    stacks = nested_stack_tree(stack, depth)
    qs = Event.objects.filter(stack_id__in=list(stacks))
    if resource_name is not None:
        qs = qs.filter(resource_name=resource_name)
    for key in EVENT_FILTERS:
        values = _values(params, key)
        if values:
            qs = qs.filter(**{f"{key}__in": values})
    # Heat's event list reads only the parameters it knows (heat-dashboard always
    # sends sort_key=event_time, which Heat ignores) and drops unknown sort keys.
    keys = [*sort_columns(_values(params, "sort_keys"), EVENT_SORT_KEYS), "id"]
    direction = params.get("sort_dir") or "asc"
    if direction not in ("asc", "desc"):
        raise BadRequest(f"Unknown sort direction {direction}, must be 'desc' or 'asc'.")
    qs = qs.order_by(*[("-" if direction == "desc" else "") + k for k in keys])
    marker = params.get("marker")
    if marker:
        anchor = Event.objects.filter(stack_id__in=list(stacks), uuid=as_uuid(marker)) \
            .values(*keys).first()
        if anchor is None:
            raise BadRequest(f"Marker {marker} not found.")
        qs = qs.filter(_after(keys, anchor, "lt" if direction == "desc" else "gt"))
    events = list(qs[:page_limit(params.get("limit"), default=10000)])
    for event in events:
        event.stack = stacks[event.stack_id]
    return events


def _after(keys, anchor, op):
    """Rows after ``anchor`` in the order of ``keys`` (keyset paging on several keys)."""
    cond = Q()
    for i, key in enumerate(keys):
        equal = {k: anchor[k] for k in keys[:i]}
        cond |= Q(**equal, **{f"{key}__{op}": anchor[key]})
    return cond


def stack_event(stack, event_id):
    event = Event.objects.filter(stack=stack, uuid=as_uuid(event_id)).first()
    if event is None:
        raise EntityNotFound(entity="Event", name=event_id)
    return event


def event_resource_properties(stack, event):
    """The properties of the resource an event is about (Heat's event show fills
    ``resource_properties``): the row with the event's physical id, else the newest of
    that name; ``{}`` for the stack's own events. heatweb keeps no copy per event, so
    this is the resource's properties now (the same as at the event unless an update
    changed them since)."""
    rows = Resource.objects.filter(stack=stack, name=event.resource_name)
    if event.physical_resource_id:
        same = rows.filter(physical_resource_id=event.physical_resource_id).order_by("-id")
        row = same.first() or rows.order_by("-id").first()
    else:
        row = rows.order_by("-id").first()
    return dict(row.properties_data or {}) if row is not None else {}


def resource_metadata_shown(res):
    """A resource's metadata: the template's, and what its type adds (a handle's signals)."""
    return registry.plugin_or_base(res.type).shown_metadata(res)


def resource_attributes(res):
    """The attributes a resource's show lists: the stored ones, a group's members' read
    from their rows (the group stores only where they are)."""
    return registry.plugin_or_base(res.type).shown_attributes(res.attributes_data or {})


def stored_lookup(stack, ctx=None):
    """``get_resource``/``get_attr`` of a stack's resources from their stored data."""
    ctx = ctx or stack_context(stack)
    data = {}
    for res in current_resources(stack, initialised=True):
        data[res.name] = node_data(res, plugin_for(ctx, res)) \
            if res.name in ctx.definition.plugins else \
            {"id": res.pk, "name": res.name, "ref": None, "attrs": res.attributes_data}
    return InputLookup(data, ctx.definition.plugins)


def current_resources(stack, *, ordered=False, initialised=False):
    """The stack's resources not replaced and not deleted (nor ``INIT_COMPLETE`` ones when
    ``initialised``), by id when ``ordered``.

    The show and the resource list of every stack read these, so the query is
    written out (``raw()``) rather than built by the ORM on each call, which
    cost ~20 times the statement (docs/benchmarks.md, bench_api).
    """
    excluded = ["DELETE_COMPLETE"] + ([st.INIT_COMPLETE] if initialised else [])
    stack_id = Resource._meta.get_field("stack").get_db_prep_value(stack.pk, connection)
    return list(Resource.objects.raw(_current_resources_sql(len(excluded), ordered),
                                     [stack_id, *excluded]))


@functools.cache
def _current_resources_sql(excluded, ordered):
    table = Resource._meta.db_table
    return (f'SELECT * FROM "{table}" WHERE "replaced_by_id" IS NULL AND "stack_id" = %s'
            + ' AND NOT ("state" = %s)' * excluded + (' ORDER BY "id" ASC' if ordered else ""))


def stack_outputs(stack):
    """Resolve the template's outputs from the stored resource data."""
    ctx = stack_context(stack)
    return ctx.definition.template.resolve_outputs(ctx.definition.params,
                                                   stored_lookup(stack, ctx))
