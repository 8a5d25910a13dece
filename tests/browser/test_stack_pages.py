"""The stack pages in a real browser, against gunicorn and real Celery workers.

One stack's life, as a cloud admin would click it: launch from the form,
watch it converge without reloading, lock it, be refused a delete, unlock,
and be refused a tampered immutable parameter on update.
"""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, assert_accessible, browser_context, make_user, \
    screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = """\
heat_template_version: 2018-08-31
description: A network, a server on it and a volume, for the browser tests.
parameter_groups:
  - label: Cluster
    description: Where the cluster lives.
    parameters: [cluster_name, size]
parameters:
  cluster_name:
    type: string
    label: Cluster name
    description: Fixed for the life of the stack.
    default: blue
    immutable: true
  size:
    type: number
    label: Size
    default: 2
    constraints:
      - range: {min: 1, max: 5}
        description: size must be between 1 and 5
  admin_password:
    type: string
    hidden: true
    default: s3cret
resources:
  network:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: cluster_name}
      action_wait_secs: {create: 5}
  server:
    type: OS::Heat::TestResource
    properties:
      value: {get_attr: [network, output]}
      action_wait_secs: {create: 5}
  volume:
    type: OS::Heat::TestResource
    depends_on: network
    properties:
      value: {get_param: size}
outputs:
  cluster:
    description: The cluster's name, through the server.
    value: {get_attr: [server, output]}
"""

CONVERGE_MS = 60_000


def status_of(page):
    return page.locator("#stack-live .summary .status")


def launch(page, name, size="3"):
    page.get_by_role("link", name="Launch stack").first.click()
    page.get_by_label("Stack name").fill(name)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(TEMPLATE)
    page.get_by_role("button", name="Next: parameters").click()
    expect(page.get_by_role("group", name="Cluster")).to_be_visible()
    expect(page.get_by_label("Cluster name")).to_have_value("blue")
    expect(page.get_by_label("admin_password")).to_have_attribute("type", "password")
    expect(page.get_by_text("value 1 to 5")).to_be_visible()
    page.get_by_label("Size").fill("9")
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".field-error")).to_contain_text("size must be between 1 and 5")
    screenshot(page, "launch-form")  # the generated form, refusing 9 with the constraint's text
    page.get_by_label("Size").fill(size)
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".msg-success")).to_have_text(f"Launch of stack {name} started.")


def test_launch_lock_refuse_unlock_update(page, live_service, unique):
    user, name = f"ops-{unique}", f"web-{unique}"
    make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)
    expect(page.get_by_role("heading", name=re.compile("^Stacks"))).to_be_visible()

    launch(page, name)
    row = page.locator("tr.stack-row", has_text=name)
    expect(row).to_contain_text("CREATE_IN_PROGRESS")
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url))
    page.evaluate("window.notReloaded = true")
    try:
        expect(row).to_contain_text("CREATE_COMPLETE", timeout=CONVERGE_MS)
    except AssertionError:
        shown = row.inner_text()
        page.reload()
        raise AssertionError(f"the row shows {shown!r}; after a reload: "
                             f"{row.inner_text()!r}") from None
    assert page.evaluate("window.notReloaded") is True, f"the page navigated: {navigations}"

    row.get_by_role("link", name=name).click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()
    cluster_row = page.locator("#tab-overview tr", has=page.locator("th", has_text="cluster"))
    expect(cluster_row.filter(has_text="through the server").locator("td").first) \
        .to_have_text("blue")
    page.get_by_label("Lock level").select_option("stacks")
    page.get_by_label("Reason").fill("DB maintenance")
    page.locator("#action-lock").click()
    expect(page.locator(".msg-success")).to_have_text(f"Lock of stack {name} started.")
    expect(status_of(page)).to_have_text("LOCK_COMPLETE", timeout=CONVERGE_MS)
    expect(page.locator("#stack-live .badge.lock")).to_have_text("Locked · stacks")
    for action in ("suspend", "resume", "check", "update", "delete"):
        expect(page.locator(f"#action-{action}")).to_be_disabled()
    expect(page.locator("#action-unlock")).to_be_enabled()
    expect(page.locator("#action-reasons")).to_contain_text(
        f"Stack {name} is locked at level stacks by {user} (\"DB maintenance\"); unlock it first.")
    lock = page.locator("#lock-details")
    expect(lock).to_contain_text("DB maintenance")
    expect(lock).to_contain_text(user)
    screenshot(page, "stack-locked")
    assert_accessible(page, "a locked stack, its buttons refused")
    page.get_by_role("link", name="Stacks", exact=True).first.click()
    expect(row.locator(".badge.lock")).to_have_text("Locked · stacks")
    screenshot(page, "stacks-list")
    page.go_back()

    # The buttons are disabled, but the server is the one that refuses.
    page.goto(page.url.rstrip("/") + "/delete")
    expect(page.locator("#confirm-delete")).to_be_disabled()
    assert_accessible(page, "delete confirmation, refused")
    with page.expect_navigation():
        page.evaluate("document.getElementById('form-delete').submit()")
    expect(page.locator(".msg-error")).to_have_text(
        f"Stack {name} is locked at level stacks by {user} (\"DB maintenance\"); unlock it first.")
    expect(status_of(page)).to_have_text("LOCK_COMPLETE")
    with page.expect_navigation():
        page.evaluate("document.getElementById('form-suspend').submit()")
    expect(page.locator(".msg-error")).to_contain_text("is locked at level stacks")

    page.locator("#action-unlock").click()
    expect(page.locator(".msg-success")).to_have_text(f"Unlock of stack {name} started.")
    expect(status_of(page)).to_have_text("UNLOCK_COMPLETE", timeout=CONVERGE_MS)
    expect(page.locator("#stack-live .badge.lock")).to_have_count(0)
    expect(page.locator("#action-delete")).to_be_enabled()

    page.get_by_role("link", name="Topology").click()
    graph = page.locator("svg#topology")
    expect(graph).to_be_visible()
    expect(graph.locator("g.node")).to_have_count(3)
    expect(graph.locator("path.edge")).to_have_count(2)
    expect(graph.locator("g.node[data-resource=server]")).to_have_class(re.compile("st-complete"))
    screenshot(page, "stack-topology")

    page.get_by_role("link", name="Update").click()
    cluster = page.get_by_label("Cluster name")
    expect(cluster).to_have_attribute("readonly", "readonly")
    expect(page.get_by_text("Immutable: this value cannot be changed by an update.")).to_be_visible()
    screenshot(page, "update-form")
    assert_accessible(page, "update form")
    page.evaluate("document.getElementById('id_p-cluster_name').removeAttribute('readonly')")
    cluster.fill("green")
    page.locator("#update").click()
    expect(page.locator(".field-error")).to_have_text(
        "This parameter is immutable and may not be updated.")
    expect(page.get_by_label("Cluster name")).to_have_value("blue")

    page.get_by_label("Size").fill("4")
    page.locator("#update").click()
    expect(page.locator(".msg-success")).to_have_text(f"Update of stack {name} started.")
    expect(status_of(page)).to_have_text("UPDATE_COMPLETE", timeout=CONVERGE_MS)
    size_row = page.locator("#tab-overview tr", has=page.locator("th", has_text="size"))
    expect(size_row.locator("td")).to_have_text("4")

    page.get_by_role("link", name="Events").click()
    expect(page.locator("#tab-events tbody tr").first).to_contain_text("UPDATE_COMPLETE")
    assert_accessible(page, "events tab")
    page.get_by_role("link", name="Resources").click()
    expect(page.locator("#resource-server")).to_contain_text("OS::Heat::TestResource")
    page.get_by_role("link", name="Template", exact=True).click()
    expect(page.locator("#tab-template pre").first).to_contain_text("immutable: true")
    assert_accessible(page, "template tab")

    page.get_by_role("link", name="Overview").click()
    page.locator("#action-delete").click()
    page.locator("#confirm-delete").click()
    expect(page.locator(".msg-success")).to_have_text(f"Delete of stack {name} started.")
    expect(row).to_contain_text(re.compile("DELETE_(IN_PROGRESS|COMPLETE)"))


