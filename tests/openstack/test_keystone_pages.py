"""The pages in Keystone mode, in a real browser: people sign in with their
Keystone user name and password and act with their Keystone roles."""
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import browser, screenshot  # noqa: F401 - the browser fixture
from tests.openstack.keystone_support import ONLY_IN_OPENSTACK_MODE, Cloud, keystone_service

pytestmark = [pytest.mark.openstack, pytest.mark.browser, ONLY_IN_OPENSTACK_MODE]

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
def page(browser, service):  # noqa: F811 - the browser fixture imported above
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


def test_a_wrong_keystone_password_is_refused(page, cloud):
    sign_in(page, cloud, "heatweb-demo-member", password="not-the-password")
    expect(page.get_by_role("alert")).to_contain_text("correct username and password")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()


def test_a_reader_signs_in_with_keystone_and_only_looks(page, cloud):
    sign_in(page, cloud, "heatweb-demo-reader")
    page.wait_for_url("**/")
    expect(page.locator("#project-select option:checked")).to_have_text("demo")
    expect(page.locator(".project-switch .role")).to_have_text("reader")
    page.goto("/stacks/launch")
    expect(page.get_by_text("may not perform this action")).to_be_visible()


def test_a_member_signs_in_with_keystone_and_launches_a_stack_with_a_trust(page, cloud):
    before = cloud.trusts(cloud.token("heatweb-demo-member")[1]["user"]["id"])
    sign_in(page, cloud, "heatweb-demo-member")
    page.wait_for_url("**/")
    expect(page.locator("#project-select option:checked")).to_have_text("demo")
    expect(page.locator(".project-switch .role")).to_have_text("member")
    name = f"pg{uuid.uuid4().hex[:8]}"
    page.get_by_role("link", name="Launch stack").first.click()
    page.get_by_label("Stack name").fill(name)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(TEMPLATE)
    page.get_by_role("button", name="Next: parameters").click()
    page.get_by_role("button", name="Launch").click()
    expect(page.locator("#stack-live .summary .status")).to_have_text("CREATE_COMPLETE",
                                                                      timeout=60_000)
    screenshot(page, "keystone-member-stack")
    user_id = cloud.token("heatweb-demo-member")[1]["user"]["id"]
    new = [t for k, t in cloud.trusts(user_id).items() if k not in before]
    assert [(t["project_id"], t["impersonation"]) for t in new] == \
        [(cloud.token("heatweb-demo-member")[1]["project"]["id"], True)]
