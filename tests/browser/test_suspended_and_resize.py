"""Two things a page must not misstate, in a real browser against the live service.

* A stack suspended, then locked and unlocked, reads UNLOCK_COMPLETE: the
  page says it is still suspended (a badge), and so does ``stack show``
  (``suspended: true``, and the status reason says so).
* A flavor change resizes the server in place: the update preview says
  "updated in place", and the update keeps the server's physical id.
"""
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CONVERGE_MS = 60_000
SIMPLE = {"heat_template_version": "2016-10-14", "resources": {
    "box": {"type": "OS::Heat::TestResource", "properties": {"value": "a"}}}}
# The server's network comes from a resource: resolved only when the update runs.
SERVER = """\
heat_template_version: 2018-08-31
parameters:
  flavor:
    type: string
    default: m1.small
    constraints:
      - allowed_values: [m1.tiny, m1.small]
resources:
  net:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.8.0.0/24}
  server:
    type: OS::Nova::Server
    depends_on: subnet
    properties:
      image: cirros
      flavor: {get_param: flavor}
      networks: [{network: {get_resource: net}}]
"""


def wait_for(session, url, state):
    for _ in range(300):
        stack = session.get(url).json()["stack"]
        if stack["stack_status"] == state:
            return stack
        assert not stack["stack_status"].endswith("FAILED"), stack["stack_status_reason"]
        time.sleep(0.2)
    raise AssertionError(f"{url} is {stack['stack_status']}, wanted {state}")


def act(session, url, body, state):
    resp = session.post(f"{url}/actions", json=body)
    assert resp.status_code == 200, resp.text
    return wait_for(session, url, state)


def test_a_suspended_stack_locked_and_unlocked_says_it_is_still_suspended(
        page, live_service, unique):
    user, name = f"sus-{unique}", f"sus{unique}"
    info = make_user(live_service, user, f"susp-{unique}")
    session, stack_id, url = api_stack_create(info, name, SIMPLE)
    stack = wait_for(session, url, "CREATE_COMPLETE")
    assert stack["suspended"] is False
    assert act(session, url, {"suspend": None}, "SUSPEND_COMPLETE")["suspended"] is True
    act(session, url, {"lock": {"level": "stacks"}}, "LOCK_COMPLETE")
    stack = act(session, url, {"unlock": None}, "UNLOCK_COMPLETE")
    assert stack["suspended"] is True, stack
    assert "still suspended" in stack["stack_status_reason"], stack
    listed = {s["id"]: s for s in session.get(f"{info['endpoint']}/stacks").json()["stacks"]}
    assert listed[stack_id]["suspended"] is True

    sign_in(page, user)
    expect(page.locator(f"#row-{stack_id} .badge.suspended")).to_have_text("Suspended")
    page.goto(f"/stacks/{stack_id}/")
    expect(page.locator("#stack-live .summary .status")).to_have_text("UNLOCK_COMPLETE")
    expect(page.locator("#stack-live .badge.suspended")).to_have_text("Suspended")
    screenshot(page, "suspended-after-unlock")

    assert act(session, url, {"resume": None}, "RESUME_COMPLETE")["suspended"] is False
    page.reload()
    expect(page.locator("#stack-live .badge.suspended")).to_have_count(0)


def test_a_flavor_change_is_previewed_and_done_as_a_resize_in_place(page, live_service, unique):
    user, name = f"rsz-{unique}", f"rsz{unique}"
    info = make_user(live_service, user, f"rszp-{unique}")
    session, stack_id, url = api_stack_create(info, name, SERVER)
    wait_for(session, url, "CREATE_COMPLETE")
    before = session.get(f"{url}/resources/server").json()["resource"]

    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/update")
    page.get_by_label("flavor").select_option("m1.tiny")
    page.locator("#preview").click()
    expect(page.locator("#preview-updated")).to_contain_text("server (OS::Nova::Server)")
    expect(page.locator("#preview-replaced")).to_have_text("—")
    screenshot(page, "update-preview-resize")

    page.locator("#update").click()
    expect(page.locator(".msg-success")).to_have_text(f"Update of stack {name} started.")
    wait_for(session, url, "UPDATE_COMPLETE")
    after = session.get(f"{url}/resources/server").json()["resource"]
    assert after["physical_resource_id"] == before["physical_resource_id"]
    assert after["attributes"]["show"]["flavor"] == "m1.tiny", after["attributes"]
