"""``openstack stack ...`` and ``openstack orchestration ...`` (python-heatclient's OSC
plugin, unchanged) against the live service: snapshots, abandon/adopt, export, services,
failures, signals, outputs, deployment outputs and cancel of a create."""
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.live.test_snapshots import TEMPLATE

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]
OPENSTACK = ROOT / ".venv" / "bin" / "openstack"
WAITING = {"heat_template_version": "2016-10-14", "resources": {
    "handle": {"type": "OS::Heat::WaitConditionHandle"},
    "wait": {"type": "OS::Heat::WaitCondition",
             "properties": {"handle": {"get_resource": "handle"}, "timeout": 600}}}}


@pytest.fixture(scope="module")
def member(live_service):
    return live_service.issue_token(f"osc-{uuid.uuid4().hex[:6]}", f"osc-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def admin(live_service, member):
    return live_service.issue_token(f"osca-{uuid.uuid4().hex[:6]}", member["project_name"],
                                    role="admin")


@pytest.fixture(scope="module", autouse=True)
def osc_home(tmp_path_factory):
    """A HOME of its own: the client caches its entry points there (not in the worktree)."""
    HOME["dir"] = str(tmp_path_factory.mktemp("osc-home"))


HOME = {}


def cli(account, *args, tmp=None, check=True):
    """``openstack ARGS`` with heatweb's token and endpoint (keystoneauth's admin_token)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": HOME["dir"]}
    done = subprocess.run([str(OPENSTACK), "--os-auth-type", "admin_token",
                           "--os-endpoint", account["endpoint"], "--os-token", account["token"],
                           *args], env=env, cwd=tmp or ROOT, capture_output=True, text=True,
                          timeout=120)
    if check:
        assert done.returncode == 0, f"openstack {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


def cli_json(account, *args, **kw):
    """The command's JSON output (after the events ``--wait`` prints first)."""
    lines = cli(account, *args, "-f", "json", **kw).stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(("{", "[")))
    return json.loads("\n".join(lines[start:]))


@pytest.fixture(scope="module")
def stack(member, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("osc")
    (tmp / "t.yaml").write_text(json.dumps(TEMPLATE))
    name = f"osc{uuid.uuid4().hex[:6]}"
    shown = cli_json(member, "stack", "create", "-t", str(tmp / "t.yaml"), "--wait", name,
                     tmp=tmp)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    return {"name": name, "tmp": tmp}


def test_snapshot_commands(member, stack):
    name, tmp = stack["name"], stack["tmp"]
    created = cli_json(member, "stack", "snapshot", "create", name, "--name", "nightly")
    assert (created["name"], created["action"]) == ("nightly", "CREATE")
    snap_id = created["ID"]
    cli(member, "stack", "update", "--existing", "--parameter", "v=b", "--wait", name)
    listed = cli_json(member, "stack", "snapshot", "list", name)
    assert [(s["id"], s["name"], s["status"]) for s in listed] == \
        [(snap_id, "nightly", "COMPLETE")]
    shown = cli_json(member, "stack", "snapshot", "show", name, snap_id)["snapshot"]
    assert shown["data"]["resources"]["server"]["resource_data"]["snapshot_image_id"]
    cli(member, "stack", "snapshot", "restore", name, snap_id)
    restored = _wait(member, name, "RESTORE_COMPLETE")
    assert restored["parameters"]["v"] == "a"
    cli(member, "stack", "snapshot", "delete", name, snap_id)
    assert cli_json(member, "stack", "snapshot", "list", name) == []
    missing = cli(member, "stack", "snapshot", "show", name, snap_id, check=False)
    assert missing.returncode == 1 and "not found" in missing.stderr


HIDDEN_MARKER = "hidden-snap-4e1f0"


def test_snapshot_create_answers_as_heat_and_no_snapshot_answer_shows_a_hidden_value(
        member, tmp_path):
    """The create answers Heat's new snapshot row (IN_PROGRESS, no data yet); the taken
    snapshot's data has the hidden parameter masked; the restore still uses its value."""
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"secret": {"type": "string", "hidden": True},
                               "same": {"type": "string", "hidden": True}},
                "conditions": {"kept": {"equals": [{"get_param": "secret"},
                                                   {"get_param": "same"}]}},
                "resources": {"marker": {"type": "OS::Heat::TestResource", "properties": {
                    "value": {"if": ["kept", "yes", "no"]}}}},
                "outputs": {"kept": {"value": {"get_attr": ["marker", "output"]}}}}
    (tmp_path / "h.yaml").write_text(json.dumps(template))
    name = f"oschs{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "h.yaml"), "--wait", name,
        "--parameter", f"secret={HIDDEN_MARKER}", "--parameter", f"same={HIDDEN_MARKER}")
    table = cli(member, "stack", "snapshot", "create", name, "--name", "first").stdout
    assert HIDDEN_MARKER not in table and "heat_template_version" not in table, table
    created = cli_json(member, "stack", "snapshot", "create", name, "--name", "second")
    assert (created["status"], created["data"], created["status_reason"]) == \
        ("IN_PROGRESS", None, None), created
    snap_id = created["ID"]
    for _ in range(200):
        listed = cli(member, "stack", "snapshot", "list", name, "-f", "json").stdout
        if all(s["status"] == "COMPLETE" for s in json.loads(listed)):
            break
        time.sleep(0.3)
    assert HIDDEN_MARKER not in listed
    shown = cli(member, "stack", "snapshot", "show", name, snap_id, "-f", "json").stdout
    assert HIDDEN_MARKER not in shown
    data = json.loads(shown)["snapshot"]["data"]
    assert data["environment"]["parameters"]["secret"] == "******"
    assert data["template"]["resources"]["marker"]["type"] == "OS::Heat::TestResource"
    cli(member, "stack", "snapshot", "restore", name, snap_id)
    _wait(member, name, "RESTORE_COMPLETE")
    assert cli_json(member, "stack", "output", "show", name, "kept")["output_value"] == "yes"
    cli(member, "stack", "delete", "--yes", "--wait", name)


