"""Resource pages and the physical locks they show, in a real browser against the live service.

A stack with an image, a protected image, a server on the image, a nested
stack and a plain resource: open a resource from the topology, lock the
stack at level ``all`` and see the server locked and the images protected
(and which one already was), change the level with the reason kept, unlock
and read what each event says was locked and restored.
"""
import json
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, assert_accessible, make_user, screenshot, \
    sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CONVERGE_MS = 60_000

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "image": {"type": "OS::Glance::Image", "properties": {"location": "http://img/x.qcow2"}},
    "kept": {"type": "OS::Glance::Image", "properties": {"location": "http://img/y.qcow2",
                                                         "protected": True}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"image": {"get_resource": "image"}, "flavor": "m1.small"}},
    "child": {"type": "child.yaml"},
    "note": {"type": "OS::Heat::TestResource", "depends_on": "server",
             "properties": {"value": "hello"}}}}
CHILD = "heat_template_version: 2016-10-14\nresources:\n  inner: {type: OS::Heat::RandomString}\n"


def status_of(page):
    return page.locator("#stack-live .summary .status")


def test_resource_page_from_the_topology_and_physical_locks(page, live_service, unique):
    user, name = f"res-{unique}", f"rs-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    api, _, stack_url = api_stack_create(info, name, TEMPLATE, files={"child.yaml": CHILD})
    sign_in(page, user)
    page.locator("tr.stack-row", has_text=name).get_by_role("link", name=name).click()
    expect(status_of(page)).to_have_text("CREATE_COMPLETE", timeout=CONVERGE_MS)

    page.get_by_role("link", name="Topology").click()
    graph = page.locator("svg#topology")
    expect(graph.locator("g.node")).to_have_count(5)
    expect(graph.locator("path.edge")).to_have_count(2)
    expect(graph.locator("g.node[data-resource=server]")).to_have_attribute("data-family",
                                                                            "server")
    expect(graph.locator("g.node[data-resource=image]")).to_have_attribute("data-family",
                                                                           "image")
    expect(graph.locator("g.node[data-resource=child]")).to_have_attribute("data-family",
                                                                           "stack")
    assert_accessible(page, "topology tab")
    graph.locator("g.node[data-resource=server]").click()

    expect(page.get_by_role("heading", name=re.compile("^server"))).to_be_visible()
    facts = page.locator("#resource-facts")
    expect(facts).to_contain_text("OS::Nova::Server")
    expect(page.locator("#depends-on")).to_have_text("image")
    expect(page.locator("#required-by")).to_have_text("note")
    physical = page.locator("#physical-state")
    expect(physical).to_contain_text("ACTIVE")
    expect(physical).to_contain_text(re.compile(r"Locked\s*no"))
    expect(page.locator("#properties")).to_contain_text("m1.small")
    expect(page.locator("#attributes")).to_contain_text("first_address")
    expect(page.locator("#resource-events")).to_contain_text("CREATE_COMPLETE")
    assert_accessible(page, "resource page")
    page.get_by_role("link", name="image").first.click()
    expect(page.locator("#physical-state")).to_contain_text(re.compile(r"Protected\s*no"))

    # The nested stack's resource page links to the child stack.
    page.get_by_role("link", name=name, exact=True).click()
    page.get_by_role("link", name="Resources").click()
    page.locator("#resource-child").get_by_role("link", name="child", exact=True).click()
    expect(page.locator("#nested-link")).to_be_visible()

    # Lock at level all: each physical lock shows, and whether it was there before.
    page.get_by_role("link", name=name, exact=True).click()
    page.get_by_label("Lock level").select_option("all")
    page.get_by_label("Reason").fill("DB maintenance")
    page.locator("#action-lock").click()
    expect(status_of(page)).to_have_text("LOCK_COMPLETE", timeout=CONVERGE_MS)
    page.get_by_role("link", name="Resources").click()
    expect(page.locator("#resource-server .phys")).to_contain_text(
        "Locked by the stack lock (not before)")
    expect(page.locator("#resource-image .phys")).to_contain_text(
        "Protected by the stack lock (not before)")
    expect(page.locator("#resource-kept .phys")).to_contain_text(
        "Protected already protected before the stack lock")
    expect(page.locator("#resource-child .phys")).to_have_text("—")
    expect(page.locator("#resource-note .phys")).to_have_text("—")
    screenshot(page, "resources-locked")
    assert_accessible(page, "resources tab, locked")

    page.locator("#resource-server").get_by_role("link", name="server").click()
    physical = page.locator("#physical-state")
    expect(physical).to_contain_text(re.compile(r"Locked\s*yes"))
    expect(physical).to_contain_text("DB maintenance")
    expect(physical).to_contain_text("holds it (it was not locked before)")
    # Values are JSON (pretty-printed, as the API answers them), not Python reprs.
    expect(page.locator("#attributes")).to_contain_text('"locked": true')
    expect(page.locator("#attributes")).not_to_contain_text("True")
    expect(page.locator("#properties")).to_contain_text('"m1.small"')
    expect(page.locator("#resource-events")).to_contain_text(re.compile(
        r"Server \S+ locked \(\"heatweb stack .* locked: DB maintenance\"\)"))
    screenshot(page, "resource-page")
    shown = api.get(f"{stack_url}/resources/server").json()["resource"]
    assert shown["attributes"]["show"]["locked"] is True, shown["attributes"]
    show_cell = page.locator("#attributes tr", has=page.locator("th", has_text=re.compile(
        "^show$"))).locator("pre.json")
    assert json.loads(show_cell.text_content()) == shown["attributes"]["show"]
    assert json.loads(page.locator("#properties-json").text_content())["flavor"] == "m1.small"
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy = page.locator("button[data-copy=properties-json]")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert json.loads(page.evaluate("navigator.clipboard.readText()"))["flavor"] == "m1.small"
    kept = api.get(f"{stack_url}/resources/kept").json()["resource"]
    assert kept["attributes"]["show"]["protected"] is True, kept["attributes"]

    # Change the lock: the form starts with the current level and reason.
    page.get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_label("Lock level")).to_have_value("all")
    expect(page.get_by_label("Reason")).to_have_value("DB maintenance")
    page.get_by_label("Lock level").select_option("stacks")
    page.locator("#action-lock").click()
    expect(status_of(page)).to_have_text("LOCK_COMPLETE", timeout=CONVERGE_MS)
    expect(page.locator("#lock-details")).to_contain_text("DB maintenance")
    expect(page.locator("#stack-live .badge.lock")).to_have_text("Locked · stacks")
    page.get_by_role("link", name="Resources").click()
    expect(page.locator("#resource-server .phys")).to_have_text("—")
    expect(page.locator("#resource-kept .phys")).to_have_text("—")

    page.get_by_role("link", name="Overview").click()
    page.locator("#action-unlock").click()
    expect(status_of(page)).to_have_text("UNLOCK_COMPLETE", timeout=CONVERGE_MS)
    page.get_by_role("link", name="Events").click()
    events = page.locator("#tab-events")
    expect(events).to_contain_text("unlocked (restored: it was not locked before the stack lock)")
    expect(events).to_contain_text(
        "left protected (restored: it was protected before the stack lock)")
    expect(events).to_contain_text(
        "unprotected (restored: it was not protected before the stack lock)")
    expect(events).not_to_contain_text("no physical lock")
    api.delete(stack_url)


