"""The query string's budgets: too many parameters, or too many values in one filter, are a
400 in Heat's error format on every list, never a 500.

More than 1,000 parameters on the stack list was Django's ``TooManyFieldsSent``
(a 500); about 1,000 values in one tag filter or a repeated ``name`` was a 500
in the embedded mode (SQLite: "Expression tree is too large"). The budgets
(``HEATWEB_MAX_QUERY_PARAMS``, 200; ``HEATWEB_MAX_FILTER_VALUES``, 100 values
of one parameter, each comma-separated item counted) are checked before
anything parses the query string.
"""
import time
import uuid

import pytest
import requests

pytestmark = pytest.mark.live

TEMPLATE = {"heat_template_version": "2016-10-14",
            "resources": {"n": {"type": "OS::Heat::None"}}}
MAX_PARAMS = 200
MAX_VALUES = 100


@pytest.fixture(scope="module")
def api(live_service):
    tag = uuid.uuid4().hex[:6]
    info = live_service.issue_token(f"qb-{tag}", f"qb-{tag}")
    session = requests.Session()
    session.headers["X-Auth-Token"] = info["token"]
    endpoint = info["endpoint"]
    made = session.post(f"{endpoint}/stacks", json={"stack_name": "budget", "template": TEMPLATE,
                                                    "tags": "a,b"})
    assert made.status_code == 201, made.text
    stack = f"{endpoint}/stacks/budget/{made.json()['stack']['id']}"
    deadline = time.monotonic() + 60
    while session.get(stack).json()["stack"]["stack_status"] != "CREATE_COMPLETE":
        assert time.monotonic() < deadline, "the stack was not made"
        time.sleep(0.3)
    return session, endpoint, stack


def lists(endpoint, stack):
    """Every list that takes filters."""
    return {"stacks": f"{endpoint}/stacks", "resources": f"{stack}/resources",
            "events": f"{stack}/events", "resource events": f"{stack}/resources/n/events",
            "software configs": f"{endpoint}/software_configs",
            "software deployments": f"{endpoint}/software_deployments",
            "lock records": f"{stack}/locks", "locked stacks": f"{endpoint}/locks",
            "lock windows": f"{stack}/lock_windows", "snapshots": f"{stack}/snapshots"}


def refused(answer, words):
    assert answer.status_code == 400, (answer.status_code, answer.text[:300])
    body = answer.json()
    assert body["code"] == 400 and body["title"] == "Bad Request", body
    assert body["error"]["type"] == "RequestLimitExceeded", body
    assert words in body["error"]["message"], body


LIST_NAMES = ["stacks", "resources", "events", "resource events", "software configs",
              "software deployments", "lock records", "locked stacks", "lock windows",
              "snapshots"]


@pytest.mark.parametrize("name", LIST_NAMES)
def test_more_parameters_than_the_budget_is_a_400_on_every_list(api, name):
    session, endpoint, stack = api
    url = lists(endpoint, stack)[name]
    for count in (MAX_PARAMS + 1, 1001, 5000):
        query = "&".join(f"p{i}=x" for i in range(count))
        refused(session.get(f"{url}?{query}"),
                f"the query string has {count} parameters, more than {MAX_PARAMS}")


@pytest.mark.parametrize("name", LIST_NAMES)
def test_more_values_of_one_filter_than_the_budget_is_a_400_on_every_list(api, name):
    session, endpoint, stack = api
    url = lists(endpoint, stack)[name]
    key = {"stacks": "name", "resources": "name", "events": "resource_name",
           "resource events": "resource_status", "software deployments": "server_id",
           "lock records": "kind"}.get(name, "marker")
    query = "&".join(f"{key}=v{i}" for i in range(MAX_VALUES + 1))
    refused(session.get(f"{url}?{query}"),
            f"the query parameter '{key}' has {MAX_VALUES + 1} values, more than {MAX_VALUES}")


@pytest.mark.parametrize("key", ["tags", "tags_any", "not_tags", "not_tags_any"])
def test_a_thousand_tags_in_one_tag_filter_is_a_400(api, key):
    session, endpoint, _ = api
    tags = ",".join(f"t{i}" for i in range(1000))
    refused(session.get(f"{endpoint}/stacks", params={key: tags}),
            f"the query parameter '{key}' has 1000 values, more than {MAX_VALUES}")
    query = "&".join(f"{key}=t{i}" for i in range(MAX_VALUES + 1))
    refused(session.get(f"{endpoint}/stacks?{query}"), f"'{key}' has {MAX_VALUES + 1} values")


@pytest.mark.parametrize("key", ["name", "id", "status", "action", "tenant", "username",
                                 "owner_id"])
def test_a_thousand_or_150_values_of_a_repeated_stack_filter_is_a_400(api, key):
    session, endpoint, _ = api
    query = "&".join(f"{key}=v{i}" for i in range(1000))
    refused(session.get(f"{endpoint}/stacks?{query}"), "the query string has 1000 parameters")
    query = "&".join(f"{key}=v{i}" for i in range(150))
    refused(session.get(f"{endpoint}/stacks?{query}"), f"'{key}' has 150 values")


@pytest.mark.parametrize("key, value, expected", [
    ("tags", "a,b", ["budget"]), ("tags_any", "a", ["budget"]), ("not_tags", "a,b", ["budget"]),
    ("not_tags_any", "b", []), ("name", "budget", ["budget"]), ("status", "COMPLETE", ["budget"]),
])
def test_filters_at_the_budget_still_answer(api, key, value, expected):
    """The budget's own number of values is answered (in SQLite and PostgreSQL alike)."""
    session, endpoint, _ = api
    values = [value] + [f"z{i}" for i in range(MAX_VALUES - value.count(",") - 2)]
    if key.startswith("tags") or key.startswith("not_tags"):
        query = {key: ",".join(values)}
        if key == "tags":  # all of: the extra tags would match nothing
            query = {key: value, "tags_any": ",".join(values)}
    else:
        query = {key: values}
    answer = session.get(f"{endpoint}/stacks", params=query)
    assert answer.status_code == 200, answer.text[:300]
    assert [s["stack_name"] for s in answer.json()["stacks"]] == expected
    params = "&".join(f"p{i}=x" for i in range(MAX_PARAMS - 1))
    assert session.get(f"{endpoint}/stacks?{params}&name=budget").status_code == 200


def test_every_stack_filter_at_its_budget_at_once_still_answers(api):
    session, endpoint, _ = api
    tags = ",".join(["a"] + [f"z{i}" for i in range(MAX_VALUES - 1)])
    query = "&".join([f"{key}={tags}" for key in ("tags_any", "not_tags", "not_tags_any")]
                     + ["tags=a,b"] + [f"name={n}" for n in ["budget"] +
                                       [f"n{i}" for i in range(MAX_VALUES - 1)]]
                     + [f"status={s}" for s in ["COMPLETE", "FAILED"]])
    answer = session.get(f"{endpoint}/stacks?{query}")
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["stacks"] == []  # not_tags_any holds "a"
