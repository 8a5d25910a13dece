"""The launch form in a real browser: typed fields, step 1 validated like the API, options."""
import re

import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, browser_context, make_user, screenshot, \
    sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = """\
heat_template_version: 2016-10-14
parameters:
  flavor:
    type: string
    label: Flavor
    default: m1.small
    constraints:
      - allowed_values: [m1.tiny, m1.small, m1.large]
  count:
    type: number
    label: Count
    default: 2
    constraints:
      - range: {min: 1, max: 4}
  debug:
    type: boolean
    label: Debug
    default: false
  region:
    type: string
    label: Region
    default: east
    immutable: true
resources:
  box:
    type: OS::Heat::TestResource
    properties:
      value: {list_join: ['-', [{get_param: flavor}, {get_param: region}]]}
  echo:
    type: OS::Heat::Value
    properties:
      value: {get_attr: [box, output]}
"""

BAD_YAML = "heat_template_version: 2016-10-14\nresources:\n  a: {type: OS::Heat::None\n  b: 1\n"
UNKNOWN_TYPE = ("heat_template_version: 2016-10-14\nresources:\n"
                "  a: {type: OS::Nope::Thing}\n")


def step_one(page, name, template):
    page.goto("/stacks/launch")
    page.get_by_label("Stack name").fill(name)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(template)
    page.get_by_role("button", name="Next: parameters").click()


def test_launch_with_a_select_a_number_and_a_boolean(page, live_service, unique):
    user, name = f"lf-{unique}", f"lf-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)

    step_one(page, name, BAD_YAML)
    expect(page.locator("#template-problems li")).to_have_count(1)
    expect(page.locator("#template-problems")).to_contain_text(
        re.compile(r"line \d+, column \d+: "))
    expect(page.get_by_label("Template (HOT, YAML or JSON)")).to_have_value(BAD_YAML)
    assert_accessible(page, "launch step 1 refusing bad YAML")

    step_one(page, name, UNKNOWN_TYPE)
    expect(page.locator(".field-error")).to_contain_text("OS::Nope::Thing")
    expect(page.get_by_role("button", name="Launch")).to_have_count(0)

    step_one(page, name, TEMPLATE)
    flavor = page.get_by_label("Flavor")
    expect(flavor).to_have_js_property("tagName", "SELECT")
    expect(flavor).to_have_value("m1.small")
    count = page.get_by_label("Count")
    expect(count).to_have_attribute("type", "number")
    expect(count).to_have_attribute("min", "1")
    expect(count).to_have_attribute("max", "4")
    expect(page.get_by_label("Debug")).to_have_attribute("type", "checkbox")
    expect(page.locator("#id_p-region_helptext")).to_have_text(
        "Immutable: this value cannot be changed by an update.")
    flavor.select_option("m1.tiny")
    count.fill("3")
    page.get_by_label("Debug").check()
    page.get_by_label("Timeout (minutes)").fill("5")
    page.get_by_label("Roll back if the create fails").check()
    assert_accessible(page, "launch step 2")

    page.locator("#launch-preview").click()
    result = page.locator("#launch-preview-result")
    expect(result).to_contain_text("box")
    expect(result.locator("tr", has_text="box")).to_contain_text("echo")
    expect(page.get_by_label("Flavor")).to_have_value("m1.tiny")
    expect(page.get_by_label("Debug")).to_be_checked()
    screenshot(page, "launch-preview")
    assert_accessible(page, "launch preview")

    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".msg-success")).to_have_text(f"Launch of stack {name} started.")
    session = requests.Session()
    session.headers.update({"X-Auth-Token": info["token"]})
    stack = session.get(f"{info['endpoint']}/stacks/{name}").json()["stack"]
    assert stack["timeout_mins"] == 5, stack
    assert stack["disable_rollback"] is False, stack
    assert {k: stack["parameters"][k] for k in ("flavor", "count", "debug", "region")} == \
        {"flavor": "m1.tiny", "count": "3", "debug": "True", "region": "east"}, stack
    # The Template tab shows the template as it was typed (not re-dumped); the API's
    # template-show still answers the parsed template.
    page.goto(f"/stacks/{stack['id']}/template")
    assert page.locator("pre[aria-label=Template]").text_content().strip() == TEMPLATE.strip()
    parsed = session.get(f"{info['endpoint']}/stacks/{name}/{stack['id']}/template").json()
    assert parsed["resources"]["box"]["properties"]["value"] == {
        "list_join": ["-", [{"get_param": "flavor"}, {"get_param": "region"}]]}
    assert parsed["heat_template_version"] == "2016-10-14", parsed
    session.delete(f"{info['endpoint']}/stacks/{name}/{stack['id']}")


