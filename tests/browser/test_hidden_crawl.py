"""No page heatweb serves shows a hidden parameter's value: a crawl of every page (issue 40).

A stack gets hidden values, each holding one marker unique to the run,
through ``parameters``, the environment's ``parameters`` and
``parameter_defaults``, and passes one to a nested stack's hidden
parameter; they flow into resource properties, attributes, metadata and a
software deployment's inputs (its derived config). The stack is then updated
with a new hidden value, so older rows hold the first one.

Signed in as a cloud admin who is also a member of the stack's project, the
browser follows every link from the stack list and from the admin index:
every page it reaches must answer below 500 and never hold the marker.
Admin pages of single rows are followed for the rows of this stack's tree
(the others belong to other tests); the resource type and template version
pages, which show no stack's data, are left to ``test_catalog_pages.py``.
At the end, the service's logs are grepped for the marker too.
"""
import json
import re
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.browser.conftest import api_stack_create, make_user, sign_in
from tests.browser.test_admin_traversal import make_admin
from tests.browser.test_hidden_parameters import wait_status

pytestmark = [pytest.mark.browser, pytest.mark.live]

MARKER = f"hidden-marker-{uuid.uuid4().hex[:12]}"

CHILD = """
heat_template_version: 2016-10-14
parameters:
  secret: {type: string, hidden: true}
resources:
  inner:
    type: OS::Heat::Value
    properties:
      value: {get_param: secret}
"""

TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "parameters": {
        "admin_pass": {"type": "string", "hidden": True},
        "db_pass": {"type": "string", "hidden": True},
        "api_key": {"type": "string", "hidden": True},
        "label": {"type": "string", "default": "plain-label"}},
    "resources": {
        "value": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "admin_pass"}}},
        "joined": {"type": "OS::Heat::TestResource",
                   "metadata": {"key": {"get_param": "api_key"}},
                   "properties": {"value": {"list_join": [
                       "-", ["user", {"get_param": "db_pass"}, {"get_param": "label"}]]}}},
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.small",
                                  "user_data_format": "SOFTWARE_CONFIG"}},
        "config": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"group": "script", "inputs": [{"name": "password"}],
                                  "config": "echo configured"}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment",
                       "properties": {"config": {"get_resource": "config"},
                                      "server": {"get_resource": "server"},
                                      "signal_transport": "NO_SIGNAL",
                                      "input_values": {"password": {"get_param": "db_pass"}}}},
        "child": {"type": "OS::Heat::Stack",
                  "properties": {"template": CHILD,
                                 "parameters": {"secret": {"get_param": "admin_pass"}}}},
    },
}

# Not followed: leaving the session, the API (the token-less browser gets 401s; the
# API's answers are read in test_hidden_parameters.py), static files, webhooks.
SKIPPED = re.compile(r"^/(logout/|admin/logout/|admin/password_change/|api/|v1/|static/|"
                     r"webhooks/|sim/|healthz)")
CATALOG_ENTRY = re.compile(r"^/(resource-types|template-versions)/.+")
ADMIN_ROW = re.compile(r"^/admin/(\w+)/(\w+)/([^/]+)/")
QUERY_VARIANTS = 5  # pages of one path with different queries (filters, pages)
MAX_PAGES = 600
# Each link's address, absolute: HTML and SVG (topology) links, and live fragments' sources.
LINKS_JS = """els => els.flatMap(e => [e.getAttribute('href'), e.getAttribute('xlink:href'),
                                       e.getAttribute('data-live-src')])
                       .filter(Boolean).map(raw => new URL(raw, location.href).href)"""


