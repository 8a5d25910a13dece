"""The software pages in a real browser: a component made by a stack, and its deployment.

The stack is made through the API with python-heatclient; its deployment
uses NO_SIGNAL, so it completes without an agent, and its outputs are then
reported with a PUT, as an agent that does not signal would.
"""
import re
import time

import pytest
from heatclient import client
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible, make_user, screenshot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.live]

CREATE_SCRIPT = '#!/bin/sh\necho "installing $greeting"\nprintf "up" > "$heat_outputs_path.state"\n'
PAUSE_SCRIPT = '#!/bin/bash\nset -e\nif [ "$deploy_action" = SUSPEND ]; then echo paused; fi\n'

TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "description": "A server with a component deployed on it, for the software pages.",
    "parameters": {"greeting": {"type": "string", "default": "hello"}},
    "resources": {
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny",
                                  "user_data_format": "SOFTWARE_CONFIG"}},
        "app": {"type": "OS::Heat::SoftwareComponent", "properties": {
            "configs": [
                {"actions": ["CREATE"], "tool": "script", "config": CREATE_SCRIPT},
                {"actions": ["SUSPEND", "RESUME"], "tool": "script", "config": PAUSE_SCRIPT},
            ],
            "inputs": [{"name": "greeting", "type": "String", "default": "hello",
                        "description": "What the script says."}],
            "outputs": [{"name": "state", "description": "Where the app is."}],
            "options": {"timeout": 30}}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "app"}, "server": {"get_resource": "server"},
            "signal_transport": "NO_SIGNAL",
            "input_values": {"greeting": {"get_param": "greeting"}}}},
    },
}

COMMENT_GREY = "rgb(139, 148, 158)"  # github-dark's comment colour: static/pygments.css is in use


def wait_complete(heat, stack_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = heat.stacks.get(stack_id)
        if stack.stack_status == "CREATE_COMPLETE":
            return
        if stack.stack_status == "CREATE_FAILED":
            raise AssertionError(stack.stack_status_reason)
        time.sleep(0.2)
    raise AssertionError(f"the stack is still {stack.stack_status}")


def fits(page, width):
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll}px wide on a {width}px screen"


def test_component_and_its_deployment(page, live_service, unique):
    user, name = f"sw-{unique}", f"soft-{unique}"
    info = make_user(live_service, user, f"swp-{unique}")
    heat = client.Client("1", endpoint=info["endpoint"], token=info["token"])
    stack_id = heat.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_complete(heat, stack_id)
    server_id = heat.resources.get(stack_id, "server").physical_resource_id
    deployment_id = heat.resources.get(stack_id, "deployment").physical_resource_id
    heat.software_deployments.update(
        deployment_id, status="COMPLETE", status_reason="Outputs received",
        output_values={"deploy_stdout": "installing hello\n", "deploy_stderr": "",
                       "deploy_status_code": 0, "state": "up"})

    sign_in(page, user)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Software").click()
    expect(page.get_by_role("heading", name=re.compile("^Software"))).to_be_visible()
    row = page.locator("#software-configs tr", has_text=f"{name}-app")
    expect(row).to_contain_text("Component")
    expect(row.locator("td.num")).to_have_text("1")
    expect(page.locator("#software-configs tr", has_text=f"{name}-deployment")).to_have_count(0)
    # The derived config is listed on its own, with what it was derived from and who made it.
    derived = page.locator("#derived-configs tbody tr")
    expect(derived).to_have_count(1)
    expect(derived.get_by_role("link", name=f"{name}-deployment")).to_be_visible()
    expect(derived.get_by_role("link", name=f"{name}-app")).to_have_attribute(
        "href", re.compile(r"/software/configs/[0-9a-f-]{36}/$"))
    expect(derived.get_by_role("link", name=name, exact=True)).to_have_attribute(
        "href", f"/stacks/{stack_id}/")
    expect(derived.get_by_role("link", name="deployment", exact=True)).to_have_attribute(
        "href", f"/stacks/{stack_id}/resources/deployment")
    expect(derived.locator(".status")).to_have_text("CREATE_COMPLETE")
    expect(derived.get_by_role("link", name=server_id)).to_have_attribute(
        "href", f"/software/deployments/?server={server_id}")
    screenshot(page, "software-list")
    row.get_by_role("link", name=f"{name}-app").click()

    expect(page.get_by_role("heading", name=re.compile(f"^{name}-app"))).to_be_visible()
    entries = page.locator("section.config-entry")
    expect(entries).to_have_count(2)
    for entry, actions, first_line in ((entries.nth(0), ["CREATE"], "#!/bin/sh"),
                                       (entries.nth(1), ["SUSPEND", "RESUME"], "#!/bin/bash")):
        expect(entry.locator(".action-tag")).to_have_text(actions)
        expect(entry.locator("code.tool")).to_have_text("script")
        code = entry.get_by_label(f"Config for {', '.join(actions)}")
        expect(code).to_contain_text(first_line)
        expect(code.locator("span.ch")).to_have_text(first_line)  # the shebang, as Bash
        expect(code.locator("span.nb").first).to_be_visible()     # echo / set: builtins
        expect(code.locator("span.ch")).to_have_css("color", COMMENT_GREY)
    expect(entries.nth(0)).to_contain_text('echo "installing $greeting"')
    expect(entries.nth(1)).to_contain_text("Bash")
    inputs = page.get_by_role("table", name="Inputs")
    expect(inputs.locator("tbody tr")).to_have_text(re.compile(r"greeting\s*String\s*hello\s*"
                                                               r"What the script says\."))
    expect(page.get_by_role("table", name="Outputs")).to_contain_text("Where the app is.")
    expect(page.get_by_role("table", name="Options")).to_contain_text("30")
    expect(page.get_by_role("table", name="Deployments")).to_contain_text("CREATE_COMPLETE")
    screenshot(page, "software-component")

    page.get_by_role("link", name="Software", exact=True).first.click()
    page.get_by_role("link", name="Deployments").click()
    server = page.locator(f"section.server[data-server='{server_id}']")
    expect(server.get_by_role("heading", level=2)).to_contain_text("server")
    expect(server.get_by_role("link", name=name, exact=True)).to_be_visible()
    deployment = server.locator(f"#deployment-{deployment_id}")
    expect(deployment.get_by_role("link", name=f"{name}-app")).to_be_visible()
    status = deployment.locator(".status")
    expect(status).to_have_text("CREATE_COMPLETE")
    expect(status).to_have_class(re.compile("st-complete"))
    expect(deployment).to_contain_text("Outputs received")
    expect(deployment.get_by_label("deploy_stdout standard output")).to_have_text(
        "installing hello\n")
    expect(deployment.get_by_label("deploy_status_code exit status")).to_have_text("0")
    expect(deployment.locator(".stream-label", has_text="deploy_stderr")).to_contain_text("empty")
    expect(deployment.get_by_role("table")).to_contain_text("state")
    screenshot(page, "software-deployments")

    page.get_by_label("Server", exact=True).select_option(server_id)
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(f"server={server_id}$"))
    expect(page.locator("section.server")).to_have_count(1)
    page.goto("/software/deployments/?server=no-such-server")
    expect(page.locator(".empty-state")).to_have_text("No deployments on server no-such-server.")

    page.set_viewport_size({"width": 390, "height": 800})
    page.goto("/software/deployments/")
    fits(page, 390)
    page.get_by_role("link", name=f"{name}-app").click()
    expect(entries).to_have_count(2)
    fits(page, 390)
    screenshot(page, "software-component-phone")
    component_url = page.url

    stranger = f"st-{unique}"
    make_user(live_service, stranger, f"stp-{unique}")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, stranger)
    page.goto(component_url)
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.locator(".msg-error")).to_contain_text("could not be found")
    assert_accessible(page, "not found page")
    page.goto("/software/configs/not-a-uuid/")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()


