"""The stack list's per-row menu and bulk actions (issue 40), in a real browser.

Each action goes through the door the API uses: a row's Suspend and Resume
do what the stack page's buttons do, and come back to the list; the checked
stacks are suspended, resumed, checked or deleted one by one, a locked stack
is refused alone with the lock's message, and a bulk delete asks first. A
POST without the CSRF token is a 403, and a bad action or stack a message,
never a 500.
"""
import time

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "word": {"type": "OS::Heat::RandomString"},
    "value": {"type": "OS::Heat::TestResource", "properties": {"value": "v"}}}}


class Api:
    def __init__(self, info):
        self.info = info
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": info["token"]})

    def create(self, name):
        created = self.session.post(f"{self.info['endpoint']}/stacks", timeout=30,
                                    json={"stack_name": name, "template": TEMPLATE})
        assert created.status_code == 201, created.text
        stack_id = created.json()["stack"]["id"]
        self.wait(name, stack_id, "CREATE_COMPLETE")
        return stack_id

    def stack(self, name, stack_id):
        answer = self.session.get(f"{self.info['endpoint']}/stacks/{name}/{stack_id}",
                                  timeout=30)
        return answer.json()["stack"] if answer.status_code == 200 else None

    def wait(self, name, stack_id, status):
        deadline = time.monotonic() + 90
        while True:
            stack = self.stack(name, stack_id)
            got = stack["stack_status"] if stack else "gone"
            if got == status or (status == "gone" and got == "DELETE_COMPLETE"):
                return stack
            assert time.monotonic() < deadline, f"{name}: {got}, never {status}"
            time.sleep(0.2)

    def lock(self, name, stack_id):
        answer = self.session.post(
            f"{self.info['endpoint']}/stacks/{name}/{stack_id}/actions", timeout=30,
            json={"lock": {"level": "all"}, "reason": "maintenance by ops"})
        assert answer.status_code in (200, 202), answer.text
        self.wait(name, stack_id, "LOCK_COMPLETE")


def open_menu(page, stack_id):
    page.locator(f"#menu-{stack_id} summary").click()
    return page.locator(f"#menu-{stack_id} .menu")


def test_a_rows_menu_suspends_and_resumes_and_comes_back_to_the_list(page, live_service,
                                                                     unique):
    user, name = f"ra-{unique}", f"ra{unique}"
    info = make_user(live_service, user, f"rap-{unique}")
    api = Api(info)
    stack_id = api.create(name)
    sign_in(page, user)
    page.goto("/?name=ra")
    menu = open_menu(page, stack_id)
    expect(menu.get_by_role("link", name="Update…")).to_have_attribute(
        "href", f"/stacks/{stack_id}/update")
    expect(menu.get_by_role("link", name="Lock…")).to_have_attribute(
        "href", f"/stacks/{stack_id}/lock-preview")
    expect(menu.get_by_role("link", name="Delete…")).to_have_attribute(
        "href", f"/stacks/{stack_id}/delete")
    # Resume is refused by the state table (not suspended): focusable, with the reason.
    expect(page.locator(f"#row-resume-{stack_id}")).to_have_attribute("aria-disabled", "true")
    expect(page.locator(f"#why-resume-{stack_id}")).to_contain_text("not allowed")
    screenshot(page, "list-row-menu")
    assert_accessible(page, "the stack list with a row's menu open")
    page.locator(f"#row-suspend-{stack_id}").click()
    expect(page.locator(".msg-success")).to_have_text(f"Suspend of stack {name} started.")
    assert page.url.endswith("/?name=ra"), page.url  # back on the list as it was
    api.wait(name, stack_id, "SUSPEND_COMPLETE")
    page.reload()
    open_menu(page, stack_id)
    page.locator(f"#row-resume-{stack_id}").click()
    expect(page.locator(".msg-success")).to_have_text(f"Resume of stack {name} started.")
    api.wait(name, stack_id, "RESUME_COMPLETE")


