"""The stack list reads summaries from SQL; they must say what the stack's show says."""
import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db.models import BooleanField, F, Func, Q, TextField
from django.db.models.functions import Coalesce
from django.http import QueryDict
from django.test import Client
from django.utils import timezone

from heatweb.api import as_uuid, page_limit
from heatweb.exceptions import BadRequest
from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks import selectors
from stacks.models import RawTemplate, Stack
from stacks.models import states as st

DESCRIPTIONS = ["123", "true", "null", 'say "hi"\né', 7, None, ""]
SUMMARY_KEYS = ("id", "stack_name", "links", "description", "stack_status",
                "stack_status_reason", "creation_time", "updated_time", "deletion_time",
                "stack_owner", "parent", "stack_user_project_id", "project", "tags", "locked",
                "lock_level", "lock_allow", "lock_reason", "locked_by", "locked_at", "lock_expires_at",
                "suspended")


@pytest.mark.django_db
def test_the_list_shows_each_stack_as_its_show_does():
    token, project = token_issue(username="lister", project_name="listing", role=Role.READER)
    owner = get_user_model().objects.get(username="lister")
    templates = [{"heat_template_version": "2018-08-31", "description": d, "resources": {}}
                 for d in DESCRIPTIONS] + [{"heat_template_version": "2018-08-31"}]
    for i, template in enumerate(templates):
        raw = RawTemplate.objects.create(template=template, files={}, environment={})
        Stack.objects.create(project=project, name=f"s{i}", raw_template=raw, user=owner,
                             state="CREATE_COMPLETE", tags=["a", "b"] if i == 1 else [],
                             current_traversal=str(uuid.uuid4()))
    now = timezone.now()
    Stack.objects.filter(name="s2").update(
        state="LOCK_COMPLETE", lock_level="all", lock_reason="maintenance", locked_by=owner,
        locked_at=now, lock_expires_at=now)
    Stack.objects.filter(name="s3").update(state="UNLOCK_COMPLETE",
                                           pre_lock_state="SUSPEND_COMPLETE")
    client = Client(HTTP_HOST="127.0.0.1")
    listed = client.get(f"/v1/{project.pk}/stacks?sort_keys=stack_name&sort_dir=asc",
                        HTTP_X_AUTH_TOKEN=token).json()["stacks"]
    assert [s["stack_name"] for s in listed] == [f"s{i}" for i in range(len(templates))]
    for summary, template in zip(listed, templates):
        assert summary["description"] == template.get("description", "")
        assert tuple(summary) == SUMMARY_KEYS
        shown = client.get(f"/v1/{project.pk}/stacks/{summary['stack_name']}/{summary['id']}",
                           HTTP_X_AUTH_TOKEN=token).json()["stack"]
        assert {key: shown[key] for key in SUMMARY_KEYS} == summary
    assert listed[1]["tags"] == ["a", "b"]
    assert listed[2]["locked"] is True and listed[2]["locked_by"] == "lister"
    assert listed[0]["stack_owner"] == "lister"
    assert [s["suspended"] for s in listed[:4]] == [False, False, False, True]


# The list's written-out statement against the same list built by the ORM
# (the query it replaced): same rows, in the same order, for each filter,
# sort, marker and paging, and the same errors.

class JsonMemberText(Func):
    """One member of a JSON column, as JSON text (NULL when the key is absent)."""

    output_field = TextField()

    def __init__(self, column, key, **extra):
        super().__init__(column, **extra)
        self.key = key

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) -> %s)::text", (*params, self.key)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) -> %s)", (*params, "$." + json.dumps(self.key))


class JsonListHas(Func):
    """Whether a JSON list column holds ``value`` (a string)."""

    output_field = BooleanField()

    def __init__(self, column, value, **extra):
        super().__init__(column, **extra)
        self.value = value

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) @> %s::jsonb)", (*params, json.dumps([self.value]))

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return (f"EXISTS (SELECT 1 FROM json_each({sql}) AS t WHERE t.type = 'text' "
                f"AND t.value = %s)"), (*params, self.value)


def _uuid_is(field, value):
    uid = as_uuid(value)
    return Q(**{field: uid}) if uid is not None else Q(pk__in=[])