SLOW = {"heat_template_version": "2016-10-14", "resources": {
    "first": {"type": "OS::Heat::TestResource", "properties": {
        "value": "a", "action_wait_secs": {"create": 40}}},
    "second": {"type": "OS::Heat::TestResource", "properties": {
        "value": {"get_attr": ["first", "output"]}}}}}


def test_edges_while_a_create_is_in_progress(page, live_service, unique):
    """The API's required_by and the topology's arrows during a create, not only after."""
    user, name = f"edg-{unique}", f"ed-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    session, stack_id, stack_url = api_stack_create(info, name, SLOW)
    resources = {r["resource_name"]: r for r in
                 session.get(stack_url + "/resources").json()["resources"]}
    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/topology")
    expect(page.locator("svg#topology path.edge")).to_have_count(1)
    expect(page.locator("svg#topology g.node[data-resource=first]")).to_have_class(
        re.compile("st-in_progress"))
    page.locator("svg#topology g.node[data-resource=second]").click()
    expect(page.locator("#depends-on")).to_have_text("first")
    expect(page.locator("#resource-facts")).to_contain_text("INIT_COMPLETE")
    assert_accessible(page, "resource page, not created yet")
    stack = session.get(stack_url).json()["stack"]
    assert stack["stack_status"] == "CREATE_IN_PROGRESS", \
        "the create finished before the checks: they checked nothing in progress"
    assert stack["stack_status_reason"] == "Stack CREATE started", stack
    assert resources["first"]["required_by"] == ["second"], resources
    session.delete(stack_url)


SCALING = {"heat_template_version": "2016-10-14", "resources": {
    "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
        "min_size": 1, "max_size": 2, "resource": {"type": "OS::Heat::None"}}},
    "scale_out": {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "group"},
        "adjustment_type": "change_in_capacity", "scaling_adjustment": 1}}}}
MASKED = "•••• (hidden: only the stack's owner and admins see signed URLs)"


def test_a_policys_signed_alarm_url_is_shown_to_its_owner_and_masked_for_a_reader(
        page, live_service, unique):
    owner, reader, name = f"apo-{unique}", f"apr-{unique}", f"ap-{unique}"
    project = f"apq-{unique}"
    info = make_user(live_service, owner, project)
    make_user(live_service, reader, project, role="reader")
    _, stack_id, _ = api_stack_create(info, name, SCALING)

    sign_in(page, owner)
    page.goto(f"/stacks/{stack_id}/resources/scale_out")
    expect(page.locator("#resource-status")).to_contain_text("CREATE_COMPLETE",
                                                            timeout=CONVERGE_MS)
    attributes = page.locator("#attributes")
    expect(attributes).to_contain_text(re.compile(r"/webhooks/signal/[0-9a-f-]+/[0-9a-f]{40}"))
    expect(page.locator("#masked-alarm_url")).to_have_count(0)
    resource_url = page.url

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, reader)
    page.goto(resource_url)
    expect(page.locator("#masked-alarm_url")).to_have_text(MASKED)
    expect(page.locator("#masked-signal_url")).to_have_text(MASKED)
    expect(page.locator("main")).not_to_contain_text("/webhooks/signal/")
    # nor in the HTML at all (the JSON that "Copy JSON" copies keeps them masked)
    assert "/webhooks/signal/" not in page.content()
    assert json.loads(page.locator("#attributes-json").text_content())["alarm_url"] == "••••"
    assert_accessible(page, "resource page of a scaling policy, as a reader")