def test_sign_in_is_required_and_wrong_passwords_are_refused(page, live_service, unique):
    user = f"who-{unique}"
    make_user(live_service, user, f"proj-{unique}")
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(PASSWORD + "x")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".msg-error")).to_contain_text("Please enter a correct username")
    assert_accessible(page, "sign-in page, a wrong password refused")
    sign_in(page, user)
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login/$"))
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/"))


def test_reader_looks_but_may_not_act_and_switches_projects(page, live_service, unique):
    owner = make_user(live_service, f"own-{unique}", f"shared-{unique}")
    from heatclient import client

    heat = client.Client("1", endpoint=owner["endpoint"], token=owner["token"])
    heat.stacks.create(stack_name=f"theirs-{unique}", template={
        "heat_template_version": "2018-08-31",
        "resources": {"n": {"type": "OS::Heat::None"}}})
    reader = f"rd-{unique}"
    make_user(live_service, reader, f"home-{unique}")
    make_user(live_service, reader, f"shared-{unique}", role="reader")

    sign_in(page, reader)
    switch = page.get_by_label("Project")
    switch.select_option(label=f"shared-{unique}")
    expect(page.get_by_role("heading", name=re.compile(f"in shared-{unique}"))).to_be_visible()
    row = page.locator("tr.stack-row", has_text=f"theirs-{unique}")
    expect(row).to_contain_text("CREATE_COMPLETE", timeout=CONVERGE_MS)
    row.get_by_role("link").click()
    for action in ("suspend", "check", "lock", "update", "delete"):
        expect(page.locator(f"#action-{action}")).to_be_disabled()
    expect(page.locator("#action-reasons")).to_contain_text("(reader) may only look")
    assert_accessible(page, "a stack as a reader")
    with page.expect_navigation():
        page.evaluate("document.getElementById('form-check').submit()")
    expect(page.locator(".msg-error")).to_have_text("The reader role may not perform this action.")

    switch = page.get_by_label("Project")
    switch.select_option(label=f"home-{unique}")
    expect(page.get_by_role("heading", name=re.compile(f"in home-{unique}"))).to_be_visible()
    expect(page.locator("td.empty")).to_have_text("No stacks yet.")


def test_stacks_list_fits_a_phone(browser, live_service, unique):
    user = f"ph-{unique}"
    make_user(live_service, user, f"proj-{unique}")
    with browser_context(browser, live_service, viewport={"width": 390, "height": 800}) \
            as context:
        page = context.new_page()
        sign_in(page, user)
        page.goto("/stacks/launch")
        page.get_by_label("Stack name").fill(f"small-{unique}")
        page.get_by_label("Template (HOT, YAML or JSON)").fill(TEMPLATE)
        page.get_by_role("button", name="Next: parameters").click()
        page.get_by_role("button", name="Launch").click()
        expect(page.locator("tr.stack-row")).to_contain_text("CREATE_COMPLETE",
                                                             timeout=CONVERGE_MS)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the list is {width}px wide on a 390px screen"
        screenshot(page, "stacks-list-phone")
        page.locator("tr.stack-row").get_by_role("link", name=f"small-{unique}").click()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the detail page is {width}px wide on a 390px screen"