def our_admin_rows(live_service, stack_id):
    """``{"app/model/pk"}`` of every admin row of the stack's tree (ids read in the database)."""
    done = live_service.manage("shell", "-c", (
        "import json\n"
        "from stacks.models import Event, LockRecord, Resource, Stack\n"
        "from softwareconfig.models import SoftwareConfig, SoftwareDeployment\n"
        "from convergence.models import Breakpoint, OutboxMessage, SyncPoint, Traversal\n"
        f"tree = [Stack.objects.get(pk={stack_id!r})]\n"
        "for stack in tree:\n"
        "    tree += list(Stack.objects.filter(parent=stack))\n"
        "rows = {f'heatweb/project/{tree[0].project_id}'}\n"
        "for stack in tree:\n"
        "    rows.add(f'stacks/stack/{stack.pk}')\n"
        "    rows |= {f'stacks/rawtemplate/{pk}' for pk in (stack.raw_template_id,\n"
        "             stack.prev_raw_template_id) if pk}\n"
        "    for model, name in ((Resource, 'stacks/resource'), (Event, 'stacks/event'),\n"
        "                        (LockRecord, 'stacks/lockrecord'),\n"
        "                        (Traversal, 'convergence/traversal'),\n"
        "                        (SyncPoint, 'convergence/syncpoint'),\n"
        "                        (OutboxMessage, 'convergence/outboxmessage'),\n"
        "                        (Breakpoint, 'convergence/breakpoint')):\n"
        "        rows |= {f'{name}/{pk}' for pk in\n"
        "                 model.objects.filter(stack=stack).values_list('pk', flat=True)}\n"
        "ids = [r.physical_resource_id for r in Resource.objects.filter(stack__in=tree)]\n"
        "for d in SoftwareDeployment.objects.filter(pk__in=[i for i in ids if len(i) == 36]):\n"
        "    rows |= {f'softwareconfig/softwaredeployment/{d.pk}',\n"
        "             f'softwareconfig/softwareconfig/{d.config_id}'}\n"
        "for c in SoftwareConfig.objects.filter(pk__in=[i for i in ids if len(i) == 36]):\n"
        "    rows.add(f'softwareconfig/softwareconfig/{c.pk}')\n"
        "print(json.dumps(sorted(rows)))\n"))
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def crawl(page, starts, *, ours):
    """Visit every page reachable from ``starts``; ``{path: status}`` of the visited."""
    origin = urlsplit(page.url)._replace(path="", query="", fragment="")
    queue, seen, variants, visited = list(starts), set(), {}, {}
    while queue:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        answer = page.goto(url)
        assert answer is not None, url
        status = answer.status
        visited[url] = status
        assert status < 500, f"{url} answered {status}"
        assert MARKER not in page.content(), f"{url} shows a hidden value"
        assert len(visited) <= MAX_PAGES, f"more than {MAX_PAGES} pages: {sorted(visited)}"
        links = page.eval_on_selector_all("a[href], a[*|href], [data-live-src]", LINKS_JS)
        for link in links:
            parts = urlsplit(link)
            if (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
                continue
            path = parts.path
            if SKIPPED.match(path) or CATALOG_ENTRY.match(path):
                continue
            if path.startswith("/admin/"):
                row = ADMIN_ROW.match(path)
                if row and row.group(3) != "add" and "/".join(row.groups()) not in ours:
                    continue
                query = ""  # the admin's sort and filter links: the same rows again
            else:
                query = parts.query
                if query:
                    variants[path] = variants.get(path, 0) + 1
                    if variants[path] > QUERY_VARIANTS:
                        continue
            queue.append(urlunsplit(("", "", path, query, "")))
    return visited


def test_no_page_reached_from_the_pages_or_the_admin_shows_a_hidden_value(
        page, live_service, unique):
    user, name = f"crawl-{unique}", f"crawl-{unique}"
    info = make_user(live_service, user, f"proj-{unique}")
    make_admin(live_service, user)
    api, stack_id, stack_url = api_stack_create(
        info, name, TEMPLATE, parameters={"admin_pass": f"{MARKER}-admin"},
        environment={"parameters": {"db_pass": f"{MARKER}-db"},
                     "parameter_defaults": {"api_key": f"{MARKER}-key"}})
    wait_status(api, stack_url, "CREATE_COMPLETE")
    answer = api.patch(stack_url, json={"parameters": {"admin_pass": f"{MARKER}-admin2"}})
    assert answer.status_code == 202, answer.text
    wait_status(api, stack_url, "UPDATE_COMPLETE")
    ours = our_admin_rows(live_service, stack_id)
    stored = live_service.manage("shell", "-c", (
        "from stacks.models import Resource\n"
        f"print(Resource.objects.filter(stack__parent_id={stack_id!r}, name='inner')"
        ".values_list('properties_data', flat=True).get()['value'])\n"))
    assert stored.stdout.strip().endswith(f"{MARKER}-admin2"), stored  # the values are there
    assert sum(row.startswith("stacks/stack/") for row in ours) == 2  # the nested stack too

    sign_in(page, user)
    visited = crawl(page, ["/", "/admin/"], ours=ours)
    print(f"crawled {len(visited)} pages")
    paths = {urlsplit(url).path for url in visited}
    child = next(row.rsplit("/", 1)[1] for row in ours if row.startswith("stacks/stack/")
                 and row != f"stacks/stack/{stack_id}")
    for expected in (f"/stacks/{stack_id}/", f"/stacks/{stack_id}/template",
                     f"/stacks/{stack_id}/events", f"/stacks/{stack_id}/update",
                     f"/stacks/{stack_id}/lock-preview", f"/stacks/{stack_id}/resources/joined",
                     f"/stacks/{child}/", f"/stacks/{child}/resources/inner",
                     "/software/", "/software/deployments/", f"/admin/stacks/stack/{stack_id}/change/",
                     f"/admin/stacks/stack/{child}/change/"):
        assert expected in paths, f"the crawl never reached {expected}"
    assert any(p.startswith("/software/configs/") for p in paths)
    assert any(p.startswith("/admin/stacks/rawtemplate/") for p in paths)
    assert any(p.startswith("/admin/softwareconfig/softwareconfig/") and p.endswith("/change/")
               for p in paths)

    for name in live_service.processes:
        log = live_service.log_path(name)
        assert MARKER not in log.read_text(errors="replace"), f"the {name} log shows it"
