"""OpenStack's dashboard, Horizon 27 with heat-dashboard 16 (``scripts/horizon-up``), drives
heatweb's Orchestration API in a real browser as an operator would: the demo member signs in
with Keystone, and Horizon finds heatweb where it finds Heat, in Keystone's catalog
(``manage.py keystone_catalog``).

heatweb registers itself in a Keystone region of this test's own, and the browser asks
Horizon for that region (its ``services_region`` cookie): the cloud's ``RegionOne``
endpoint follows whichever heatweb registered last, and other test sessions on a shared
cloud register theirs at any time, while Horizon keeps the catalog of its sign-in.
"""
import os
import subprocess
import uuid

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot
from tests.conftest import ROOT
from tests.openstack.keystone_support import CLOUD_BASE, Cloud, Heat, keystone_service

pytestmark = [pytest.mark.openstack, pytest.mark.browser]

HORIZON = f"http://127.0.0.1:{os.environ.get('HEATWEB_HORIZON_PORT', '8090')}"  # horizon-up's
TEMPLATE = """\
heat_template_version: 2016-10-14
parameters:
  length: {type: number, default: 8}
resources:
  word:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  nothing: {type: OS::Heat::None}
outputs:
  word: {value: {get_attr: [word, value]}}
"""
CHANGED = TEMPLATE.replace("  nothing: {type: OS::Heat::None}\n",
                           "  nothing: {type: OS::Heat::None}\n  more: {type: OS::Heat::None}\n")


@pytest.fixture(autouse=True)
def patient_expect():
    """Horizon's pages take seconds on a loaded machine: expect waits as long as a click."""
    expect.set_options(timeout=30_000)
    yield
    expect.set_options(timeout=5_000)  # Playwright's default, for the other tests


@pytest.fixture(scope="module")
def cloud():
    return Cloud()


