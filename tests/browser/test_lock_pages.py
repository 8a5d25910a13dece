"""Maintenance windows on the stack page (issue 16): the lock form's window and preview,
and the Locks tab, in a real browser against the live service."""
import re
import time

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = {"heat_template_version": "2016-10-14", "resources": {
    "image": {"type": "OS::Glance::Image", "properties": {"location": "http://img/x.qcow2"}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"image": {"get_resource": "image"}, "flavor": "m1.small"}},
    "word": {"type": "OS::Heat::RandomString"}}}


def _create(info, name):
    headers = {"X-Auth-Token": info["token"]}
    created = requests.post(f"{info['endpoint']}/stacks", headers=headers, json={
        "stack_name": name, "template": TEMPLATE}, timeout=30)
    assert created.status_code == 201, created.text
    stack_id = created.json()["stack"]["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stack = requests.get(f"{info['endpoint']}/stacks/{name}/{stack_id}", headers=headers,
                             timeout=30).json()["stack"]
        if stack["stack_status"] == "CREATE_COMPLETE":
            return stack_id
        time.sleep(0.2)
    raise AssertionError(f"{name} did not reach CREATE_COMPLETE")


def test_lock_form_previews_then_locks_for_a_window_and_the_locks_tab_shows_it(
        page, live_service, unique):
    user = f"lp-{unique}"
    info = make_user(live_service, user, f"lpp-{unique}")
    name = f"lp{unique}"
    stack_id = _create(info, name)
    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/")
    page.get_by_label("Lock level").select_option("all")
    page.get_by_label("Reason").fill("kernel patch")
    page.get_by_label("Unlock after").fill("1h")
    with page.expect_request("**/lock-preview*") as asked:
        page.locator("#action-lock-preview").click()
    # The preview is a POST: neither the CSRF token nor the reason goes into the URL
    # (browser history, access logs).
    assert asked.value.method == "POST"
    preview = page.locator("#lock-preview")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Lock {name} at level all?")
    assert "?" not in page.url and "csrf" not in page.url and "kernel" not in page.url
    objects = page.locator("#preview-objects tbody tr")
    expect(objects).to_have_count(2)
    expect(preview.locator("#preview-objects")).to_contain_text("server")
    expect(preview.locator("#preview-objects")).to_contain_text("image")
    expect(page.locator("#preview-cannot")).to_contain_text("word (OS::Heat::RandomString): "
                                                            "takes no physical lock")
    # The form keeps what was chosen, to confirm.
    expect(page.get_by_label("Reason")).to_have_value("kernel patch")
    expect(page.get_by_label("Unlock after")).to_have_value("1h")
    screenshot(page, "lock-preview")
    assert_accessible(page, "lock preview")
    page.locator("#action-lock-confirm").click()
    expect(page.locator(".msg-success")).to_have_text(f"Lock of stack {name} started.")
    expect(page.locator("#stack-live .badge.lock")).to_have_text("Locked · all",
                                                                 timeout=30_000)
    expect(page.locator("#lock-expires")).to_contain_text("then the engine unlocks it")

    page.get_by_role("link", name="Locks").click()
    history = page.locator("#lock-history tbody tr")
    expect(history).to_have_count(1)
    expect(history.first).to_contain_text("lock")
    expect(history.first).to_contain_text("kernel patch")
    expect(history.first).to_contain_text(user)
    page.goto(f"/stacks/{stack_id}/")
    page.locator("#action-unlock").click()
    expect(page.locator(".msg-success")).to_have_text(f"Unlock of stack {name} started.")
    expect(page.locator("#stack-live .badge.lock")).to_have_count(0, timeout=30_000)
    page.goto(f"/stacks/{stack_id}/locks")
    expect(history).to_have_count(2)
    expect(history.first.locator("td").nth(1)).to_have_text("unlock")
    expect(history.first).to_contain_text(re.compile(r"\d+ s"))
    screenshot(page, "lock-history")
    assert_accessible(page, "locks tab")


def test_a_bad_window_in_the_lock_form_is_a_message(page, live_service, unique):
    user = f"lw-{unique}"
    info = make_user(live_service, user, f"lwp-{unique}")
    stack_id = _create(info, f"lw{unique}")
    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/")
    page.get_by_label("Unlock after").fill("someday")
    page.locator("#action-lock").click()
    expect(page.locator(".msg-error")).to_contain_text("Invalid lock duration")
    expect(page.locator("#stack-live .badge.lock")).to_have_count(0)


