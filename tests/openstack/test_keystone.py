"""Keystone mode against the real Keystone of the running cloud: tokens,
roles, project isolation, admin locks and the stack's trust."""
import time
import uuid

import pytest

from tests.conftest import LiveService
from tests.openstack.keystone_support import Cloud, Heat, keystone_service, keystone_settings

pytestmark = [pytest.mark.openstack]

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "word": {"type": "OS::Heat::RandomString", "properties": {"length": 12}}},
    "outputs": {"word": {"value": {"get_attr": ["word", "value"]}}}}

# The CREATE traversal takes seconds, so the token is revoked while it runs.
SLOW = {"heat_template_version": "2016-10-14", "resources": {
    "first": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 3}},
    "second": {"type": "OS::Heat::TestResource",
               "properties": {"wait_secs": 1, "value": {"get_attr": ["first", "output"]}}}}}


@pytest.fixture(scope="module")
def cloud():
    return Cloud()


@pytest.fixture(scope="module")
def service(request, tmp_path_factory):
    return keystone_service(request.config, tmp_path_factory)


def heat_as(service, cloud, account):
    token, body = cloud.token(account)
    return Heat(service, token, body["project"]["id"]), token, body


def _name():
    return f"ks{uuid.uuid4().hex[:8]}"


def _assert_heat_error(resp, status, error_type):
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["code"] == status
    assert body["error"]["type"] == error_type
    assert set(body) == {"code", "title", "explanation", "error"}
    assert set(body["error"]) == {"type", "message", "traceback"}
    return body


def test_bad_token_is_401_in_heat_format(service, cloud):
    heat, _, body = heat_as(service, cloud, "heatweb-demo-member")
    heat.session.headers["X-Auth-Token"] = "not-a-keystone-token"
    error = _assert_heat_error(heat.call("GET", "/stacks"), 401, "NotAuthenticated")
    assert error["title"] == "Unauthorized"
    assert "invalid, expired or revoked" in error["error"]["message"]


def test_each_web_worker_readies_keystone_before_its_first_caller(tmp_path_factory, cloud):
    """A new web worker imports and configures auth_token and fetches its service token
    when it starts: its first caller does not wait on them (0.5-1 s)."""
    fresh = LiveService(tmp_path_factory.mktemp("warm"), name="keystone-warm", workers=0,
                        **keystone_settings(cloud))
    fresh.start()  # answered /healthz only: nothing authenticated yet
    try:
        log = fresh.log_path("web")
        deadline = time.monotonic() + 30
        while log.read_text().count("Starting Keystone auth_token middleware") < 2:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        text = log.read_text()
        assert "not readied before the first request" not in text
        assert '"GET /v1/' not in text  # no caller has come yet
        heat, _, _ = heat_as(fresh, cloud, "heatweb-demo-member")
        assert heat.call("GET", "/stacks").status_code == 200
        assert log.read_text().count("Starting Keystone auth_token middleware") == 2
    finally:
        fresh.stop()


def test_expired_token_is_401(service, cloud):
    heat, token, _ = heat_as(service, cloud, "heatweb-demo-member")
    cloud.revoke(token)
    resp = heat.call("GET", "/stacks")
    _assert_heat_error(resp, 401, "NotAuthenticated")
    assert resp.headers["WWW-Authenticate"].startswith("Keystone uri=")


def test_token_project_is_the_tenant_and_roles_map(service, cloud):
    member, _, body = heat_as(service, cloud, "heatweb-demo-member")
    path = member.create(_name(), TEMPLATE)
    stack = member.wait(path, "CREATE_COMPLETE")
    assert stack["stack_owner"] == "demo-member"
    assert f"/v1/{body['project']['id']}/stacks/" in stack["links"][0]["href"]
    reader, _, _ = heat_as(service, cloud, "heatweb-demo-reader")
    shown = reader.call("GET", path)
    assert shown.status_code == 200, shown.text
    assert shown.json()["stack"]["outputs"][0]["output_value"] == \
        stack["outputs"][0]["output_value"]
    member.call("DELETE", path)
    member.wait(path, "DELETE_COMPLETE")


def test_reader_cannot_create(service, cloud):
    reader, _, _ = heat_as(service, cloud, "heatweb-demo-reader")
    name = _name()
    resp = reader.call("POST", "/stacks", {"stack_name": name, "template": TEMPLATE})
    error = _assert_heat_error(resp, 403, "Forbidden")
    assert "reader" in error["error"]["message"]
    listed = reader.call("GET", "/stacks")
    assert listed.status_code == 200
    assert name not in [s["stack_name"] for s in listed.json()["stacks"]]


def test_a_project_cannot_see_another_projects_stacks(service, cloud):
    demo, _, demo_body = heat_as(service, cloud, "heatweb-demo-member")
    name = _name()
    path = demo.create(name, TEMPLATE)
    demo.wait(path, "CREATE_COMPLETE")
    alt, alt_token, alt_body = heat_as(service, cloud, "heatweb-alt-member")
    assert alt_body["project"]["id"] != demo_body["project"]["id"]
    listed = alt.call("GET", "/stacks")
    assert listed.status_code == 200
    assert name not in [s["stack_name"] for s in listed.json()["stacks"]]
    _assert_heat_error(alt.call("GET", f"/stacks/{name}"), 404, "EntityNotFound")
    # The demo project's own path, with the alt project's token: refused.
    into_demo = Heat(service, alt_token, demo_body["project"]["id"])
    _assert_heat_error(into_demo.call("GET", "/stacks"), 403, "Forbidden")
    _assert_heat_error(into_demo.call("GET", path), 403, "Forbidden")
    _assert_heat_error(into_demo.call("DELETE", path), 403, "Forbidden")
    demo.call("DELETE", path)
    demo.wait(path, "DELETE_COMPLETE")