def orm_stack_list(project, *, params):
    qs = Stack.objects.all()
    qs = qs.filter(project=project) if project is not None else qs
    scoped = qs
    if params.get("show_deleted") not in ("true", "True", "1"):
        qs = qs.filter(deleted_at__isnull=True)
    if params.get("show_nested") not in ("true", "True", "1"):
        qs = qs.filter(parent__isnull=True)
    hidden = Q()
    for tag in selectors.hidden_stack_tags(params):
        hidden |= Q(JsonListHas("tags", tag))
    qs = qs.exclude(hidden) if hidden else qs
    for key in selectors.STACK_FILTERS:
        values = [v for v in params.getlist(key) if v]
        if not values:
            continue
        cond = Q()
        for value in values:
            cond |= {"name": Q(name=value), "id": _uuid_is("pk", value),
                     "tenant": Q(project_id=value), "username": Q(user__username=value),
                     "owner_id": _uuid_is("parent_id", value),
                     "status": Q(state__in=[s for s in st.ALL_STATES
                                            if s.endswith(f"_{value.upper()}")]),
                     "action": Q(state__in=[s for s in st.ALL_STATES
                                            if s.startswith(f"{value.upper()}_")])}[key]
        qs = qs.filter(cond)
    for key in selectors.TAG_FILTERS:
        tags = [t.strip() for v in params.getlist(key) for t in v.split(",") if t.strip()]
        if tags:
            each = [Q(JsonListHas("tags", tag)) for tag in tags]
            combined = each[0]
            for term in each[1:]:
                combined = combined & term if key in ("tags", "not_tags") else combined | term
            qs = qs.filter(~combined if key.startswith("not_") else combined)
    sort_key = (selectors.sort_columns(params.getlist("sort_keys"), selectors.STACK_SORT_KEYS)
                or ["created_at"])[0]
    direction = params.get("sort_dir") or "desc"
    if direction not in ("asc", "desc"):
        raise BadRequest(f"Unknown sort direction {direction}, must be 'desc' or 'asc'.")
    qs = qs.order_by(*[("-" if direction == "desc" else "") + k for k in (sort_key, "id")])
    marker = params.get("marker")
    if marker:
        anchor = scoped.filter(pk=as_uuid(marker)).values(sort_key, "id").first()
        if anchor is None:
            raise BadRequest(f"Marker {marker} not found.")
        op = "lt" if direction == "desc" else "gt"
        qs = qs.filter(Q(**{f"{sort_key}__{op}": anchor[sort_key]})
                       | Q(**{sort_key: anchor[sort_key], f"id__{op}": anchor["id"]}))
    rows = qs.values(*selectors.STACK_SUMMARY_FIELDS, owner=F("user__username"),
                     locked_by_name=F("locked_by__username"),
                     description_json=Coalesce(
                         JsonMemberText("raw_template__template", "description"),
                         JsonMemberText("raw_template__template", "Description")))
    found = []
    for row in rows[:page_limit(params.get("limit"))]:
        text = row.pop("description_json")
        found.append({**row, "description": "" if text is None else json.loads(text)})
    return found


def _answer(lister, project, query):
    try:
        return lister(project, params=QueryDict(query))
    except (BadRequest, ValueError) as exc:  # ValueError: the ORM's, for a NULL marker value
        return type(exc).__name__, str(exc)


@pytest.mark.django_db
def test_the_written_out_list_answers_as_the_orm_query():
    _, project = token_issue(username="sql-lister", project_name="sql-listing", role=Role.READER)
    _, other = token_issue(username="sql-other", project_name="sql-other", role=Role.READER)
    owner = get_user_model().objects.get(username="sql-lister")
    raws = [RawTemplate.objects.create(template=t, files={}, environment={}) for t in (
        {"heat_template_version": "2018-08-31", "description": "hot"},
        {"AWSTemplateFormatVersion": "2010-09-09", "Description": 7}, {})]
    now = timezone.now()
    stacks = []
    for i in range(12):
        stacks.append(Stack.objects.create(
            project=other if i == 11 else project, name=f"s{i if i == 10 else i % 9}",
            raw_template=raws[i % 3],
            user=owner if i % 2 else None, state=["CREATE_COMPLETE", "UPDATE_FAILED",
                                                  "LOCK_COMPLETE", "SUSPEND_COMPLETE"][i % 4],
            tags=[["a"], ["a", "b"], [], ["b", "data-processing-cluster"]][i % 4],
            locked_by=owner if i % 4 == 2 else None, updated_at=now if i % 3 else None,
            deleted_at=now if i == 9 else None, current_traversal=str(uuid.uuid4())))
    Stack.objects.filter(pk__in=[stacks[5].pk, stacks[6].pk]).update(parent=stacks[4])
    Stack.objects.filter(pk=stacks[3].pk).update(created_at=stacks[2].created_at)  # a tie
    first, nested, updated = stacks[1].pk, stacks[4].pk, stacks[2].pk
    queries = [
        "", "limit=3", "limit=0", "limit=-1", "limit=x", "sort_dir=sideways",
        "status=COMPLETE&sort_keys=stack_name&sort_dir=asc&limit=20", "status=failed",
        "status=nonsense", "action=update&action=lock&sort_keys=stack_status",
        "sort_keys=creation_time&sort_dir=asc", "sort_keys=colour,stack_name",
        f"marker={first}&limit=3&sort_keys=stack_name&sort_dir=asc", f"marker={first}",
        f"marker={stacks[3].pk}&sort_keys=creation_time", f"marker={stacks[11].pk}",
        f"marker={updated}&sort_keys=updated_time", f"marker={stacks[0].pk}&sort_keys=updated_time",
        "marker=bogus", "tags=a", "tags=a,b", "tags_any=b&show_nested=true", "not_tags=a,b",
        "not_tags_any=a,b", "show_hidden=true&tags=b", "show_deleted=true&sort_keys=stack_name",
        f"id={first}&id=bad", "id=bad", f"owner_id={nested}&show_nested=1", "name=s1&name=s2",
        "username=sql-lister", "username=nobody", f"tenant={project.pk}", "tenant=other"]
    for query in queries:
        for scope in (project, None):
            assert _answer(selectors.stack_list, scope, query) == \
                _answer(orm_stack_list, scope, query), (query, scope)