def test_outputs_failures_signal_and_export(member, stack, tmp_path):
    name = stack["name"]
    outputs = cli_json(member, "stack", "output", "show", name, "--all")
    assert outputs["value"]["output_value"] == "a"
    exported = tmp_path / "export.json"
    cli(member, "stack", "export", name, "--output-file", str(exported))
    assert json.loads(exported.read_text())["resources"]["marker"]["type"] == \
        "OS::Heat::TestResource"
    assert cli(member, "stack", "failures", "list", name).stdout.strip() == ""

    failing = {"heat_template_version": "2016-10-14", "resources": {
        "bad": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}}
    (tmp_path / "f.yaml").write_text(json.dumps(failing))
    fname = f"oscf{uuid.uuid4().hex[:6]}"
    done = cli(member, "stack", "create", "-t", str(tmp_path / "f.yaml"), "--wait", fname,
               check=False)
    assert done.returncode == 1
    failures = cli(member, "stack", "failures", "list", fname).stdout
    assert f"{fname}.bad:" in failures and "CREATE_FAILED" in failures
    assert "Test Resource failed bad" in failures


def test_resource_signal_completes_a_wait(member, tmp_path):
    (tmp_path / "w.yaml").write_text(json.dumps(WAITING))
    name = f"oscs{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "w.yaml"), name)
    _wait(member, name, "CREATE_IN_PROGRESS")
    cli(member, "stack", "resource", "signal", name, "handle", "--data",
        '{"status": "SUCCESS", "reason": "ok", "data": "d1", "id": "1"}')
    _wait(member, name, "CREATE_COMPLETE")
    shown = cli_json(member, "stack", "resource", "show", name, "wait")
    assert json.loads(shown["attributes"]["data"]) == {"1": "d1"}
    cli(member, "stack", "delete", "--yes", "--wait", name)


def test_resource_signal_to_a_locked_stack_fails_with_the_locks_message(member, tmp_path):
    """``openstack stack resource signal`` to a locked stack exits 1 with the lock's answer
    (409 StackLocked); nothing is signalled, and an event says the signal was not acted on."""
    template = {"heat_template_version": "2016-10-14", "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"}}}
    (tmp_path / "h.yaml").write_text(json.dumps(template))
    name = f"oscl{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "h.yaml"), "--wait", name)
    cli(member, "stack", "lock", name, "--level", "stacks", "--reason", "night freeze",
        "--wait")
    done = cli(member, "stack", "resource", "signal", name, "handle", "--data",
               '{"status": "SUCCESS", "id": "late"}', check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("ERROR: ")]
    assert "is locked at level stacks" in line and "night freeze" in line, line
    events = cli(member, "stack", "event", "list", name, "--resource", "handle").stdout
    assert "signal ignored: stack is locked" in events, events
    cli(member, "stack", "unlock", name, "--wait")
    cli(member, "stack", "resource", "signal", name, "handle", "--data",
        '{"status": "SUCCESS", "id": "late"}')
    cli(member, "stack", "delete", "--yes", "--wait", name)


