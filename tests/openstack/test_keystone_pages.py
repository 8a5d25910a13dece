"""The pages in Keystone mode, in a real browser: people sign in with their
Keystone user name and password and act with their Keystone roles."""
import uuid

import openstack
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.openstack.keystone_support import Cloud, Heat, keystone_service

pytestmark = [pytest.mark.openstack, pytest.mark.browser]

TEMPLATE = """\
heat_template_version: 2016-10-14
resources:
  word: {type: OS::Heat::RandomString}
"""


@pytest.fixture(scope="module")
def cloud():
    return Cloud()


@pytest.fixture(scope="module")
def service(request, tmp_path_factory):
    return keystone_service(request.config, tmp_path_factory)


@pytest.fixture
def page(browser, service):
    context = browser.new_context(viewport={"width": 1000, "height": 700},
                                  base_url=service.url)
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def sign_in(page, cloud, account, password=None):
    auth = cloud.account(account)
    page.goto("/")
    page.get_by_label("Username").fill(auth["username"])
    page.get_by_label("Password").fill(password or auth["password"])
    page.get_by_role("button", name="Sign in").click()


def launch(page, name, template, *, timeout_ms):
    """Launch ``template`` as ``name`` from the stacks page; its row once CREATE_COMPLETE."""
    page.get_by_role("link", name="Launch stack").first.click()
    page.get_by_label("Stack name").fill(name)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(template)
    page.get_by_role("button", name="Next: parameters").click()
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".msg-success")).to_have_text(f"Launch of stack {name} started.")
    row = page.locator("tr.stack-row", has_text=name)
    expect(row).to_contain_text("CREATE_COMPLETE", timeout=timeout_ms)
    return row


def test_a_wrong_keystone_password_is_refused(page, cloud):
    sign_in(page, cloud, "heatweb-demo-member", password="not-the-password")
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()


def test_a_reader_signs_in_with_keystone_and_only_looks(page, cloud, service):
    token, body = cloud.token("heatweb-demo-member")
    member = Heat(service, token, body["project"]["id"])
    name = f"rd{uuid.uuid4().hex[:8]}"
    path = member.create(name, TEMPLATE)
    member.wait(path, "CREATE_COMPLETE")
    sign_in(page, cloud, "heatweb-demo-reader")
    page.wait_for_url("**/")
    expect(page.locator("#project-select option:checked")).to_have_text("demo")
    expect(page.locator(".project-switch .role")).to_have_text("reader")
    row = page.locator("tr.stack-row", has_text=name)
    expect(row).to_contain_text("CREATE_COMPLETE")
    row.get_by_role("link").click()
    for action in ("suspend", "lock", "delete"):
        expect(page.locator(f"#action-{action}")).to_be_disabled()
    expect(page.locator("#action-reasons")).to_contain_text("(reader) may only look")
    member.call("DELETE", path)


def test_a_member_signs_in_with_keystone_and_launches_a_stack_with_a_trust(page, cloud,
                                                                          service):
    token, body = cloud.token("heatweb-demo-member")
    user_id, project_id = body["user"]["id"], body["project"]["id"]
    before = cloud.trusts(user_id)
    sign_in(page, cloud, "heatweb-demo-member")
    page.wait_for_url("**/")
    expect(page.locator("#project-select option:checked")).to_have_text("demo")
    expect(page.locator(".project-switch .role")).to_have_text("member")
    name = f"pg{uuid.uuid4().hex[:8]}"
    row = launch(page, name, TEMPLATE, timeout_ms=60_000)
    screenshot(page, "keystone-member-stack")
    # The page's launch made the stack's trust from the sign-in's Keystone token.
    new = [t for k, t in cloud.trusts(user_id).items() if k not in before]
    assert [(t["project_id"], t["impersonation"]) for t in new] == [(project_id, True)]
    api = Heat(service, token, project_id)
    stack = api.call("GET", f"/stacks/{name}").json()["stack"]
    assert api.call("DELETE", f"/stacks/{name}/{stack['id']}").status_code == 204


SERVER_TEMPLATE = """\
heat_template_version: 2016-10-14
resources:
  server:
    type: OS::Nova::Server
    properties: {image: heatweb-tiny, flavor: m1.tiny}
"""


def test_a_member_locks_a_real_nova_server_from_the_browser(page, cloud, service):
    """The README's journey: sign in with Keystone, launch a server, lock it at level
    ``all`` from the stack page, and Nova itself holds the lock with the reason."""
    token, body = cloud.token("heatweb-demo-member")
    api = Heat(service, token, body["project"]["id"])
    nova = openstack.connect(cloud="heatweb-admin", connect_retries=3).compute
    sign_in(page, cloud, "heatweb-demo-member")
    page.wait_for_url("**/")
    name = f"pl{uuid.uuid4().hex[:8]}"
    row = launch(page, name, SERVER_TEMPLATE, timeout_ms=180_000)
    stack_id = api.call("GET", f"/stacks/{name}").json()["stack"]["id"]
    server_id = api.call("GET", f"/stacks/{name}/{stack_id}/resources").json()[
        "resources"][0]["physical_resource_id"]
    assert nova.get_server(server_id).is_locked is False

    row.get_by_role("link", name=name).click()
    page.get_by_label("Lock level").select_option("all")
    page.get_by_label("Reason").fill("kernel patching")
    page.locator("#action-lock").click()
    expect(page.locator(".msg-success")).to_have_text(f"Lock of stack {name} started.")
    status = page.locator("#stack-live .summary .status")
    expect(status).to_have_text("LOCK_COMPLETE", timeout=120_000)
    expect(page.locator("#stack-live .badge.lock")).to_have_text("Locked · all")
    screenshot(page, "keystone-member-locked-server")
    server = nova.get_server(server_id)
    assert (server.is_locked, server.locked_reason) == (
        True, f"heatweb stack {name} locked: kernel patching")

    page.locator("#action-unlock").click()
    expect(status).to_have_text("UNLOCK_COMPLETE", timeout=120_000)
    assert nova.get_server(server_id).is_locked is False
    assert api.call("DELETE", f"/stacks/{name}/{stack_id}").status_code == 204
    api.wait(f"/stacks/{name}/{stack_id}", "DELETE_COMPLETE")
