"""Status announced as it changes, refused buttons a keyboard reaches, pages at a phone's width.

In a real browser against the live service: the stack, its row and a
resource of it change status while three pages watch; each page's status
is a polite live region whose node stays while its text changes (what a
screen reader announces). Then a refused button is reached with Tab and
says why; at 375 px the resources table scrolls in its box with a cue and
the topology scrolls instead of running off the screen.
"""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, assert_accessible, browser_context, \
    make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CONVERGE_MS = 60_000

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "slow_resource_with_a_long_name": {"type": "OS::Heat::TestResource", "properties": {
        "value": "a", "action_wait_secs": {"create": 4}}},
    "after_it": {"type": "OS::Heat::TestResource", "properties": {
        "value": {"get_attr": ["slow_resource_with_a_long_name", "output"]}}}}}


# The status test's stack stays in progress until the test signals its handle: the
# pages and checks it makes meanwhile take as long as the machine needs (a 4 s create
# was over before them at load 10 and more).
HELD = {"heat_template_version": "2016-10-14", "resources": {
    "handle": {"type": "OS::Heat::WaitConditionHandle"},
    "slow_resource_with_a_long_name": {"type": "OS::Heat::WaitCondition", "properties": {
        "handle": {"get_resource": "handle"}, "timeout": 600}},
    "after_it": {"type": "OS::Heat::TestResource", "properties": {
        "value": {"get_attr": ["slow_resource_with_a_long_name", "data"]}}}}}


def watch(page, url, region):
    """Open ``url``; its status is a polite live region, marked to see that its node stays."""
    page.goto(url)
    live = page.locator(region)
    expect(live).to_have_attribute("aria-live", "polite")
    expect(live).to_contain_text("CREATE_IN_PROGRESS")
    live.evaluate("node => { node.watched = true; }")
    return live


def test_status_changes_are_announced_and_refused_buttons_say_why(
        context, page, live_service, unique):
    user, name = f"liv-{unique}", f"lv-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)
    api, stack_id, stack_url = api_stack_create(info, name, HELD)
    resource_page = context.new_page()
    list_page = context.new_page()
    stack = watch(page, f"/stacks/{stack_id}/", "#stack-status")
    # In progress, the refusals are the prominent ones, and each button says its own.
    expect(page.locator("#action-check")).to_have_attribute("aria-disabled", "true")
    expect(page.locator("#action-check")).to_have_accessible_description(
        re.compile("in progress"))
    resource = watch(resource_page, f"/stacks/{stack_id}/resources/slow_resource_with_a_long_name",
                     "#resource-status")
    row = watch(list_page, "/", f"#status-{stack_id}")
    expect(row).to_have_text(f"{name}: CREATE_IN_PROGRESS")  # the name is for screen readers
    assert_accessible(page, "stack page, in progress")
    assert_accessible(resource_page, "resource page, in progress")
    assert_accessible(list_page, "stacks list, a row in progress")
    signalled = api.post(f"{stack_url}/resources/handle/signal",
                         json={"status": "SUCCESS", "id": "1", "data": "done"})
    assert signalled.status_code == 200, signalled.text

    for live, where in ((stack, page), (resource, resource_page), (row, list_page)):
        expect(live).to_contain_text("CREATE_COMPLETE", timeout=CONVERGE_MS)
        assert live.evaluate("node => node.watched") is True, \
            f"{where.url}: the live region was replaced, not updated (nothing is announced)"

    # Resume is refused on a stack that is not suspended: the reason was only a hover
    # tooltip; now Tab reaches the button, which shows and is described by it.
    page.locator("#action-suspend").focus()
    page.keyboard.press("Tab")
    resume = page.locator("#action-resume")
    expect(resume).to_be_focused()
    expect(resume).to_be_disabled()  # aria-disabled: focusable, but it does nothing
    reason = page.locator("#why-resume")
    expect(reason).to_be_visible()
    expect(reason).to_have_text(f"Resume of stack {name} is not allowed in state CREATE_COMPLETE.")
    expect(resume).to_have_accessible_description(reason.inner_text())
    screenshot(page, "refused-button-focused")
    page.evaluate("window.stayed = true")
    acted = resume.evaluate("button => button.dispatchEvent(new MouseEvent('click', "
                            "{bubbles: true, cancelable: true}))")
    assert acted is False, "a click on the refused button was not cancelled: it submits"
    page.keyboard.press("Enter")
    assert_accessible(page, "stack page, a refused button focused")
    assert page.evaluate("window.stayed") is True, "the refused button submitted its form"
    expect(page.locator(".msg")).to_have_count(0)
    api.delete(stack_url)


PHONE = 375


def box_of(locator, tries=20):
    """``locator``'s bounding box once it is on the page: the live refresh replaces the
    table's rows, and a row replaced at that moment has no box (None)."""
    for _ in range(tries):
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        if box is not None:
            return box
    raise AssertionError(f"{locator} never stayed on the page long enough to be measured")


def assert_scrolls_on_screen(page, box, cue):
    """``box`` is on the screen, scrolls sideways inside it, and its ``cue`` shows."""
    where = box.bounding_box()
    assert where["x"] >= 0 and where["x"] + where["width"] <= PHONE, where
    assert box.evaluate("el => el.scrollWidth > el.clientWidth"), \
        f"{box}: its content fits at {PHONE} px, nothing to scroll"
    expect(page.locator(cue)).to_be_visible()
    expect(page.locator(cue)).to_contain_text("sideways")
    box.evaluate("el => { el.scrollLeft = 200; }")
    assert box.evaluate("el => el.scrollLeft") > 0, f"{box} does not scroll"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE


def test_resources_and_topology_at_a_phones_width(browser, live_service, unique):
    user, name = f"nar-{unique}", f"nr-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    api, stack_id, stack_url = api_stack_create(info, name, TEMPLATE)
    with browser_context(browser, live_service,
                         viewport={"width": PHONE, "height": 740}) as context:
        page = context.new_page()
        sign_in(page, user)
        page.goto(f"/stacks/{stack_id}/resources")
        expect(page.locator("#resource-after_it")).to_contain_text("CREATE_COMPLETE",
                                                                   timeout=CONVERGE_MS)
        # The status is the column after the name: on screen without scrolling sideways.
        status = box_of(page.locator("#resource-after_it .status"))
        assert page.locator("#resources-table").evaluate("el => el.scrollLeft") == 0
        assert 0 <= status["x"] and status["x"] + status["width"] <= PHONE, status
        assert_scrolls_on_screen(page, page.locator("#resources-table"), "#resources-cue")
        screenshot(page, "resources-phone")
        assert_accessible(page, "resources tab at 375 px")

        page.get_by_role("link", name="Topology").click()
        assert_scrolls_on_screen(page, page.locator(".topology-wrap"), "#topology-cue")
        after = page.locator("svg#topology g.node[data-resource=after_it]")
        after.scroll_into_view_if_needed()
        expect(after).to_be_in_viewport()
        screenshot(page, "topology-phone")
        assert_accessible(page, "topology tab at 375 px")
    api.delete(stack_url)
