"""The Django admin as a convergence inspector, in a real browser against the live service.

A stack whose deployment waits for its agent's signal: the traversal's page
names each node by resource and action, shows the node after the
deployment waiting with the deployment as its missing predecessor, and the
waiting filter keeps only such nodes. Nothing there is editable.
"""
import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, assert_accessible, browser_context, \
    make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "resources": {
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny",
                                  "user_data_format": "SOFTWARE_CONFIG"}},
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "config": "#!/bin/sh\necho hi\n"}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": {"get_resource": "server"}}},
        "after": {"type": "OS::Heat::Value", "properties": {
            "value": {"get_attr": ["deployment", "deploy_stdout"]}}},
    },
}


def make_admin(live_service, username):
    done = live_service.manage("shell", "-c", (
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.filter(username={username!r})"
        ".update(is_staff=True, is_superuser=True)\n"))
    assert done.returncode == 0, done.stderr


def test_traversal_page_shows_the_node_waiting_for_a_deployment(browser, live_service, unique):
    user, name = f"adm-{unique}", f"wait-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    make_admin(live_service, user)
    session, _, stack_url = api_stack_create(info, name, TEMPLATE)
    try:
        with browser_context(browser, live_service,
                             viewport={"width": 1280, "height": 800}) as context:
            page = context.new_page()
            sign_in(page, user)
            # The deployment waits for its agent (no agent runs here).
            for _ in range(300):
                state = session.get(f"{stack_url}/resources/deployment").json()["resource"][
                    "resource_status"]
                if state != "INIT_COMPLETE":
                    break
                time.sleep(0.2)
            assert state == "CREATE_IN_PROGRESS", state

            page.goto("/admin/convergence/traversal/")
            row = page.locator("#result_list tbody tr", has_text=name)
            expect(row).to_have_count(1)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 1280, f"the traversal list is {width}px wide at 1280px"
            assert_accessible(page, "admin traversal list")
            row.locator("th a, td a").first.click()

            nodes = page.locator("#traversal-nodes")
            after = nodes.locator("tr[data-node=after]")
            expect(after).to_have_attribute("data-action", "create")
            expect(after).to_contain_text("waiting")
            expect(after.locator("td.missing")).to_have_text("deployment (create)")
            deployment = nodes.locator("tr[data-node=deployment]")
            expect(deployment).to_contain_text("ready")
            expect(deployment).to_contain_text("CREATE_IN_PROGRESS")
            expect(page.locator("#node-total-note")).to_have_text(
                "The list has the graph's 4 resource nodes (the \"Node count\" above) and the "
                "stack's own sync point.")
            expect(page.locator(".traversal-filter")).to_contain_text("all 5")
            state = deployment.locator(".node-state")
            assert state.evaluate("el => el.getClientRects().length") == 1  # not broken
            expect(deployment).to_contain_text(re.compile(r"server \(create\).*config \(create\)|"
                                                          r"config \(create\).*server \(create\)"))
            expect(nodes.locator(f"tr[data-node='stack {name}']")).to_contain_text("waiting")
            expect(page.locator(".traversal-graph svg g.waiting")).not_to_have_count(0)
            fields = page.locator("#traversal_form").locator("input, select, textarea, button")
            expect(fields).to_have_count(1)  # the CSRF token only
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 1280, f"the traversal page is {width}px wide at 1280px"
            assert_accessible(page, "admin traversal page")

            page.locator("#waiting-filter").click()
            expect(nodes.locator("tr[data-node=after]")).to_have_count(1)
            expect(nodes.locator("tr[data-node=deployment]")).to_have_count(0)
            screenshot(page, "admin-traversal")  # scrolled to the waiting nodes (#nodes)

            # The software pages say what the deployment waits for (not "—").
            page.goto("/")
            page.get_by_label("Project").select_option(label=f"proj-{unique}")
            # The switch posts and comes back; going on before it lands aborts the next page.
            expect(page.get_by_role("heading", name=re.compile(f"in proj-{unique}"))).to_be_visible()
            page.goto("/software/deployments/")
            expect(page.locator("article.deployment")).to_contain_text(re.compile(
                r"Waiting for the agent's signal since \d\d:\d\d(:\d\d)?.*, until \d\d:\d\d"))

            page.goto(f"/admin/convergence/syncpoint/?sync=waiting&traversal=current&q={name}")
            expect(page.locator("#result_list")).to_contain_text("after (create)")
            expect(page.locator("#result_list")).not_to_contain_text("server (create)")
            assert_accessible(page, "admin waiting sync points")
            page.locator("#result_list tbody tr", has_text="after (create)").locator(
                "th a, td a").first.click()  # one sync point's own page
            expect(page.locator("#content")).to_contain_text("after")
            assert_accessible(page, "admin sync point page")

            # A finished traversal's page says its sync points went when it finished.
            _, _, done_url = api_stack_create(info, f"done-{unique}", {
                "heat_template_version": "2016-10-14",
                "resources": {"none": {"type": "OS::Heat::None"}}})
            for _ in range(300):
                if session.get(done_url).json()["stack"]["stack_status"] == "CREATE_COMPLETE":
                    break
                time.sleep(0.2)
            page.goto(f"/admin/convergence/traversal/?q=done-{unique}")
            page.locator("#result_list tbody tr").first.locator("th a, td a").first.click()
            expect(page.locator("#content")).to_contain_text(
                "No sync points: this traversal finished (COMPLETE) and its sync points were "
                "deleted when it did.")
            session.delete(done_url)

            page.goto("/admin/convergence/engine/")
            expect(page.locator("#result_list tbody tr")).not_to_have_count(0)
            assert_accessible(page, "admin engine list")
            page.locator("#result_list tbody tr").first.locator("th a, td a").first.click()
            assert_accessible(page, "admin engine page")
    finally:
        session.delete(stack_url)