def test_checked_stacks_are_suspended_and_deleted_one_by_one_and_a_locked_one_refuses(
        page, live_service, unique):
    user = f"rb-{unique}"
    info = make_user(live_service, user, f"rbp-{unique}")
    api = Api(info)
    free, locked = f"rbfree{unique}", f"rblocked{unique}"
    ids = {free: api.create(free), locked: api.create(locked)}
    api.lock(locked, ids[locked])
    sign_in(page, user)
    page.goto("/")
    # The locked row's menu says why before anything is asked.
    open_menu(page, ids[locked])
    expect(page.locator(f"#row-suspend-{ids[locked]}")).to_have_attribute("aria-disabled",
                                                                           "true")
    expect(page.locator(f"#why-suspend-{ids[locked]}")).to_contain_text("locked")
    expect(page.locator(f"#row-unlock-{ids[locked]}")).to_be_visible()

    for name in (free, locked):
        page.get_by_label(f"Select {name}").check()
    page.locator("#fleet-suspend").click()
    expect(page.locator(".msg-success")).to_have_text(f"Suspend of stack {free} started.")
    refusal = page.locator(".msg-error")
    expect(refusal).to_have_count(1)
    expect(refusal).to_contain_text(f"{locked}: ")
    expect(refusal).to_contain_text("maintenance by ops")
    api.wait(free, ids[free], "SUSPEND_COMPLETE")
    assert api.stack(locked, ids[locked])["stack_status"] == "LOCK_COMPLETE"

    page.goto("/")
    for name in (free, locked):
        page.get_by_label(f"Select {name}").check()
    page.locator("#fleet-delete").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Delete 2 stacks?")
    items = page.locator("#fleet-delete-list li")
    expect(items).to_have_count(2)
    expect(items.filter(has_text=locked)).to_contain_text("not deleted:")
    expect(items.filter(has_text=free)).not_to_contain_text("not deleted")
    expect(page.locator("#confirm-fleet-delete")).to_have_text("Delete 1 stack")
    screenshot(page, "list-bulk-delete-confirm")
    assert_accessible(page, "the bulk delete confirmation")
    page.locator("#confirm-fleet-delete").click()
    expect(page.locator(".msg-success")).to_have_text(f"Delete of stack {free} started.")
    expect(page.locator(".msg-error")).to_contain_text(f"{locked}: ")
    api.wait(free, ids[free], "gone")
    assert api.stack(locked, ids[locked])["stack_status"] == "LOCK_COMPLETE"

    # The lock is lifted from the row's menu, and the stack is deleted from the list.
    page.goto("/")
    open_menu(page, ids[locked])
    page.locator(f"#row-unlock-{ids[locked]}").click()
    expect(page.locator(".msg-success")).to_have_text(f"Unlock of stack {locked} started.")
    api.wait(locked, ids[locked], "UNLOCK_COMPLETE")
    page.goto("/")
    page.get_by_label(f"Select {locked}").check()
    page.locator("#fleet-delete").click()
    expect(page.locator("#fleet-delete-list li")).not_to_contain_text("not deleted")
    page.locator("#confirm-fleet-delete").click()
    expect(page.locator(".msg-success")).to_have_text(f"Delete of stack {locked} started.")
    api.wait(locked, ids[locked], "gone")


def test_list_actions_refuse_without_csrf_and_answer_bad_input_with_a_message(
        page, live_service, unique):
    user, name = f"rc-{unique}", f"rc{unique}"
    info = make_user(live_service, user, f"rcp-{unique}")
    api = Api(info)
    stack_id = api.create(name)
    sign_in(page, user)
    for path, form in (("/stacks/fleet", {"action": "delete", "confirm": "yes",
                                          "stack": stack_id}),
                       (f"/stacks/{stack_id}/actions/suspend", {"next": "/"})):
        answer = page.request.post(path, form=form, max_redirects=0)
        assert answer.status == 403, (path, answer.status)
    assert api.stack(name, stack_id)["stack_status"] == "CREATE_COMPLETE"

    page.goto("/")
    token = page.locator("#fleet-form input[name=csrfmiddlewaretoken]").input_value()
    headers = {"Referer": page.url}
    for form, message in (
            ({"action": "explode", "stack": stack_id}, "Choose what to do"),
            ({"action": "check", "stack": "no-such-stack"}, "no-such-stack: "),
            ({"action": "check", "stack": stack_id, "next": "https://elsewhere.example/"},
             f"Check of stack {name} started.")):
        answer = page.request.post("/stacks/fleet", headers=headers,
                                   form={"csrfmiddlewaretoken": token, **form})
        assert answer.status == 200, (form, answer.status)  # the list, after the redirect
        assert answer.url.rstrip("/") == page.url.rstrip("/"), answer.url  # never elsewhere
        assert message in answer.text(), (form, message)
    api.wait(name, stack_id, "CHECK_COMPLETE")
