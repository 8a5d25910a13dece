"""Reads used by the API and the pages."""
import functools

from django.conf import settings
from django.db import connection
from django.db.models import Q

from heatweb import written_sql
from heatweb.api import as_uuid, page_limit, param_int
from heatweb.exceptions import BadRequest, EntityNotFound, HeatError
from stacks.definitions import definition_cache
from stacks.models import Event, Resource, Stack
from stacks.models import states as st
from stacks.plugins import InputLookup, node_data, plugin_for, stack_context
from stacks.resources import registry, stack_user
from stacks.resources.compute import METADATA_QUEUE
from stacks import written_reads as written
from stacks.written_reads import STACK_SUMMARY_FIELDS, stack_by_pk

STACK_SORT_KEYS = {"stack_name": "name", "stack_status": "state", "creation_time": "created_at",
                   "updated_time": "updated_at"}
STACK_FILTERS = ("name", "status", "action", "id", "tenant", "username", "owner_id")


# Heat's tag filters of the stack list: each a comma-separated list of tags.
TAG_FILTERS = ("tags", "tags_any", "not_tags", "not_tags_any")


def _tag_list(params, key):
    values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
    tags = [t.strip() for v in values if v for t in str(v).split(",")]
    return [t for t in tags if t]


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
    instance and no template decoded per stack. The statement is written
    out (``stacks.written_reads.stack_list_rows``): the ORM took ~2 ms of
    CPU to build and compile it for a 0.2 ms statement (docs/benchmarks.md).
    """
    where = []  # (SQL, params) terms, ANDed
    if project is not None:
        where.append(('s."project_id" = %s', [project.pk]))
    scoped = list(where)
    if params.get("show_deleted") not in ("true", "True", "1"):
        where.append(('s."deleted_at" IS NULL', []))
    if params.get("show_nested") not in ("true", "True", "1"):
        where.append(('s."parent_id" IS NULL', []))
    hidden = hidden_stack_tags(params)
    if hidden:
        where.append(written.sql_not(written.sql_any([written.sql_tags_have(t) for t in hidden])))
    for key in STACK_FILTERS:
        values = params.getlist(key) if hasattr(params, "getlist") else [params.get(key)]
        values = [v for v in values if v]
        if values:
            where.append(written.sql_any([_stack_filter_sql(key, value) for value in values]))
    where.extend(_tag_filter_sql(params))
    sort_key = (sort_columns(_values(params, "sort_keys"), STACK_SORT_KEYS) or
                ["created_at"])[0]
    direction = params.get("sort_dir") or "desc"
    if direction not in ("asc", "desc"):
        raise BadRequest(f"Unknown sort direction {direction}, must be 'desc' or 'asc'.")
    marker = params.get("marker")
    if marker:
        # The marker is looked up among the stacks this list may show (the
        # caller's project): another project's stack id is "not found".
        marker_id = as_uuid(marker)
        anchor = written.stack_sort_anchor(scoped, sort_key, marker_id) if marker_id else None
        if anchor is None:
            raise BadRequest(f"Marker {marker} not found.")
        if anchor[0] is None:  # as the ORM's lookup refused it (a NULL updated_at)
            raise ValueError("Cannot use None as a query value")
        where.append(written.sql_after(sort_key, direction, anchor))
    return written.stack_list_rows(where, sort_key, direction,
                                   page_limit(params.get("limit")))


def _stack_filter_sql(key, value):
    """The SQL term of one value of one of Heat's stack list filters."""
    if key in ("id", "owner_id"):
        uid = as_uuid(value)
        if uid is None:  # no UUID: matches nothing
            return "1 = 0", []
        column = "id" if key == "id" else "parent_id"
        return f's."{column}" = %s', [written.stack_pk_value(uid)]
    if key in ("status", "action"):
        # Status and action as lists of whole states, so the (project, state) index serves.
        value = value.upper()
        states = [s for s in st.ALL_STATES
                  if (s.endswith(f"_{value}") if key == "status" else s.startswith(f"{value}_"))]
        if not states:
            return "1 = 0", []
        return f's."state" IN ({", ".join(["%s"] * len(states))})', states
    column = {"name": 's."name"', "tenant": 's."project_id"', "username": 'u."username"'}[key]
    return f"{column} = %s", [value]


def _tag_filter_sql(params):
    """``tag_filter``'s terms as SQL: ``tags`` (all of), ``tags_any`` (any of),
    ``not_tags`` (not all of) and ``not_tags_any`` (none of)."""
    terms = []
    for key in TAG_FILTERS:
        tags = _tag_list(params, key)
        if not tags:
            continue
        each = [written.sql_tags_have(tag) for tag in tags]
        combined = written.sql_all(each) if key in ("tags", "not_tags") else \
            written.sql_any(each)
        terms.append(written.sql_not(combined) if key.startswith("not_") else combined)
    return terms


