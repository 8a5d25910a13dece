"""Update with a new template and environment, after a preview, in a real browser."""
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, assert_accessible, make_user, screenshot, \
    sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CONVERGE_MS = 60_000

OLD = {"heat_template_version": "2016-10-14",
       "parameters": {"cluster": {"type": "string", "default": "blue", "immutable": True,
                                  "label": "Cluster"}},
       "resources": {
           "kept": {"type": "OS::Heat::TestResource", "properties": {
               "value": {"get_param": "cluster"}}},
           "tuned": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
           "swapped": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}},
           "dropped": {"type": "OS::Heat::TestResource"}}}

NEW = """\
heat_template_version: 2016-10-14
parameters:
  cluster: {type: string, default: blue, immutable: true, label: Cluster}
  greeting: {type: string, default: hi, label: Greeting}
resources:
  kept:
    type: OS::Heat::TestResource
    properties: {value: {get_param: cluster}}
  tuned:
    type: OS::Heat::TestResource
    properties: {value: v2}
  swapped:
    type: OS::Heat::TestResource
    properties: {value: y, update_replace: true}
  added:
    type: OS::Heat::TestResource
    properties: {value: {get_param: greeting}}
"""


def wait_for(session, url, state):
    for _ in range(300):
        stack = session.get(url).json()["stack"]
        if stack["stack_status"] == state:
            return stack
        assert not stack["stack_status"].endswith("FAILED"), stack["stack_status_reason"]
        time.sleep(0.2)
    raise AssertionError(f"{url} is {stack['stack_status']}, wanted {state}")


def test_update_with_a_new_template_after_a_preview(page, live_service, unique):
    user, name = f"upd-{unique}", f"up-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    session, stack_id, stack_url = api_stack_create(info, name, OLD)
    wait_for(session, stack_url, "CREATE_COMPLETE")

    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/")
    page.get_by_role("link", name="Update").click()
    page.get_by_text("New template or environment").click()
    page.get_by_label("New template (empty: keep the current one)").fill(NEW)
    page.get_by_label("Environment to merge (optional)").fill(
        "parameters:\n  greeting: hello\n")
    page.get_by_role("button", name="Next: this template's parameters").click()
    expect(page.get_by_label("Greeting")).to_have_value("hello")
    expect(page.get_by_label("Cluster")).to_have_attribute("readonly", "readonly")

    page.locator("#preview").click()
    expect(page.locator("#preview-added")).to_have_text("added (OS::Heat::TestResource)")
    expect(page.locator("#preview-replaced")).to_have_text("swapped (OS::Heat::TestResource)")
    expect(page.locator("#preview-updated")).to_have_text("tuned (OS::Heat::TestResource)")
    expect(page.locator("#preview-deleted")).to_have_text("dropped (OS::Heat::TestResource)")
    expect(page.locator("#preview-unchanged")).to_have_text("kept")
    screenshot(page, "update-preview")
    assert_accessible(page, "update preview")
    assert session.get(stack_url).json()["stack"]["stack_status"] == "CREATE_COMPLETE"

    # A tampered immutable parameter is refused at its field, with the new template too.
    page.evaluate("document.getElementById('id_p-cluster').removeAttribute('readonly')")
    page.get_by_label("Cluster").fill("green")
    page.locator("#update").click()
    expect(page.locator(".field-error")).to_have_text(
        "This parameter is immutable and may not be updated.")
    expect(page.get_by_label("Cluster")).to_have_value("blue")
    expect(page.get_by_label("New template (empty: keep the current one)")).to_have_value(
        NEW)

    page.locator("#update").click()
    expect(page.locator(".msg-success")).to_have_text(f"Update of stack {name} started.")
    expect(page.locator("#stack-live .summary .status")).to_have_text(
        "UPDATE_COMPLETE", timeout=CONVERGE_MS)
    resources = {r["resource_name"]: r for r in
                 session.get(stack_url + "/resources").json()["resources"]}
    assert sorted(resources) == ["added", "kept", "swapped", "tuned"], resources
    added = session.get(stack_url + "/resources/added").json()["resource"]
    assert added["attributes"]["output"] == "hello", added
    session.delete(stack_url)


def test_an_update_that_converges_with_the_cloud(page, live_service, unique):
    """A network renamed behind the stack's back: the page's update with "Converge with
    the cloud" names it as the template says again (a plain update would not)."""
    from tests.live.test_lock import cloud

    user, name = f"cnv-{unique}", f"cv-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    session, stack_id, stack_url = api_stack_create(info, name, {
        "heat_template_version": "2018-08-31",
        "resources": {"net": {"type": "OS::Neutron::Net", "properties": {"name": "backend"}}}})
    wait_for(session, stack_url, "CREATE_COMPLETE")
    net_id = session.get(stack_url + "/resources/net").json()["resource"][
        "physical_resource_id"]
    cloud(live_service, f'c.object_update("network", "{net_id}", name="renamed")\n'
                        f'print(json.dumps({{}}))')

    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/update")
    page.get_by_label("Converge with the cloud").check()
    page.locator("#update").click()
    expect(page.locator(".msg-success")).to_have_text(f"Update of stack {name} started.")
    expect(page.locator("#stack-live .summary .status")).to_have_text(
        "UPDATE_COMPLETE", timeout=CONVERGE_MS)
    named = cloud(live_service, f'print(json.dumps(c.object_get("network", "{net_id}")["name"]))')
    assert named == "backend"
    session.delete(stack_url)