def test_abandon_and_adopt_commands(member, tmp_path):
    (tmp_path / "t.yaml").write_text(json.dumps(TEMPLATE))
    name = f"osca{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "t.yaml"), "--wait",
        "--parameter", "v=kept", name)
    before = {r["resource_name"]: r["physical_resource_id"]
              for r in cli_json(member, "stack", "resource", "list", name)}
    cli(member, "stack", "abandon", name, "--output-file", str(tmp_path / "a.json"))
    assert cli(member, "stack", "show", name, check=False).returncode == 1
    adopted = cli_json(member, "stack", "adopt", "--adopt-file", str(tmp_path / "a.json"),
                       "--wait", name)
    assert adopted["stack_status"] == "ADOPT_COMPLETE"
    after = {r["resource_name"]: (r["physical_resource_id"], r["resource_status"])
             for r in cli_json(member, "stack", "resource", "list", name)}
    assert after == {n: (pid, "ADOPT_COMPLETE") for n, pid in before.items()}
    cli(member, "stack", "delete", "--yes", "--wait", name)


def test_service_list_for_admins_only(member, admin):
    services = cli_json(admin, "orchestration", "service", "list")
    assert services and {s["Binary"] for s in services} == {"heat-engine"}
    assert "up" in {s["Status"] for s in services}
    assert {"Hostname", "Engine ID", "Host", "Topic", "Updated At", "Status"} <= set(services[0])
    refused = cli(member, "orchestration", "service", "list", check=False)
    assert refused.returncode == 1 and "may not perform this action" in refused.stderr


def test_software_deployment_output_show(live_service, member, tmp_path):
    from heatclient import client as heat_client

    hc = heat_client.Client("1", endpoint=member["endpoint"], token=member["token"])
    config = hc.software_configs.create(name="c", group="script", config="echo hi",
                                        outputs=[{"name": "result"}])
    server = str(uuid.uuid4())
    deployment = hc.software_deployments.create(config_id=config.id, server_id=server,
                                                action="CREATE", status="IN_PROGRESS")
    hc.software_deployments.update(deployment.id, status="COMPLETE",
                                   output_values={"result": "42", "deploy_stdout": "hi"})
    one = cli(member, "software", "deployment", "output", "show", deployment.id, "result")
    assert "42" in one.stdout
    every = cli(member, "software", "deployment", "output", "show", deployment.id, "--all")
    assert "result" in every.stdout and "deploy_stdout" in every.stdout
    missing = cli(member, "software", "deployment", "output", "show", deployment.id, "nope",
                  check=False)
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_cancel_without_rollback_stops_a_create(member, tmp_path):
    (tmp_path / "w.yaml").write_text(json.dumps(WAITING))
    name = f"oscc{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "w.yaml"), name)
    _wait(member, name, "CREATE_IN_PROGRESS")
    cli(member, "stack", "cancel", "--no-rollback", "--wait", name, check=False)
    stack = _wait(member, name, "CREATE_FAILED")
    assert stack["stack_status_reason"] == "Stack CREATE cancelled"
    again = cli(member, "stack", "cancel", "--no-rollback", name, check=False)
    assert again.returncode == 1 and "not in cancelable state" in again.stderr
    cli(member, "stack", "delete", "--yes", "--wait", name)


def _wait(account, name, state, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = cli_json(account, "stack", "show", name)
        if shown["stack_status"] == state:
            return shown
        time.sleep(0.3)
    raise AssertionError(f"{name} is {shown['stack_status']}, wanted {state}")


def test_cancel_of_an_update_that_superseded_a_waiting_create_rolls_back(member, tmp_path):
    """The update's and the rollback's node for the waiting resource find it held by the
    create; once the create's wait is aborted, the rollback's node runs again (its input is
    kept even though it has one predecessor) and the rollback completes when signalled."""
    (tmp_path / "w.yaml").write_text(json.dumps(WAITING))
    name = f"osccu{uuid.uuid4().hex[:6]}"
    cli(member, "stack", "create", "-t", str(tmp_path / "w.yaml"), name)
    _wait(member, name, "CREATE_IN_PROGRESS")
    cli(member, "stack", "update", "-t", str(tmp_path / "w.yaml"), name)
    _wait(member, name, "UPDATE_IN_PROGRESS")
    cli(member, "stack", "cancel", name)
    _wait(member, name, "ROLLBACK_IN_PROGRESS")
    deadline = time.monotonic() + 90  # CI runs this beside the cloud's installation
    while (events := [(e["resource_status"], e["resource_status_reason"]) for e in cli_json(
            member, "stack", "event", "list", name, "--resource", "wait")])[-1:] == [] or \
            events[-1][0] != "CREATE_IN_PROGRESS":
        assert time.monotonic() < deadline, (
            "the rollback never waited again: "
            f"{cli_json(member, 'stack', 'show', name)['stack_status']}, events {events}")
        time.sleep(0.5)
    cli(member, "stack", "resource", "signal", name, "handle", "--data",
        '{"status": "SUCCESS", "id": "1"}')
    _wait(member, name, "ROLLBACK_COMPLETE")
    cli(member, "stack", "delete", "--yes", "--wait", name)
