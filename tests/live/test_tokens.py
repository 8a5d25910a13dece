"""API tokens against the live service: who gets in, who gets 401 and who gets 403."""
import json
import uuid

import pytest
import requests

pytestmark = pytest.mark.live


def _name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def assert_heat_401(resp):
    assert resp.status_code == 401, resp.text
    body = resp.json()
    assert body["code"] == 401
    assert body["title"] == "Unauthorized"
    assert body["error"]["type"] == "NotAuthenticated"
    assert body["error"]["traceback"] is None
    return body


def assert_heat_403(resp):
    assert resp.status_code == 403, resp.text
    body = resp.json()
    assert body["code"] == 403
    assert body["title"] == "Forbidden"
    assert body["error"]["type"] == "Forbidden"
    return body


@pytest.fixture(scope="module")
def member(live_service):
    return live_service.issue_token(_name("tok"), _name("tokp"))


def test_no_token_is_401(member):
    assert_heat_401(requests.get(member["endpoint"] + "/stacks", timeout=30))


def test_bad_token_is_401(member):
    for bad in ("x", "not-a-token-" + "a" * 40, member["token"][:-1],
                member["token"][:8]):
        resp = requests.get(member["endpoint"] + "/stacks", headers={"X-Auth-Token": bad},
                            timeout=30)
        assert_heat_401(resp)


def test_good_token_lists_stacks(member):
    resp = requests.get(member["endpoint"] + "/stacks",
                        headers={"X-Auth-Token": member["token"]}, timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"stacks": []}


def test_revoked_token_is_401(live_service):
    info = live_service.issue_token(_name("rev"), _name("revp"))
    headers = {"X-Auth-Token": info["token"]}
    assert requests.get(info["endpoint"] + "/stacks", headers=headers,
                        timeout=30).status_code == 200
    done = live_service.manage("revoke_token", info["token"])
    assert done.returncode == 0, done.stderr
    assert_heat_401(requests.get(info["endpoint"] + "/stacks", headers=headers, timeout=30))
    # Revoking it again still finds it; an unknown token is an error.
    assert live_service.manage("revoke_token", info["token"]).returncode == 0
    assert live_service.manage("revoke_token", "no-such-token-" + "z" * 30).returncode != 0


def test_revoke_by_prefix(live_service):
    info = live_service.issue_token(_name("pre"), _name("prep"))
    headers = {"X-Auth-Token": info["token"]}
    done = live_service.manage("revoke_token", info["token"][:8])
    assert done.returncode == 0, done.stderr
    assert_heat_401(requests.get(info["endpoint"] + "/stacks", headers=headers, timeout=30))


def test_other_tokens_of_the_same_user_still_work(live_service):
    user, project = _name("two"), _name("twop")
    first = live_service.issue_token(user, project)
    second = live_service.issue_token(user, project)
    assert live_service.manage("revoke_token", first["token"]).returncode == 0
    assert requests.get(second["endpoint"] + "/stacks",
                        headers={"X-Auth-Token": second["token"]}, timeout=30).status_code == 200