def hidden_stack_tags(params):
    """Heat's ``hidden_stack_tags``: stacks with a hidden tag (``HEATWEB_HIDDEN_STACK_TAGS``)
    are left out of a list unless it asks ``show_hidden=true``; the tags left out."""
    hidden = settings.HEATWEB["HIDDEN_STACK_TAGS"]
    if not hidden or str(params.get("show_hidden")).lower() in ("true", "1", "yes", "on"):
        return []
    return list(hidden)


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


# The fields of a resource row the resource list shows without ``with_detail`` (and filters
# and orders by): the rest (properties, attributes, metadata, the action's cookie: JSON
# decoded on every read) stays deferred.
RESOURCE_LIST_FIELDS = ("id", "uuid", "stack", "name", "type", "physical_resource_id",
                        "plugin_data", "state", "status_reason", "requires", "created_at",
                        "updated_at")
# The fields ``stored_lookup`` reads of a row: its plugin (``plugins.plugin_for``, the
# deletion policy of one being deleted), its reference and its attributes.
RESOURCE_LOOKUP_FIELDS = ("id", "stack", "name", "type", "physical_resource_id",
                          "properties_data", "attributes_data", "plugin_data", "state",
                          "template")


def stack_resources(stack, *, nested_depth=0, fields=None):
    """Current resources (nested ones down to ``nested_depth``), with their stack; only
    ``fields`` of them (``current_resources``) when given."""
    rows = current_resources(stack, ordered=True, fields=fields)
    for row in rows:
        row.stack = stack  # the one already loaded, rather than a copy joined per row
    if nested_depth > 0:
        children = Stack.objects.filter(parent=stack, deleted_at__isnull=True)
        for child in children:
            rows.extend(stack_resources(child, nested_depth=nested_depth - 1, fields=fields))
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


def metadata_queue_server(project_id, server_id):
    """The server resource of the project whose physical id is ``server_id`` and whose
    metadata goes to a Zaqar queue (``ZAQAR_MESSAGE``), unless it is being deleted (Heat's
    ``resource_get_by_physical_resource_id``, a ``DELETE`` action left out); None otherwise."""
    return (Resource.objects.filter(stack__project_id=project_id,
                                    physical_resource_id=str(server_id),
                                    plugin_data__has_key=METADATA_QUEUE)
            .exclude(state__startswith="DELETE").select_related("stack").first())


def resource_by_access_key(access_key):
    """The live resource (its stack not deleted) whose EC2 key pair has ``access_key``
    (``stacks.resources.stack_user.ensure_keypair``), its stack read with it; None when
    none has."""
    return (Resource.objects.filter(**{f"plugin_data__{stack_user.ACCESS_KEY}": access_key})
            .exclude(state="DELETE_COMPLETE").filter(stack__deleted_at__isnull=True)
            .select_related("stack").order_by("-id").first())


def resource_attributes(res):
    """The attributes a resource's show lists: the stored ones, a group's members' read
    from their rows (the group stores only where they are)."""
    return registry.plugin_or_base(res.type).shown_attributes(res.attributes_data or {})


def stored_lookup(stack, ctx=None):
    """``get_resource``/``get_attr`` of a stack's resources from their stored data."""
    ctx = ctx or stack_context(stack)
    data = {}
    for res in current_resources(stack, initialised=True, fields=RESOURCE_LOOKUP_FIELDS):
        data[res.name] = node_data(res, plugin_for(ctx, res)) \
            if res.name in ctx.definition.plugins else \
            {"id": res.pk, "name": res.name, "ref": None, "attrs": res.attributes_data}
    return InputLookup(data, ctx.definition.plugins)


def current_resources(stack, *, ordered=False, initialised=False, fields=None):
    """The stack's resources not replaced and not deleted (nor ``INIT_COMPLETE`` ones when
    ``initialised``), by id when ``ordered``; only ``fields`` (a tuple of field names) are
    read when given, the others deferred (as ``only()`` leaves them).

    The show and the resource list of every stack read these, so the query is
    written out (``raw()``) rather than built by the ORM on each call, which
    cost ~20 times the statement (docs/benchmarks.md, bench_api).
    """
    excluded = ["DELETE_COMPLETE"] + ([st.INIT_COMPLETE] if initialised else [])
    stack_id = Resource._meta.get_field("stack").get_db_prep_value(stack.pk, connection)
    return [written_sql.instance(Resource, "r", row, fields) for row in written_sql.fetch(
        _current_resources_sql(len(excluded), ordered, fields), [stack_id, *excluded])]


@functools.cache
def _current_resources_sql(excluded, ordered, fields=None):
    table = Resource._meta.db_table
    return (f'SELECT {written_sql.columns(Resource, "r", fields)} FROM "{table}" r '
            'WHERE r."replaced_by_id" IS NULL AND r."stack_id" = %s'
            + ' AND NOT (r."state" = %s)' * excluded + (' ORDER BY r."id" ASC' if ordered else ""))


def stack_outputs(stack):
    """Resolve the template's outputs from the stored resource data."""
    ctx = stack_context(stack)
    return ctx.definition.template.resolve_outputs(ctx.definition.params,
                                                   stored_lookup(stack, ctx))
