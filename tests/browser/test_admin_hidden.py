"""The Django admin never shows a hidden parameter's value, as Heat's API never does.

A stack with hidden values given as parameters, in the environment and as
parameter_defaults, flowing into resource properties, attributes, metadata and
a software deployment's inputs: every admin change page of its rows (the
stack, its raw template, resources, events, software configs and deployments)
and the lists are read as text and must hold none of the values.
"""
import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import api_stack_create, make_user, sign_in
from tests.browser.test_admin_traversal import make_admin
from tests.browser.test_hidden_parameters import ENVIRONMENT, SECRETS, TEMPLATE, \
    assert_no_secret, wait_status

pytestmark = [pytest.mark.browser, pytest.mark.live]


def admin_paths(live_service, stack_id):
    """The admin change pages of every row the stack has (ids read in the database)."""
    done = live_service.manage("shell", "-c", (
        "import json\n"
        "from stacks.models import Event, Resource, Stack\n"
        "from softwareconfig.models import SoftwareDeployment\n"
        f"stack = Stack.objects.get(pk={stack_id!r})\n"
        "paths = [f'stacks/stack/{stack.pk}', f'stacks/rawtemplate/{stack.raw_template_id}']\n"
        "if stack.prev_raw_template_id:\n"
        "    paths.append(f'stacks/rawtemplate/{stack.prev_raw_template_id}')\n"
        "resources = Resource.objects.filter(stack=stack)\n"
        "paths += [f'stacks/resource/{r.pk}' for r in resources]\n"
        "paths += [f'stacks/event/{e.pk}' for e in Event.objects.filter(stack=stack)]\n"
        "ids = [r.physical_resource_id for r in resources if r.name == 'deployment']\n"
        "for d in SoftwareDeployment.objects.filter(pk__in=ids):\n"
        "    paths += [f'softwareconfig/softwaredeployment/{d.pk}',\n"
        "              f'softwareconfig/softwareconfig/{d.config_id}']\n"
        "print(json.dumps(paths))\n"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_no_admin_page_shows_a_hidden_value(page, live_service, unique):
    user, name = f"adh-{unique}", f"adh-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    make_admin(live_service, user)
    api, stack_id, stack_url = api_stack_create(
        info, name, TEMPLATE, parameters={"admin_pass": SECRETS["admin_pass"],
                                          "check_pass": SECRETS["admin_pass"]},
        environment=ENVIRONMENT)
    wait_status(api, stack_url, "CREATE_COMPLETE")
    paths = admin_paths(live_service, stack_id)
    kinds = {p.rsplit("/", 1)[0] for p in paths}
    assert {"stacks/stack", "stacks/rawtemplate", "stacks/resource", "stacks/event",
            "softwareconfig/softwareconfig", "softwareconfig/softwaredeployment"} <= kinds

    sign_in(page, user)
    for path in paths:
        answer = page.goto(f"/admin/{path}/change/")
        assert answer.status == 200, path
        expect(page.locator("#content")).to_be_visible()
        assert_no_secret(page.content(), f"the admin page {path}")
    page.goto(f"/admin/stacks/stack/{stack_id}/change/")
    expect(page.locator(".field-parameters")).to_contain_text("******")
    for listing in ("stacks/stack", "stacks/resource", "stacks/event", "stacks/rawtemplate",
                    "softwareconfig/softwareconfig", "softwareconfig/softwaredeployment"):
        answer = page.goto(f"/admin/{listing}/")
        assert answer.status == 200, listing
        assert_no_secret(page.content(), f"the admin list {listing}")
