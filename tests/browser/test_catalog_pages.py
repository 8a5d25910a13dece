"""Resource types and template versions on heatweb's own pages, as the API lists them."""
import pytest
import requests
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, make_user, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]


def test_resource_types_with_their_schema_and_template_versions_with_functions(
        page, live_service, unique):
    user = f"cat-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    api = requests.Session()
    api.headers["X-Auth-Token"] = info["token"]
    sign_in(page, user)

    page.get_by_role("link", name="Resource types").click()
    every = api.get(info["endpoint"] + "/resource_types").json()["resource_types"]
    expect(page.locator("#resource-types tbody tr")).to_have_count(len(every))
    assert_accessible(page, "resource types")
    page.get_by_label("Name").fill("Heat::Test")
    page.get_by_role("button", name="Filter").click()
    wanted = api.get(info["endpoint"] + "/resource_types",
                     params={"name": "Heat::Test"}).json()["resource_types"]
    expect(page.locator("#resource-types tbody tr")).to_have_count(len(wanted))
    page.get_by_role("link", name="OS::Heat::TestResource").click()
    schema = api.get(info["endpoint"] + "/resource_types/OS::Heat::TestResource").json()
    expect(page.locator("#type-properties tbody tr")).to_have_count(len(schema["properties"]))
    expect(page.locator("#type-attributes tbody tr")).to_have_count(len(schema["attributes"]))
    value = page.locator("#property-value")
    expect(value).to_contain_text("string")
    expect(value).to_contain_text("updated in place")
    expect(value).to_contain_text(schema["properties"]["value"]["description"])
    expect(page.locator("#attribute-output")).to_contain_text(
        schema["attributes"]["output"]["description"])
    assert_accessible(page, "a resource type")
    missing = page.goto("/resource-types/OS::Nope::Thing")
    assert missing.status == 404

    page.get_by_role("link", name="Template versions").click()
    versions = api.get(info["endpoint"] + "/template_versions").json()["template_versions"]
    expect(page.locator("#template-versions tbody tr")).to_have_count(len(versions))
    page.get_by_role("link", name="heat_template_version.2016-10-14").click()
    functions = api.get(info["endpoint"] + "/template_versions/"
                        "heat_template_version.2016-10-14/functions").json()
    names = [f["functions"] for f in functions["template_functions"]]
    expect(page.locator("#template-functions tbody th")).to_have_text(names)
    expect(page.locator("#condition-functions")).to_contain_text("equals")
    assert_accessible(page, "a template version")
