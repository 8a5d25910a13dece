"""Reads run a fixed number of SQL statements, however many stacks they show."""
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.models import RawTemplate, Resource, Stack

TEMPLATE = {"heat_template_version": "2018-08-31", "description": "d",
            "resources": {"a": {"type": "OS::Heat::None"}}}


def add_stacks(project, count, *, start):
    raw = RawTemplate.objects.create(template=TEMPLATE, files={}, environment={})
    stacks = Stack.objects.bulk_create(
        Stack(project=project, name=f"s{i:03d}", raw_template=raw, state="CREATE_COMPLETE",
              current_traversal=str(uuid.uuid4())) for i in range(start, start + count))
    Resource.objects.bulk_create(Resource(stack=s, name="a", type="OS::Heat::None",
                                          state="CREATE_COMPLETE") for s in stacks)


def statements(client, path, **headers):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, **headers)
    assert response.status_code == 200, response.content[:300]
    return len(captured), response


@pytest.mark.django_db
def test_stack_list_statements_do_not_grow_with_the_stacks_shown():
    token, project = token_issue(username="reader", project_name="reads", role=Role.READER)
    client = Client(HTTP_HOST="127.0.0.1")
    path = f"/v1/{project.pk}/stacks?status=COMPLETE&sort_keys=stack_name"
    add_stacks(project, 3, start=0)
    few, response = statements(client, path, HTTP_X_AUTH_TOKEN=token)
    assert len(response.json()["stacks"]) == 3
    add_stacks(project, 40, start=3)
    many, response = statements(client, path, HTTP_X_AUTH_TOKEN=token)
    assert len(response.json()["stacks"]) == 43
    assert many == few


@pytest.mark.django_db
def test_show_and_resource_list_read_three_statements():
    """The token with the project access, the stack, its resources: a resource field the
    read left deferred (``selectors.RESOURCE_LIST_FIELDS``, ``RESOURCE_LOOKUP_FIELDS``)
    and then used would show here as a statement more."""
    token, project = token_issue(username="shower", project_name="show-reads", role=Role.READER)
    client = Client(HTTP_HOST="127.0.0.1")
    add_stacks(project, 1, start=0)
    stack = Stack.objects.get(project=project)
    path = f"/v1/{project.pk}/stacks/{stack.name}/{stack.pk}"
    for each in (path, f"{path}/resources"):
        count, response = statements(client, each, HTTP_X_AUTH_TOKEN=token)
        assert count == 3, each
        assert "Vary" not in response and not response.cookies


@pytest.mark.django_db
@pytest.mark.parametrize("role", [Role.READER, Role.MEMBER])  # a member's rows have menus
def test_stacks_page_statements_do_not_grow_with_the_stacks_shown(role):
    token, project = token_issue(username="viewer", project_name="page-reads", role=role)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="viewer"))
    client.get("/")  # a new session's first page saves the project it shows
    add_stacks(project, 2, start=0)
    few, response = statements(client, "/")
    assert b"s001" in response.content and b"s002" not in response.content
    add_stacks(project, 18, start=2)
    many, response = statements(client, "/")
    assert b"s019" in response.content
    assert (b'class="row-menu"' in response.content) == (role == Role.MEMBER)
    assert many == few


@pytest.mark.django_db
def test_a_page_view_that_only_reads_writes_nothing():
    token_issue(username="looker", project_name="quiet-reads", role=Role.READER)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username="looker"))
    with CaptureQueriesContext(connection) as first:
        client.get("/")
    with CaptureQueriesContext(connection) as second:
        response = client.get("/")
    assert response.status_code == 200
    writes = [q["sql"] for q in second.captured_queries
              if q["sql"].split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []
    assert any(q["sql"].startswith("UPDATE") or q["sql"].startswith("INSERT")
               for q in first.captured_queries)  # the session got its project once