SLOW = {"heat_template_version": "2016-10-14", "resources": {
    "slow": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 30}}}}


def test_the_lists_checkboxes_lock_several_stacks_and_each_answers(page, live_service, unique):
    user = f"lf-{unique}"
    info = make_user(live_service, user, f"lfp-{unique}")
    names = [f"lf{unique}{i}" for i in range(3)]
    ids = [_create(info, name) for name in names[:2]]
    busy = requests.post(f"{info['endpoint']}/stacks", headers={"X-Auth-Token": info["token"]},
                         json={"stack_name": names[2], "template": SLOW}, timeout=30)
    ids.append(busy.json()["stack"]["id"])
    sign_in(page, user)
    page.goto("/")
    page.locator("#fleet-unlock").click()
    expect(page.locator(".msg-error")).to_have_text("Select at least one stack.")
    for name in names:
        page.get_by_label(f"Select {name}").check()
    page.locator("#fleet-level").select_option("stacks")
    page.locator("#fleet-reason").fill("fleet window")
    page.locator("#fleet-expires").fill("2h")
    screenshot(page, "fleet-select")
    page.locator("#fleet-lock").click()
    success = page.locator(".msg-success")
    expect(success).to_have_count(2)
    for name in names[:2]:
        expect(success.filter(has_text=f"Lock of stack {name} started.")).to_have_count(1)
    expect(page.locator(".msg-error")).to_contain_text(f"{names[2]}: Stack {names[2]} "
                                                       f"already has an action (CREATE) "
                                                       f"in progress.")
    for stack_id in ids[:2]:
        expect(page.locator(f"#row-{stack_id} .badge.lock")).to_have_text(
            "Locked · stacks", timeout=30_000)
    expect(page.locator(f"#row-{ids[2]} .badge.lock")).to_have_count(0)
    page.goto(f"/stacks/{ids[0]}/")
    expect(page.locator("#lock-details")).to_contain_text("fleet window")
    expect(page.locator("#lock-expires")).to_contain_text("then the engine unlocks it")


def _state(info, name, stack_id):
    return requests.get(f"{info['endpoint']}/stacks/{name}/{stack_id}",
                        headers={"X-Auth-Token": info["token"]}, timeout=30).json()["stack"]


def datetime_local(moment):
    """``moment`` as a datetime-local input holds it: Chromium drops ":00" seconds, and
    Playwright's fill refuses a value the input does not keep as given."""
    return moment.strftime("%Y-%m-%dT%H:%M" if moment.second == 0 else "%Y-%m-%dT%H:%M:%S")


def test_a_window_scheduled_on_the_locks_tab_locks_and_is_cancelled(page, live_service,
                                                                    unique):
    from datetime import datetime, timedelta, timezone

    user = f"lt-{unique}"
    info = make_user(live_service, user, f"ltp-{unique}")
    name = f"lt{unique}"
    stack_id = _create(info, name)
    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/locks")
    expect(page.locator("#tab-locks")).to_contain_text("No maintenance window.")
    now = datetime.now(timezone.utc)
    # Far enough ahead that the page still shows it scheduled on a loaded machine.
    page.get_by_label("Starts:").fill(datetime_local(now + timedelta(seconds=15)))
    page.get_by_label("Ends:").fill(datetime_local(now + timedelta(hours=1)))
    page.locator("#window-level").select_option("stacks")
    page.locator("#window-reason").fill("page window")
    page.locator("#window-schedule").click()
    expect(page.locator(".msg-success")).to_contain_text(f"of stack {name} scheduled.")
    expect(page.locator("#lock-windows .window-state")).to_have_text("scheduled")
    deadline = time.monotonic() + 90
    while _state(info, name, stack_id)["stack_status"] != "LOCK_COMPLETE":
        assert time.monotonic() < deadline, _state(info, name, stack_id)
        time.sleep(0.3)
    page.reload()
    expect(page.locator("#lock-windows .window-state")).to_have_text("active")
    expect(page.locator("#lock-history tbody tr").first).to_contain_text("page window")
    screenshot(page, "lock-windows")
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator(".msg-success")).to_contain_text(f"of stack {name} cancelled.")
    expect(page.locator("#lock-windows .window-state")).to_contain_text("cancelled")
    deadline = time.monotonic() + 60
    while _state(info, name, stack_id)["stack_status"] != "UNLOCK_COMPLETE":
        assert time.monotonic() < deadline, _state(info, name, stack_id)
        time.sleep(0.3)
