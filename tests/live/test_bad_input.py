"""Bad input gets a clear 4xx in Heat's error shape and stores nothing."""
import json
import uuid

import pytest
import requests

pytestmark = pytest.mark.live

GOOD = {"heat_template_version": "2016-10-14",
        "parameters": {"flavor": {"type": "string", "default": "m1.tiny",
                                  "constraints": [{"allowed_values": ["m1.tiny", "m1.small"],
                                                   "description": "Must be tiny or small"}]},
                       "count": {"type": "number", "default": 1}},
        "resources": {"a": {"type": "OS::Heat::None"}}}


class Api:
    def __init__(self, base, token):
        self.base, self.session = base, requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "Content-Type": "application/json"})

    def request(self, method, path, body=None, raw=None, **kw):
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        return self.session.request(method, self.base + path, data=data,
                                    allow_redirects=False, **kw)


@pytest.fixture(scope="module")
def api(live_service):
    info = live_service.issue_token(f"bad-{uuid.uuid4().hex[:6]}", f"bad-{uuid.uuid4().hex[:6]}")
    return Api(info["endpoint"], info["token"])


def assert_heat_error(resp, status, error_type, *fragments):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"code", "title", "explanation", "error"}
    assert body["code"] == status
    assert set(body["error"]) == {"type", "message", "traceback"}
    assert body["error"]["traceback"] is None
    if isinstance(error_type, tuple):
        assert body["error"]["type"] in error_type, body
    else:
        assert body["error"]["type"] == error_type, body
    for fragment in fragments:
        assert fragment in body["error"]["message"], body["error"]["message"]
    return body


def assert_nothing_stored(api, name):
    listed = api.request("GET", f"/stacks?name={name}&show_deleted=true").json()["stacks"]
    assert listed == []


def create(api, template, name=None, **extra):
    name = name or f"bad{uuid.uuid4().hex[:8]}"
    body = {"stack_name": name, "template": template, **extra}
    return name, api.request("POST", "/stacks", body)


def with_resources(resources, **extra):
    return {"heat_template_version": "2016-10-14", "resources": resources, **extra}


