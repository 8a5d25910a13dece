"""Hidden parameters' values never leave the server once stored: not in a page, not in the API.

A stack gets hidden values through ``parameters``, the environment's
``parameters`` and ``parameter_defaults``; they flow into resource
properties, attributes and metadata. Every page of the stack (each tab, the
update form, each resource page) and every API answer that shows
parameters, environment, events or resource data is read as text and must
not contain any of them. The update form leaves a hidden field empty and,
left empty, keeps the stored value (checked through a condition output that
compares it, so the value itself is never shown).
"""
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, make_user, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CONVERGE_MS = 60_000
SECRETS = {"admin_pass": "s3cret-admin-7f1", "db_pass": "s3cret-db-2c9",
           "api_key": "s3cret-key-88a"}

TEMPLATE = """
heat_template_version: 2016-10-14
parameters:
  admin_pass: {type: string, hidden: true}
  db_pass: {type: string, hidden: true}
  api_key: {type: string, hidden: true}
  check_pass: {type: string, hidden: true}
  label: {type: string, default: plain-label}
conditions:
  kept: {equals: [{get_param: admin_pass}, {get_param: check_pass}]}
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {get_param: admin_pass}
  joined:
    type: OS::Heat::TestResource
    metadata:
      key: {get_param: api_key}
    properties:
      value: {list_join: ["-", ["user", {get_param: db_pass}, {get_param: label}]]}
  server:
    type: OS::Nova::Server
    properties: {image: cirros, flavor: m1.small, user_data_format: SOFTWARE_CONFIG}
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: password}]
      config: "echo configured"
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values: {password: {get_param: db_pass}}
outputs:
  admin_pass_kept:
    value: {if: [kept, "yes", "no"]}
"""
ENVIRONMENT = {"parameters": {"db_pass": SECRETS["db_pass"]},
               "parameter_defaults": {"api_key": SECRETS["api_key"]}}


def assert_no_secret(text, where):
    for name, value in SECRETS.items():
        assert value not in text, f"{where} shows the hidden parameter {name}'s value"


def wait_status(api, stack_url, status):
    for _ in range(300):
        stack = api.get(stack_url).json()["stack"]
        if stack["stack_status"] == status:
            return stack
        assert not stack["stack_status"].endswith("FAILED"), stack["stack_status_reason"]
        time.sleep(0.2)
    raise AssertionError(f"never reached {status}")


def output(api, stack_url, key):
    return api.get(f"{stack_url}/outputs/{key}").json()["output"]["output_value"]


def test_hidden_values_never_reach_a_page_or_an_api_answer(page, live_service, unique):
    user, name = f"hid-{unique}", f"hid-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    api, stack_id, stack_url = api_stack_create(
        info, name, TEMPLATE, parameters={"admin_pass": SECRETS["admin_pass"],
                                    "check_pass": SECRETS["admin_pass"]},
        environment=ENVIRONMENT)
    wait_status(api, stack_url, "CREATE_COMPLETE")
    assert output(api, stack_url, "admin_pass_kept") == "yes"

    for path in ("", "/template", "/environment", "/resources?with_detail=true", "/resources/value",
                 "/resources/joined", "/events", "/outputs"):
        answer = api.get(stack_url + path)
        assert answer.status_code == 200, (path, answer.text)
        assert_no_secret(answer.text, f"GET {path or '/'}")
    shown = api.get(stack_url).json()["stack"]["parameters"]
    assert {shown[n] for n in SECRETS} == {"******"}
    for event in api.get(stack_url + "/events").json()["events"]:
        detail = api.get(f"{stack_url}/resources/{event['resource_name']}/events/{event['id']}")
        assert_no_secret(detail.text, "an event's detail")

    sign_in(page, user)
    base = f"/stacks/{stack_id}"
    for path in (f"{base}/", f"{base}/resources", f"{base}/events", f"{base}/template",
                 f"{base}/topology", f"{base}/locks", f"{base}/update",
                 f"{base}/resources/value", f"{base}/resources/joined"):
        page.goto(path)
        assert_no_secret(page.content(), f"the page {path}")

    page.goto("/software/")
    assert_no_secret(page.content(), "the software configs page")
    deployment = api.get(f"{stack_url}/resources/deployment").json()["resource"]
    configs = api.get(f"{info['endpoint']}/software_deployments/"
                      f"{deployment['physical_resource_id']}").json()
    derived = configs["software_deployment"]["config_id"]
    for path in (f"/software/configs/{derived}/", "/software/deployments/"):
        page.goto(path)
        expect(page.locator("main")).to_be_visible()
        assert_no_secret(page.content(), f"the page {path}")

    # The update form: hidden fields are empty; left empty, the stored values stay.
    page.goto(f"{base}/update")
    field = page.locator("input[name=p-admin_pass]")
    expect(field).to_have_attribute("type", "password")
    expect(field).to_have_value("")
    page.locator("input[name=p-label]").fill("changed-label")
    page.get_by_role("button", name="Update", exact=True).click()
    wait_status(api, stack_url, "UPDATE_COMPLETE")
    assert output(api, stack_url, "admin_pass_kept") == "yes"
    joined = api.get(f"{stack_url}/resources/joined").json()["resource"]["attributes"]
    assert joined["output"] == "user-******-changed-label"
    for path in (f"{base}/", f"{base}/update", f"{base}/resources/joined"):
        page.goto(path)
        assert_no_secret(page.content(), f"the page {path} after the update")

    # A value typed into the form replaces the stored one.
    page.goto(f"{base}/update")
    page.locator("input[name=p-admin_pass]").fill("another-value")
    page.get_by_role("button", name="Update", exact=True).click()
    wait_status(api, stack_url, "UPDATE_COMPLETE")
    assert output(api, stack_url, "admin_pass_kept") == "no"