@pytest.fixture(scope="module")
def horizon():
    """Horizon at HORIZON: reused when ./test started it, else started (and left up, as the
    cloud is); a failure fails the tests."""
    done = subprocess.run([str(ROOT / "scripts" / "horizon-up"), str(CLOUD_BASE)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"scripts/horizon-up failed:\n{done.stdout}\n{done.stderr}"
    return HORIZON


@pytest.fixture(scope="module")
def region(request, tmp_path_factory, cloud):
    """A Keystone region whose only orchestration endpoint is this session's heatweb."""
    service = keystone_service(request.config, tmp_path_factory)
    name = f"heatweb-horizon-{service.port}"
    made = cloud.admin("POST", "/regions", json={"region": {"id": name}})
    assert made.status_code in (201, 409), made.text
    done = service.manage("keystone_catalog", "--public-url", service.url, "--region", name)
    assert done.returncode == 0, done.stderr
    yield name
    for endpoint in cloud.admin("GET", "/endpoints", params={"region_id": name}).json()[
            "endpoints"]:
        cloud.admin("DELETE", f"/endpoints/{endpoint['id']}")
    cloud.admin("DELETE", f"/regions/{name}")


@pytest.fixture
def api(request, tmp_path_factory, cloud):
    """heatweb's API as the demo member, to check what Horizon did."""
    token, body = cloud.token("heatweb-demo-member")
    return Heat(keystone_service(request.config, tmp_path_factory), token, body["project"]["id"])


@pytest.fixture
def page(browser, horizon, region, cloud):
    """Horizon signed in as the demo member, on the Stacks panel."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=horizon)
    context.set_default_timeout(30_000)
    context.add_cookies([{"name": "services_region", "value": region, "url": horizon}])
    page = context.new_page()
    auth = cloud.account("heatweb-demo-member")
    page.goto("/auth/login/?next=/project/stacks/")
    page.locator("#id_username").fill(auth["username"])
    page.locator("#id_password").fill(auth["password"])
    page.locator("#loginBtn").click()
    page.wait_for_url("**/project/stacks/")
    yield page
    context.close()


def choose(page, select_id, value):
    """Pick ``value`` in one of Horizon's themed selects (a dropdown over a hidden select)."""
    box = page.locator(f".modal.in #{select_id}").locator("xpath=..")
    box.locator("button.dropdown-toggle").click()
    box.locator(f"a[data-select-value='{value}']").click()


def template_form(page, form_id, template):
    """The first step of Launch, Preview and Change Template: the template as direct input."""
    page.locator(f"form#{form_id}").wait_for()
    choose(page, "id_template_source", "raw")
    page.locator(f"form#{form_id} #id_template_data").fill(template)
    page.locator(f"form#{form_id} [type=submit]").click()


def row_action(page, name, action):
    """A stack's row action (check, suspend, resume, edit, delete), from its menu if need be."""
    row = page.locator("#stacks tbody tr", has_text=name)
    button = row.locator(f"[id$='__action_{action}']")
    if not button.is_visible():
        row.locator(".dropdown-toggle").click()
    button.click()


def alert(page):
    return page.locator(".messages .alert").last


def test_a_member_drives_a_stack_through_horizons_orchestration_panels(page, api, cloud):
    name = f"hz{uuid.uuid4().hex[:8]}"
    # Launch: the template, then the stack's name, the user's password and a parameter.
    page.locator("#stacks__action_launch").click()
    template_form(page, "select_template", TEMPLATE)
    form = page.locator("form#launch_stack")
    form.locator("#id_stack_name").fill(name)
    form.locator("#id_password").fill(cloud.account("heatweb-demo-member")["password"])
    form.locator("[name=__param_length]").fill("12")
    form.locator("[type=submit]").click()
    expect(alert(page)).to_contain_text("Stack creation started.")
    # The stack list (its row refreshed by Horizon until complete), and its name filter.
    row = page.locator("#stacks tbody tr", has_text=name)
    expect(row).to_contain_text("Create Complete", timeout=60_000)
    # Horizon's heat client talked to this heatweb: the stack is in its database.
    stack = api.call("GET", f"/stacks/{name}").json()["stack"]
    path = f"/stacks/{name}/{stack['id']}"
    assert (stack["stack_status"], stack["parameters"]["length"]) == ("CREATE_COMPLETE", "12")
    word = api.call("GET", f"{path}/outputs/word").json()["output"]["output_value"]
    assert len(word) == 12
    page.locator("#stacks .table_search input").fill(name)
    page.locator("#stacks__action_filter").click()
    expect(page.locator("#stacks tbody tr")).to_have_count(1)
    expect(row).to_be_visible()

    # The stack's tabs.
    row.get_by_role("link", name=name).click()
    page.wait_for_url(f"**/project/stacks/stack/{stack['id']}/")
    nodes = page.locator("#heat_resource_topology svg g.node")
    expect(nodes).to_have_count(2)
    expect(nodes.and_(page.locator("[node_name=word]"))).to_have_count(1)
    expect(page.locator("#stack_info")).to_contain_text(f"{name}\nCreate Complete")
    tab = page.locator(".tab-content .tab-pane.active")
    page.locator("ul.nav-tabs a", has_text="Overview").click()
    expect(tab).to_contain_text(f"Name\n{name}")
    expect(tab).to_contain_text("Create_Complete: Stack CREATE completed successfully")
    expect(tab).to_contain_text(word)  # the output
    page.locator("ul.nav-tabs a", has_text="Resources").click()
    expect(tab.locator("tbody tr")).to_have_count(2)
    expect(tab.locator("tbody tr", has_text="OS::Heat::RandomString")).to_contain_text(word)
    expect(tab.locator("tbody tr", has_text="OS::Heat::None")).to_contain_text("Create Complete")
    # heat-dashboard lists events with sort_key=event_time (Heat ignores that parameter).
    page.locator("ul.nav-tabs a", has_text="Events").click()
    expect(tab.locator("tbody tr")).to_have_count(6)
    expect(tab.locator("tbody tr").first).to_contain_text("Stack CREATE completed successfully")
    expect(page.locator(".messages .alert-danger")).to_have_count(0)
    page.locator("ul.nav-tabs a", has_text="Template").click()
    expect(tab).to_contain_text("type: OS::Heat::RandomString")
    screenshot(page, "horizon-stack-template")

    # Check, Suspend, Resume from the stack list (a fresh list each time: Horizon replaces
    # the row of a stack in progress as it polls it).
    for action, done, state in (("check", "Checked", "CHECK_COMPLETE"),
                                ("suspend", "Suspended", "SUSPEND_COMPLETE"),
                                ("resume", "Resumed", "RESUME_COMPLETE")):
        page.goto("/project/stacks/")
        row_action(page, name, action)
        expect(alert(page)).to_contain_text(f"{done} Stack: {name}")
        api.wait(path, state)
    page.goto("/project/stacks/")
    expect(row).to_contain_text("Resume Complete")

    # Preview of another stack: nothing is made.
    page.locator("#stacks__action_preview").click()
    template_form(page, "preview_template", TEMPLATE)
    page.locator("form#preview_stack #id_stack_name").fill(f"pv{name}")
    page.locator("form#preview_stack [type=submit]").click()
    preview = page.locator(".modal.in", has_text="Stack Preview")
    expect(preview).to_contain_text(f"pv{name}")
    expect(preview).to_contain_text("OS::Heat::RandomString")
    assert api.call("GET", f"/stacks/pv{name}").status_code == 404
    page.goto("/project/stacks/")

    # Change Template: a new resource and a new parameter value.
    row_action(page, name, "edit")
    template_form(page, "change_template", CHANGED)
    form = page.locator("form#update_stack")
    form.locator("#id_password").fill(cloud.account("heatweb-demo-member")["password"])
    form.locator("[name=__param_length]").fill("16")
    form.locator("[type=submit]").click()
    expect(alert(page)).to_contain_text("Stack update started.")
    expect(row).to_contain_text("Update Complete", timeout=60_000)
    updated = api.wait(path, "UPDATE_COMPLETE")
    assert updated["parameters"]["length"] == "16"
    resources = api.call("GET", f"{path}/resources").json()["resources"]
    assert sorted(r["resource_name"] for r in resources) == ["more", "nothing", "word"]

    # A locked stack refuses: heat-dashboard hides the 409's text behind its own words.
    locking = api.call("POST", f"{path}/actions", {"lock": {"level": "stacks"},
                                                    "reason": "horizon"})
    assert locking.status_code == 200, locking.text
    locked = api.wait(path, "LOCK_COMPLETE")
    page.reload()
    expect(row).to_contain_text("LOCK_COMPLETE")
    row_action(page, name, "suspend")
    expect(alert(page)).to_contain_text(f"Unable to suspend stack: {name}")
    after = api.call("GET", path).json()["stack"]
    assert (after["stack_status"], after["updated_time"]) == ("LOCK_COMPLETE",
                                                              locked["updated_time"])
    assert api.call("POST", f"{path}/actions", {"unlock": None}).status_code == 200
    api.wait(path, "UNLOCK_COMPLETE")

    # Delete, confirmed in Horizon's dialog.
    page.reload()
    row_action(page, name, "delete")
    page.locator(".modal.in .modal-footer .btn-danger").click()
    expect(alert(page)).to_contain_text(f"Deleted Stack: {name}")
    api.wait(path, "DELETE_COMPLETE")


def test_resource_types_and_template_versions_panels(page):
    page.get_by_role("link", name="Resource Types").click()
    page.get_by_role("link", name="OS::Heat::RandomString", exact=True).click()
    expect(page.locator(".detail-title")).to_have_text("OS::Heat::RandomString")
    expect(page.locator("pre").first).to_contain_text("The random string.")  # an attribute
    expect(page.locator("pre").last).to_contain_text("Length of the string.")  # a property
    page.get_by_role("link", name="Template Versions").click()
    rows = page.locator("#template_versions tbody tr")
    expect(rows.filter(has_text="heat_template_version.2016-10-14")).to_contain_text("HOT")
    expect(rows.filter(has_text="AWSTemplateFormatVersion.2010-09-09")).to_contain_text("CFN")
    page.get_by_role("link", name="heat_template_version.2016-10-14").click()
    functions = page.locator("#template_functions tbody tr")
    expect(functions.filter(has_text="get_attr")).to_contain_text("resource attributes")
    expect(functions.filter(has_text="yaql")).to_have_count(1)