def test_an_admin_lock_is_refused_to_a_member(service, cloud):
    member, _, body = heat_as(service, cloud, "heatweb-demo-member")
    path = member.create(_name(), TEMPLATE)
    member.wait(path, "CREATE_COMPLETE")
    admin_token, _ = cloud.token("heatweb-admin")
    admin = Heat(service, admin_token, body["project"]["id"])
    resp = admin.call("POST", f"{path}/actions",
                      {"lock": {"level": "stacks"}, "reason": "cloud maintenance"})
    assert resp.status_code == 200, resp.text
    locked = admin.wait(path, "LOCK_COMPLETE")
    assert (locked["lock_level"], locked["lock_reason"]) == ("stacks", "cloud maintenance")
    assert locked["locked_by"].startswith("admin")
    error = _assert_heat_error(member.call("POST", f"{path}/actions", {"unlock": None}),
                               403, "Forbidden")
    assert "locked by a cloud admin" in error["error"]["message"]
    _assert_heat_error(member.call("DELETE", path), 409, "StackLocked")
    assert member.call("GET", path).json()["stack"]["stack_status"] == "LOCK_COMPLETE"
    assert admin.call("POST", f"{path}/actions", {"unlock": None}).status_code == 200
    admin.wait(path, "UNLOCK_COMPLETE")
    member.call("DELETE", path)
    member.wait(path, "DELETE_COMPLETE")


def test_a_stack_outlives_its_creators_token_through_a_trust(service, cloud):
    member, token, body = heat_as(service, cloud, "heatweb-demo-member")
    user_id, project_id = body["user"]["id"], body["project"]["id"]
    before = cloud.trusts(user_id)
    path = member.create(_name(), SLOW)
    cloud.revoke(token)
    watcher, _, _ = heat_as(service, cloud, "heatweb-demo-member")
    watcher.wait(path, "CREATE_COMPLETE")
    new = {k: v for k, v in cloud.trusts(user_id).items() if k not in before}
    # At least this stack's trust (an engine may be making another stack's trust of the
    # same demo user at the same moment).
    assert new, "the create made no trust"
    trust = cloud.admin("GET", f"/OS-TRUST/trusts/{sorted(new)[0]}").json()["trust"]
    service_user = cloud.admin("GET", f"/users/{trust['trustee_user_id']}").json()["user"]
    assert (service_user["name"], trust["project_id"], trust["impersonation"]) == \
        ("heatweb", project_id, True)
    assert "member" in {r["name"] for r in trust["roles"]}
    # What the engine does: heatweb's service user acting through the trust,
    # as the creator in the creator's project, with the creator's token gone.
    service_auth = cloud.account("heatweb-service")
    resp = cloud.admin("POST", "/auth/tokens", json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": service_auth["username"], "password": service_auth["password"],
            "domain": {"name": "Default"}}}},
        "scope": {"OS-TRUST:trust": {"id": trust["id"]}}}})
    assert resp.status_code == 201, resp.text
    scoped = resp.json()["token"]
    assert (scoped["user"]["id"], scoped["project"]["id"]) == (user_id, project_id)
    watcher.call("DELETE", path)
    watcher.wait(path, "DELETE_COMPLETE")
    # The trust goes right after the stack (after the DELETE_COMPLETE commit).
    deadline = time.monotonic() + 15
    while cloud.admin("GET", f"/OS-TRUST/trusts/{trust['id']}").status_code != 404:
        assert time.monotonic() < deadline, f"trust {trust['id']} still there"
        time.sleep(0.3)


def test_the_engine_builds_a_server_as_its_owner_after_the_token_is_gone(service, cloud):
    """The OpenStack driver acts through the stack's trust: the server is the
    alt member's, in the alt project, though the alt member's token was
    revoked right after the create and heatweb's own cloud account is its
    service user."""
    alt, token, body = heat_as(service, cloud, "heatweb-alt-member")
    name = _name()
    path = alt.create(name, {"heat_template_version": "2016-10-14", "resources": {
        "server": {"type": "OS::Nova::Server", "properties": {
            "name": f"{name}-vm", "image": "heatweb-tiny", "flavor": "m1.tiny",
            "networks": []}}}})
    cloud.revoke(token)
    watcher, _, _ = heat_as(service, cloud, "heatweb-alt-member")
    watcher.wait(path, "CREATE_COMPLETE", timeout=240)
    server_id = watcher.call("GET", f"{path}/resources/server").json()["resource"][
        "physical_resource_id"]
    server = cloud.admin_compute("GET", f"/servers/{server_id}").json()["server"]
    assert (server["name"], server["tenant_id"], server["user_id"], server["status"]) == \
        (f"{name}-vm", body["project"]["id"], body["user"]["id"], "ACTIVE")
    watcher.call("DELETE", path)
    watcher.wait(path, "DELETE_COMPLETE", timeout=240)
    deadline = time.monotonic() + 60  # Nova finishes a delete on its own time
    while cloud.admin_compute("GET", f"/servers/{server_id}").status_code != 404:
        assert time.monotonic() < deadline, f"server {server_id} still in Nova"
        time.sleep(1)
