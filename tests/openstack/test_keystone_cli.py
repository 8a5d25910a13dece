"""OpenStack's own CLI (python-openstackclient with heatclient's plugin and
heatweb's lock plugin), with plain ``OS_*`` credentials: heatweb is found in
Keystone's catalog."""
import json
import uuid

import pytest

from tests.openstack.keystone_support import Cloud, keystone_service, run_cli

pytestmark = [pytest.mark.openstack]

TEMPLATE = """
heat_template_version: 2016-10-14
parameters:
  length: {type: number, default: 8}
resources:
  word:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
outputs:
  word: {value: {get_attr: [word, value]}}
"""


@pytest.fixture(scope="module")
def cloud():
    return Cloud()


@pytest.fixture(scope="module")
def service(request, tmp_path_factory):
    return keystone_service(request.config, tmp_path_factory)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("templates") / "word.yaml"
    path.write_text(TEMPLATE)
    return str(path)


def openstack(cloud, account, *args):
    """``openstack ARGS -f json`` as the account; the parsed output."""
    done = run_cli(["openstack", *args, "-f", "json"], cloud.os_env(account))
    assert done.returncode == 0, f"openstack {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    # With --wait, heatclient prints the stack's events before the JSON.
    lines = done.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(("{", "["))), None)
    return json.loads("\n".join(lines[start:])) if start is not None else None


def openstack_fails(cloud, account, *args):
    done = run_cli(["openstack", *args], cloud.os_env(account))
    assert done.returncode != 0, done.stdout
    return done.stderr


def test_the_catalog_names_heatweb_as_the_orchestration_service(service, cloud):
    catalog = openstack(cloud, "heatweb-demo-member", "catalog", "show", "orchestration")
    project_id = openstack(cloud, "heatweb-demo-member", "token", "issue")["project_id"]
    urls = {e["interface"]: e["url"] for e in catalog["endpoints"]}
    assert urls["public"] == f"{service.url}/v1/{project_id}"
    assert set(urls) == {"public", "internal", "admin"}


def test_openstack_stack_create_list_show_update_delete(service, cloud, template):
    name = f"osc{uuid.uuid4().hex[:8]}"
    account = "heatweb-demo-member"
    created = openstack(cloud, account, "stack", "create", "-t", template, "--wait", name)
    assert (created["stack_name"], created["stack_status"]) == (name, "CREATE_COMPLETE")
    listed = openstack(cloud, account, "stack", "list")
    assert [s["Stack Status"] for s in listed if s["Stack Name"] == name] == ["CREATE_COMPLETE"]
    shown = openstack(cloud, account, "stack", "show", name)
    assert shown["id"] == created["id"]
    assert len(shown["outputs"][0]["output_value"]) == 8
    resources = openstack(cloud, account, "stack", "resource", "list", name)
    assert [(r["resource_name"], r["resource_type"], r["resource_status"])
            for r in resources] == [("word", "OS::Heat::RandomString", "CREATE_COMPLETE")]
    updated = openstack(cloud, account, "stack", "update", "-t", template,
                        "--parameter", "length=20", "--wait", name)
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    shown = openstack(cloud, account, "stack", "show", name)
    assert len(shown["outputs"][0]["output_value"]) == 20
    events = openstack(cloud, account, "stack", "event", "list", name)
    statuses = [(e["resource_name"], e["resource_status"]) for e in events]
    assert (name, "CREATE_COMPLETE") in statuses and (name, "UPDATE_COMPLETE") in statuses
    # Another project's account does not see it.
    alt = openstack(cloud, "heatweb-alt-member", "stack", "list")
    assert name not in [s["Stack Name"] for s in alt]
    done = run_cli(["openstack", "stack", "delete", "--yes", "--wait", name],
                   cloud.os_env(account))
    assert done.returncode == 0, done.stderr
    assert name not in [s["Stack Name"] for s in openstack(cloud, account, "stack", "list")]


def test_openstack_stack_lock_and_unlock(service, cloud, template):
    name = f"osl{uuid.uuid4().hex[:8]}"
    account = "heatweb-demo-member"
    openstack(cloud, account, "stack", "create", "-t", template, "--wait", name)
    locked = openstack(cloud, account, "stack", "lock", "--level", "stacks",
                       "--reason", "DB maintenance", "--wait", name)
    assert [s["Stack Status"] for s in locked] == ["LOCK_COMPLETE"]
    shown = openstack(cloud, account, "stack", "show", name)
    assert (shown["stack_status"], shown["lock_level"], shown["lock_reason"],
            shown["locked_by"]) == ("LOCK_COMPLETE", "stacks", "DB maintenance", "demo-member")
    refused = openstack_fails(cloud, account, "stack", "update", "-t", template,
                              "--parameter", "length=9", name)
    assert "locked" in refused.lower(), refused
    reader_refused = openstack_fails(cloud, "heatweb-demo-reader", "stack", "unlock", name)
    assert "Forbidden" in reader_refused and "reader" in reader_refused, reader_refused
    unlocked = openstack(cloud, account, "stack", "unlock", "--wait", name)
    assert [s["Stack Status"] for s in unlocked] == ["UNLOCK_COMPLETE"]
    shown = openstack(cloud, account, "stack", "show", name)
    assert (shown["stack_status"], shown["lock_level"]) == ("UNLOCK_COMPLETE", None)
    missing = openstack_fails(cloud, account, "stack", "lock", f"no-such-{name}")
    assert f"Stack not found: no-such-{name}" in missing
    done = run_cli(["openstack", "stack", "delete", "--yes", "--wait", name],
                   cloud.os_env(account))
    assert done.returncode == 0, done.stderr