def test_expired_token_is_401(live_service):
    info = live_service.issue_token(_name("exp"), _name("expp"))
    headers = {"X-Auth-Token": info["token"]}
    assert requests.get(info["endpoint"] + "/stacks", headers=headers,
                        timeout=30).status_code == 200
    script = (
        "import hashlib, datetime\n"
        "from django.utils import timezone\n"
        "from heatweb.models import ApiToken\n"
        f"h = hashlib.sha256({info['token']!r}.encode()).hexdigest()\n"
        "n = ApiToken.objects.filter(key_hash=h).update("
        "expires_at=timezone.now() - datetime.timedelta(seconds=1))\n"
        "print(n)\n")
    done = live_service.manage("shell", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "1"
    assert_heat_401(requests.get(info["endpoint"] + "/stacks", headers=headers, timeout=30))


def test_ttl_hours_sets_an_expiry(live_service):
    info = live_service.issue_token(_name("ttl"), _name("ttlp"))
    done = live_service.manage("issue_token", _name("ttl"), "--project", _name("ttlp"),
                               "--ttl-hours", "2", "--json")
    assert done.returncode == 0, done.stderr
    timed = json.loads(done.stdout)
    script = (
        "import hashlib, json\n"
        "from heatweb.models import ApiToken\n"
        "out = {}\n"
        f"for key, raw in (('default', {info['token']!r}), ('timed', {timed['token']!r})):\n"
        "    t = ApiToken.objects.get(key_hash=hashlib.sha256(raw.encode()).hexdigest())\n"
        "    out[key] = (t.expires_at - t.created_at).total_seconds() if t.expires_at else None\n"
        "print(json.dumps(out))\n")
    done = live_service.manage("shell", "-c", script)
    assert done.returncode == 0, done.stderr
    ttl = json.loads(done.stdout.strip().splitlines()[-1])
    assert ttl["timed"] == pytest.approx(2 * 3600, abs=60)
    assert ttl["default"] is not None and ttl["default"] > 2 * 3600
    assert requests.get(timed["endpoint"] + "/stacks", headers={"X-Auth-Token": timed["token"]},
                        timeout=30).status_code == 200


def test_token_of_project_a_on_project_b_is_403(live_service, member):
    b_name = _name("secretproject")
    other = live_service.issue_token(_name("b"), b_name)
    url = other["endpoint"] + "/stacks"
    headers = {"X-Auth-Token": member["token"]}
    for resp in (requests.get(url, headers=headers, timeout=30),
                 requests.post(url, headers={**headers, "Content-Type": "application/json"},
                               data=json.dumps({"stack_name": "x", "template": {
                                   "heat_template_version": "2018-08-31"}}), timeout=30)):
        body = assert_heat_403(resp)
        assert b_name not in resp.text
        assert other["project_id"] not in json.dumps(body["error"])
    # A project that does not exist looks the same as one that is not yours.
    nowhere = member["endpoint"].rsplit("/", 1)[0] + "/" + "0" * 32 + "/stacks"
    assert_heat_403(requests.get(nowhere, headers=headers, timeout=30))


def test_reader_may_look_but_not_create(live_service):
    project = _name("readp")
    reader = live_service.issue_token(_name("reader"), project, role="reader")
    headers = {"X-Auth-Token": reader["token"], "Content-Type": "application/json"}
    resp = requests.get(reader["endpoint"] + "/stacks", headers=headers, timeout=30)
    assert resp.status_code == 200, resp.text
    body = {"stack_name": _name("s"), "template": {
        "heat_template_version": "2018-08-31",
        "resources": {"n": {"type": "OS::Heat::None"}}}}
    resp = requests.post(reader["endpoint"] + "/stacks", headers=headers,
                         data=json.dumps(body), timeout=30)
    assert_heat_403(resp)
    listed = requests.get(reader["endpoint"] + "/stacks", headers=headers, timeout=30).json()
    assert listed == {"stacks": []}


def test_member_may_create(live_service):
    project = _name("memp")
    info = live_service.issue_token(_name("mem"), project, role="member")
    headers = {"X-Auth-Token": info["token"], "Content-Type": "application/json"}
    body = {"stack_name": _name("s"), "template": {
        "heat_template_version": "2018-08-31",
        "resources": {"n": {"type": "OS::Heat::None"}}}}
    resp = requests.post(info["endpoint"] + "/stacks", headers=headers, data=json.dumps(body),
                         timeout=30)
    assert resp.status_code == 201, resp.text
    assert resp.json()["stack"]["id"]


def test_healthz_needs_no_token(live_service):
    resp = requests.get(live_service.url + "/healthz", timeout=30)
    assert resp.status_code == 200
    assert resp.json() == {"status": "ok"}


def test_openapi_schema(live_service):
    resp = requests.get(live_service.url + "/api/schema/", params={"format": "json"},
                        timeout=60)
    assert resp.status_code == 200, resp.text[:500]
    schema = resp.json()
    assert schema["openapi"].startswith("3.")
    assert "/v1/{tenant_id}/stacks" in schema["paths"]
    assert {"get", "post"} <= set(schema["paths"]["/v1/{tenant_id}/stacks"])


def test_issue_token_prints_exactly_one_line(live_service):
    project = _name("linep")
    done = live_service.manage("issue_token", _name("line"), "--project", project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n")
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    assert len(lines[0]) >= 32 and " " not in lines[0]
    # The printed token works on the project's API (its id from a second, --json token).
    project_id = live_service.issue_token(_name("line2"), project)["project_id"]
    resp = requests.get(f"{live_service.url}/v1/{project_id}/stacks",
                        headers={"X-Auth-Token": lines[0]}, timeout=30)
    assert resp.status_code == 200


def test_issue_token_json_shape(live_service):
    user, project = _name("js"), _name("jsp")
    done = live_service.manage("issue_token", user, "--project", project, "--role", "reader",
                               "--json", "--public-url", "http://example.invalid:9/")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().splitlines()) == 1
    info = json.loads(done.stdout)
    assert set(info) == {"token", "project_id", "project_name", "user", "role", "endpoint"}
    assert info["user"] == user and info["project_name"] == project and info["role"] == "reader"
    assert info["endpoint"] == f"http://example.invalid:9/v1/{info['project_id']}"
    default = live_service.issue_token(user, project, role="reader")
    assert default["project_id"] == info["project_id"]
    assert default["endpoint"] == f"{live_service.url}/v1/{info['project_id']}"


def test_heat_client_helper(live_service):
    """``live_service.heat()`` gives a python-heatclient client with a fresh member token."""
    hc = live_service.heat()
    assert list(hc.stacks.list()) == []
    reader = live_service.heat(f"hr-{uuid.uuid4().hex[:6]}", f"hrp-{uuid.uuid4().hex[:6]}",
                               role="reader")
    assert list(reader.stacks.list()) == []