CASES = {
    "malformed_yaml": ("heat_template_version: 2016-10-14\nresources: [unclosed\n",
                       {}, 400, "InvalidTemplate", ()),
    "malformed_json": ('{"heat_template_version": "2016-10-14", ', {}, 400, "InvalidTemplate",
                       ()),
    "unknown_version": ({"heat_template_version": "2012-12-12", "resources": {}}, {}, 400,
                        "InvalidTemplateVersion", ("2012-12-12",)),
    "unknown_type": (with_resources({"x": {"type": "OS::Nope::Thing"}}), {}, 400,
                     "ResourceTypeNotFound", ("OS::Nope::Thing",)),
    "missing_required_property": (with_resources({"s": {"type": "OS::Nova::Server"}}), {},
                                  400, "StackValidationFailed", ("Property flavor not assigned",)),
    "constraint": (GOOD, {"parameters": {"flavor": "m1.huge"}}, 400,
                   "StackValidationFailed", ("flavor", "Must be tiny or small")),
    "wrong_parameter_type": (GOOD, {"parameters": {"count": "many"}}, 400,
                             "StackValidationFailed", ("count",)),
    "undefined_parameter": (with_resources({"v": {"type": "OS::Heat::Value", "properties": {
        "value": {"get_param": "nope"}}}}), {}, 400,
        ("InvalidTemplateReference", "StackValidationFailed"), ("nope",)),
    "undefined_resource": (with_resources({"v": {"type": "OS::Heat::Value", "properties": {
        "value": {"get_resource": "ghost"}}}}), {}, 400, "InvalidTemplateReference",
        ("ghost",)),
    "cycle": (with_resources({"a": {"type": "OS::Heat::None", "depends_on": "b"},
                              "b": {"type": "OS::Heat::None", "depends_on": "a"}}), {}, 400,
              "CircularDependencyException", ()),
    # A function the version removed, as Heat answers it (an unknown one-key map is data).
    "removed_function": (with_resources({"v": {"type": "OS::Heat::Value", "properties": {
        "value": {"Fn::GetAZs": ""}}}}), {}, 400, "InvalidTemplateVersion",
        ("The function Fn::GetAZs is not supported in this version of HOT",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_template_or_parameters(api, case):
    template, extra, status, error_type, fragments = CASES[case]
    name, resp = create(api, template, **extra)
    assert_heat_error(resp, status, error_type, *fragments)
    assert_nothing_stored(api, name)


def test_template_over_size_limit(api):
    big = with_resources({"a": {"type": "OS::Heat::Value",
                                "properties": {"value": "x" * (600 * 1024)}}})
    name, resp = create(api, json.dumps(big))
    assert_heat_error(resp, 413, "RequestLimitExceeded")
    assert_nothing_stored(api, name)


def test_yaml_alias_bomb(api):
    lines = ['heat_template_version: 2016-10-14', 'a0: &a0 ["lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    lines.append("resources: {}")
    name, resp = create(api, "\n".join(lines))
    assert resp.status_code in (400, 413)
    assert_heat_error(resp, resp.status_code, ("RequestLimitExceeded", "InvalidTemplate"))
    assert_nothing_stored(api, name)


def test_missing_stack_name_and_bad_name(api):
    resp = api.request("POST", "/stacks", {"template": GOOD})
    assert_heat_error(resp, 400, "BadRequest", "stack name")
    _, resp = create(api, GOOD, name="1-starts-with-digit")
    assert_heat_error(resp, 400, "StackValidationFailed", "Invalid stack name")


def test_duplicate_name_conflicts(api):
    name, resp = create(api, GOOD)
    assert resp.status_code == 201, resp.text
    # A different create of a taken name (an identical one gets its stack: test_chaos).
    _, again = create(api, GOOD, name=name, parameters={"count": 2})
    assert_heat_error(again, 409, "StackExists", name)


def test_bad_token_is_401(live_service, api):
    resp = requests.get(api.base + "/stacks", headers={"X-Auth-Token": "not-a-token"})
    assert_heat_error(resp, 401, "NotAuthenticated")
    resp = requests.get(api.base + "/stacks")
    assert_heat_error(resp, 401, "NotAuthenticated")


def test_other_projects_tenant_id_is_403(live_service, api):
    other = live_service.issue_token(f"o-{uuid.uuid4().hex[:6]}", f"o-{uuid.uuid4().hex[:6]}")
    other_api = Api(other["endpoint"], other["token"])
    name, resp = create(other_api, GOOD)
    assert resp.status_code == 201
    foreign = other["endpoint"].rsplit("/", 1)[1]
    mine = api.base.rsplit("/", 1)[1]
    for path in ("/stacks", f"/stacks/{name}", "/validate", "/resource_types"):
        method = "POST" if path == "/validate" else "GET"
        resp = api.session.request(method, api.base.replace(mine, foreign) + path,
                                   data=json.dumps({"template": GOOD}))
        body = assert_heat_error(resp, 403, "Forbidden")
        assert name not in json.dumps(body)
    nowhere = api.session.get(api.base.replace(mine, "0" * 32) + "/stacks")
    assert_heat_error(nowhere, 403, "Forbidden")


def test_reader_cannot_create(live_service):
    project = f"r-{uuid.uuid4().hex[:6]}"
    reader = live_service.issue_token(f"reader-{uuid.uuid4().hex[:6]}", project, role="reader")
    api = Api(reader["endpoint"], reader["token"])
    assert api.request("GET", "/stacks").status_code == 200
    name, resp = create(api, GOOD)
    assert_heat_error(resp, 403, "Forbidden")
    assert_nothing_stored(api, name)


def test_action_body_rules(api):
    name, resp = create(api, GOOD)
    sid = resp.json()["stack"]["id"]
    path = f"/stacks/{name}/{sid}/actions"
    assert_heat_error(api.request("POST", path, {}), 400, "InvalidActionRequest",
                      "No action specified")
    assert_heat_error(api.request("POST", path, {"suspend": None, "resume": None}), 400,
                      "InvalidActionRequest", "Multiple actions specified")
    assert_heat_error(api.request("POST", path, {"explode": None}), 400,
                      "InvalidActionRequest", "Invalid action explode specified")


def test_unknown_stack_is_404(api):
    assert_heat_error(api.request("GET", "/stacks/ghost"), 404, "EntityNotFound", "ghost")


def test_malformed_json_body(api):
    resp = api.request("POST", "/stacks", raw="{not json")
    assert resp.status_code == 400
    assert_heat_error(resp, 400, resp.json()["error"]["type"])