WAITING = {
    "heat_template_version": "2016-10-14",
    "resources": {
        "server": TEMPLATE["resources"]["server"],
        "app": TEMPLATE["resources"]["app"],
        # CFN_SIGNAL (the default): the derived config carries a signed URL, and the
        # deployment waits for the agent's signal (no agent runs here).
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "app"}, "server": {"get_resource": "server"},
            "input_values": {"greeting": "hi"}}},
    },
}
MASKED = "•••• (hidden: only the stack's owner and admins see signed URLs)"


def wait_deployment_waits(heat, stack_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        resource = heat.resources.get(stack_id, "deployment")
        if resource.resource_status == "CREATE_IN_PROGRESS" and resource.physical_resource_id:
            return resource.physical_resource_id
        time.sleep(0.2)
    raise AssertionError(f"the deployment is {resource.resource_status}, not waiting")


def test_a_waiting_deployment_and_who_sees_its_signed_url(page, live_service, unique):
    owner, reader, name = f"swo-{unique}", f"swr-{unique}", f"wait-{unique}"
    project = f"swq-{unique}"
    info = make_user(live_service, owner, project)
    make_user(live_service, reader, project, role="reader")
    heat = client.Client("1", endpoint=info["endpoint"], token=info["token"])
    stack_id = heat.stacks.create(stack_name=name, template=WAITING)["stack"]["id"]
    deployment_id = wait_deployment_waits(heat, stack_id)

    sign_in(page, owner)
    page.goto("/software/")
    row = page.locator("#software-configs tr", has_text=f"{name}-app")
    expect(row.locator("td.num")).to_have_text("1")  # the waiting deployment counts
    expect(page.locator("#derived-configs tbody tr .status")).to_have_text("CREATE_IN_PROGRESS")
    assert_accessible(page, "software list")
    row.get_by_role("link", name=f"{name}-app").click()
    deployments = page.get_by_role("table", name="Deployments")
    expect(deployments).to_contain_text("CREATE_IN_PROGRESS")
    expect(deployments).to_contain_text("Waiting for the agent's signal since")
    assert_accessible(page, "component page, its deployment waiting")

    page.goto("/software/deployments/")
    card = page.locator(f"#deployment-{deployment_id}")
    expect(card.get_by_role("heading", level=3)).to_contain_text(f"{name}-app")  # the component
    expect(card).to_contain_text("CREATE_IN_PROGRESS")
    assert_accessible(page, "deployments page, one waiting")
    card.get_by_role("link", name=f"{name}-deployment", exact=True).click()  # its derived config
    signal = page.get_by_role("table", name="Inputs").locator("tr", has_text="deploy_signal_id")
    expect(signal).to_contain_text(re.compile(r"/webhooks/signal/[0-9a-f-]+/[0-9a-f]{40}"))
    expect(page.locator("#masked-deploy_signal_id")).to_have_count(0)
    assert_accessible(page, "derived config, as the stack's owner")
    derived_url = page.url

    page.get_by_role("button", name="Sign out").click()
    sign_in(page, reader)
    page.goto(derived_url)
    expect(page.locator("#masked-deploy_signal_id")).to_have_text(MASKED)
    expect(page.locator("main")).not_to_contain_text("/webhooks/signal/")
    expect(signal).to_contain_text(MASKED)
    screenshot(page, "derived-config-reader")
    assert_accessible(page, "derived config, as a reader")
    heat.stacks.delete(stack_id)
