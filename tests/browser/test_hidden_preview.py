"""A hidden value typed before "Preview changes" is the one the update (or launch) uses.

The field comes back empty after the preview (a hidden value is never put in
a page, not even the one just typed); what was typed travels sealed and the
next step applies it, so the update does what the preview said. Checked on
the stored parameter and on the resource the value drives, not on the page.
"""
import json

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, make_user, sign_in
from tests.browser.test_hidden_parameters import wait_status

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = """\
heat_template_version: 2016-10-14
parameters:
  secret: {type: string, hidden: true, label: Secret}
  expected: {type: string, hidden: true, label: Expected}
  label: {type: string, default: plain, label: Label}
conditions:
  matches: {equals: [{get_param: secret}, {get_param: expected}]}
resources:
  guarded:
    type: OS::Heat::TestResource
    properties: {value: {if: [matches, secret-changed, secret-kept]}}
  labelled:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}}
"""
OLD, NEW = "old-marker-5d1e", "new-marker-9c7a"


def stored_parameters(live_service, stack_id):
    done = live_service.manage("shell", "-c", (
        "import json\n"
        "from stacks.definitions import definition_cache\n"
        "from stacks.models import Stack\n"
        f"params = definition_cache.get(Stack.objects.get(pk={stack_id!r})).params\n"
        "print(json.dumps({n: params[n] for n in params.schemas}))\n"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def output_of(api, stack_url, resource):
    return api.get(f"{stack_url}/resources/{resource}").json()["resource"]["attributes"]["output"]


def test_the_update_after_a_preview_uses_the_hidden_value_typed_before_it(
        page, live_service, unique):
    user, name = f"hpv-{unique}", f"hpv-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    api, stack_id, stack_url = api_stack_create(
        info, name, TEMPLATE, parameters={"secret": OLD, "expected": NEW})
    wait_status(api, stack_url, "CREATE_COMPLETE")
    assert output_of(api, stack_url, "guarded") == "secret-kept"

    sign_in(page, user)
    page.goto(f"/stacks/{stack_id}/update")
    page.get_by_label("Secret").fill(NEW)
    page.get_by_label("Label").fill("relabelled")
    page.locator("#preview").click()
    expect(page.locator("#preview-updated")).to_contain_text("guarded")
    expect(page.get_by_label("Secret")).to_have_value("")
    assert NEW not in page.content() and OLD not in page.content()

    page.locator("#update").click()
    expect(page.locator(".msg-success")).to_have_text(f"Update of stack {name} started.")
    wait_status(api, stack_url, "UPDATE_COMPLETE")
    stored = stored_parameters(live_service, stack_id)
    assert (stored["secret"], stored["label"]) == (NEW, "relabelled")
    assert output_of(api, stack_url, "guarded") == "secret-changed"
    assert output_of(api, stack_url, "labelled") == "relabelled"


def test_the_launch_after_a_preview_uses_the_hidden_values_typed_before_it(
        page, live_service, unique):
    user, name = f"hpl-{unique}", f"hpl-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)
    page.goto("/stacks/launch")
    page.get_by_label("Stack name").fill(name)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(TEMPLATE)
    page.get_by_role("button", name="Next: parameters").click()
    page.get_by_label("Secret").fill(NEW)
    page.get_by_label("Expected").fill(NEW)
    page.locator("#launch-preview").click()
    expect(page.locator("#launch-preview-result")).to_be_visible()
    expect(page.get_by_label("Secret")).to_have_value("")
    assert NEW not in page.content()

    page.locator("#launch").click()
    expect(page.locator(".msg-success")).to_have_text(f"Launch of stack {name} started.")

    api = requests.Session()
    api.headers["X-Auth-Token"] = info["token"]
    stack = api.get(f"{info['endpoint']}/stacks/{name}").json()["stack"]
    stack_url = f"{info['endpoint']}/stacks/{name}/{stack['id']}"
    wait_status(api, stack_url, "CREATE_COMPLETE")
    assert stored_parameters(live_service, stack["id"])["secret"] == NEW
    assert output_of(api, stack_url, "guarded") == "secret-changed"