# 2 MB on one line: past the API's template budget (512 KiB), within the request's (2 MiB).
HUGE = "heat_template_version: 2016-10-14\ndescription: " + "x" * 2_000_000
HUGE_REFUSAL = (f"Template size ({len(HUGE) + 1} bytes) exceeds maximum allowed size "
                f"(524288 bytes).")  # + 1: the form sends its line end as CR LF


def test_a_template_over_the_budget_is_refused_before_it_is_sent(browser, page, live_service,
                                                                  unique):
    user = f"big-{unique}"
    make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)
    page.goto("/stacks/launch")
    page.get_by_label("Stack name").fill(f"big-{unique}")
    template = page.get_by_label("Template (HOT, YAML or JSON)")
    template.evaluate("(area, text) => { area.value = text; }", HUGE)
    posts = []
    page.on("request", lambda request: posts.append(request.url)
            if request.method == "POST" else None)
    page.get_by_role("button", name="Next: parameters").click()
    field = page.locator(".field", has=template)
    expect(field.locator(".field-error")).to_have_text(HUGE_REFUSAL)
    expect(template).to_be_focused()
    expect(template).to_have_attribute("aria-invalid", "true")
    assert posts == [], f"the template was sent: {posts}"
    assert_accessible(page, "launch step 1 refusing a template too large")

    # Without JavaScript the server refuses it, at the same field, in the same words.
    with browser_context(browser, live_service, java_script_enabled=False) as context:
        plain = context.new_page()
        sign_in(plain, user)
        step_one(plain, f"big-{unique}", HUGE)
        field = plain.locator(".field", has=plain.get_by_label("Template (HOT, YAML or JSON)"))
        expect(field.locator(".field-error")).to_have_text(HUGE_REFUSAL)
        expect(plain.get_by_role("button", name="Launch")).to_have_count(0)


def test_a_long_name_gets_one_error_and_a_yaml_error_keeps_its_caret_lines(
        page, live_service, unique):
    user = f"lfe-{unique}"
    make_user(live_service, user, f"proj-{unique}")
    sign_in(page, user)
    # The input's maxlength stops a browser at 255; a client that ignores it (a script,
    # another browser) gets the server's one answer.
    page.goto("/stacks/launch")
    page.evaluate("document.getElementById('id_stack_name').removeAttribute('maxlength')")
    page.get_by_label("Stack name").fill("a" * 300)
    page.get_by_label("Template (HOT, YAML or JSON)").fill(TEMPLATE)
    page.get_by_role("button", name="Next: parameters").click()
    name_field = page.locator(".field", has=page.get_by_label("Stack name"))
    expect(name_field.locator(".field-error")).to_have_count(1)
    expect(name_field.locator(".field-error")).to_have_text(
        "Ensure this value has at most 255 characters (it has 300).")
    step_one(page, "b" + "1" * 10 + " x", TEMPLATE)
    expect(name_field.locator(".field-error")).to_have_text(
        'Use letters, digits and "_-.", starting with a letter.')

    step_one(page, f"lfe-{unique}", BAD_YAML)
    error = page.locator(".field", has=page.get_by_label("Template (HOT, YAML or JSON)")) \
        .locator(".field-error")
    expect(error).to_have_count(1)
    lines = error.inner_text().splitlines()
    caret = [i for i, line in enumerate(lines) if line.strip() == "^"]
    assert caret and caret[0] > 0, lines  # the caret is a line of its own, under its line
    column = lines[caret[0]].index("^")
    assert len(lines[caret[0] - 1]) > column, lines
