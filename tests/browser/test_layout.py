"""Every page at a desktop's and a phone's width: screenshots and the geometry of tables and tabs.

In a real browser against the live service, at 1280 px and 375 px: each
stack page (list, every tab, resource, update, delete, lock preview,
launch), the software pages and the admin's traversal and sync point lists
are screenshot (under pytest's temporary directory) and measured:

* no page is wider than the window (wide content scrolls in its own box);
* at 1280 px every table column lies inside the window, and the header of
  a table with a header row is one row of cells, left to right (a grid
  rule meant for cards squeezed the stack list's header to the left once);
* at 375 px every tab of the stack page is inside the window (the tab bar
  wraps), so Topology and Locks are not hidden off-screen.
"""
import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, browser_context, make_user, screenshot, \
    sign_in
from tests.browser.test_admin_traversal import TEMPLATE as WAITING_TEMPLATE
from tests.browser.test_admin_traversal import make_admin
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.live]

WIDTHS = (1280, 375)
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
TEMPLATE = (ROOT / "examples" / "server_with_image.yaml").read_text()

# Each table's columns, measured in the page: the header cells' boxes and those of the first
# body row, and how far the page runs past the window.
MEASURE = """() => {
  const box = el => { const r = el.getBoundingClientRect();
                      return {left: r.left, right: r.right, top: r.top, width: r.width}; };
  const visible = el => el.getClientRects().length > 0 &&
                        getComputedStyle(el).visibility !== "hidden";
  const tables = [...document.querySelectorAll("table")].filter(visible).map(t => ({
    id: t.id || t.className || "table",
    head: [...t.querySelectorAll("thead tr:first-child > th")].filter(visible).map(box),
    row: [...t.querySelectorAll("tbody tr:first-child > *")].filter(visible).map(box),
    // a table in a scrolling box may be wider than the window: it scrolls there
    scrolls: !!t.closest(".table-wrap, .nodes-wrap") &&
             t.closest(".table-wrap, .nodes-wrap").scrollWidth >
             t.closest(".table-wrap, .nodes-wrap").clientWidth}));
  const tabs = [...document.querySelectorAll("nav.tabs a")].map(a => ({
    text: a.textContent.trim(), ...box(a)}));
  return {pageWidth: document.documentElement.scrollWidth, window: window.innerWidth,
          tables, tabs};
}"""


def _wait_complete(session, url):
    for _ in range(300):
        stack = session.get(url).json()["stack"]
        if stack["stack_status"] == "CREATE_COMPLETE":
            return stack
        assert not stack["stack_status"].endswith("FAILED"), stack["stack_status_reason"]
        time.sleep(0.2)
    raise AssertionError(f"{url}: {stack['stack_status']}")


def _pages(stack_id):
    stack = f"/stacks/{stack_id}"
    return {"list": "/", "launch": "/stacks/launch", "overview": f"{stack}/",
            **{tab: f"{stack}/{tab}" for tab in ("resources", "events", "template",
                                                  "topology", "locks")},
            "resource": f"{stack}/resources/server", "update": f"{stack}/update",
            "delete": f"{stack}/delete", "lock-preview": f"{stack}/lock-preview",
            "software-configs": "/software/", "software-deployments": "/software/deployments/",
            "admin-traversals": "/admin/convergence/traversal/",
            "admin-sync-points": "/admin/convergence/syncpoint/",
            "admin-stacks": "/admin/stacks/stack/"}


def _problems(name, width, measured):
    problems = []
    window = measured["window"]
    if measured["pageWidth"] > window + 1:
        problems.append(f"{name} at {width}px: the page is {measured['pageWidth']}px wide")
    for table in measured["tables"]:
        where = f"{name} at {width}px, table {table['id']}"
        if width >= 1280 and not table["scrolls"]:
            for cell in table["head"] + table["row"]:
                if cell["right"] > window + 1 or cell["left"] < -1:
                    problems.append(f"{where}: a column at {cell['left']:.0f}-"
                                    f"{cell['right']:.0f}px is outside the window")
                    break
        head = table["head"]
        if width >= 1280 and len(head) > 1:
            if len({round(c["top"]) for c in head}) != 1 or \
                    any(b["left"] < a["right"] - 1 for a, b in zip(head, head[1:])):
                problems.append(f"{where}: the header cells are not one row left to right: "
                                f"{[(round(c['left']), round(c['top'])) for c in head]}")
            if table["row"] and len(table["row"]) == len(head):
                for h, c in zip(head, table["row"]):
                    if abs(h["left"] - c["left"]) > 1 or abs(h["width"] - c["width"]) > 1:
                        problems.append(f"{where}: a header cell is not above its column")
                        break
    if width <= 375:
        for tab in measured["tabs"]:
            if tab["right"] > window + 1 or tab["left"] < -1:
                problems.append(f"{name} at {width}px: tab {tab['text']} is off-screen "
                                f"({tab['left']:.0f}-{tab['right']:.0f}px)")
    return problems


def test_every_page_fits_at_1280_and_375_px(browser, live_service, unique):
    user, name = f"lay-{unique}", f"lay{unique}"
    info = make_user(live_service, user, f"layp-{unique}")
    make_admin(live_service, user)
    session, stack_id, stack_url = api_stack_create(info, name, TEMPLATE)
    for other in range(2):
        api_stack_create(info, f"{name}-more-{other}", TEMPLATE)
    # a deployment waiting for its agent keeps its traversal's sync points listed
    api_stack_create(info, f"{name}-waiting", WAITING_TEMPLATE)
    _wait_complete(session, stack_url)
    problems, shots = [], []
    for width in WIDTHS:
        with browser_context(browser, live_service,
                             viewport={"width": width, "height": 900}) as context:
            page = context.new_page()
            sign_in(page, user)
            for page_name, url in _pages(stack_id).items():
                response = page.goto(url)
                assert response.status == 200, f"{url}: {response.status}"
                expect(page.locator("body")).to_be_visible()
                shots.append(screenshot(page, f"layout-{width}-{page_name}", full_page=True))
                problems += _problems(page_name, width, page.evaluate(MEASURE))
                if page_name in ("admin-traversals", "admin-sync-points"):
                    # the admin's dates read like the pages' (ISO 8601, UTC)
                    field = "created_at" if page_name == "admin-traversals" else "updated_at"
                    expect(page.locator(f"td.field-{field}").first).to_have_text(ISO_UTC)
    assert not problems, "\n".join(problems)
    assert all(shot.stat().st_size > 0 for shot in shots)


def test_the_stack_list_header_spans_the_table_at_1280_and_1920_px(browser, live_service,
                                                                   unique):
    """The stack list's header row and its columns line up and fill the table."""
    user, name = f"lsw-{unique}", f"lsw{unique}"
    info = make_user(live_service, user, f"lswp-{unique}")
    api_stack_create(info, name, {"heat_template_version": "2016-10-14", "resources": {}})
    for width in (1280, 1920):
        with browser_context(browser, live_service,
                             viewport={"width": width, "height": 800}) as context:
            page = context.new_page()
            sign_in(page, user)
            table = page.locator("table.stacks")
            expect(table.locator("thead")).to_be_visible()
            table_box = table.bounding_box()
            heads = [h.bounding_box() for h in table.locator("thead th").all()]
            assert len(heads) == 7  # select, name, status, lock, created, updated, actions
            # the header cells run across the whole table, one row
            assert heads[-1]["x"] + heads[-1]["width"] >= table_box["x"] + table_box["width"] - 2
            assert len({round(h["y"]) for h in heads}) == 1, heads
            screenshot(page, f"stack-list-{width}")
