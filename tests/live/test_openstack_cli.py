"""heatweb's CLI is OpenStack's: ``openstack --os-cloud heatweb stack ...`` against the live service.

* ``manage.py bootstrap`` and ``issue_token --clouds-yaml`` write a clouds.yaml
  with which ``openstack`` works with no other flag;
* every error path (a YAML error, a missing file, a bad ``--parameter``,
  a stack that is not there, a server that is down, a bad token) ends with
  exit status 1 and a clean message, no Python traceback;
* ``issue_token --json`` run beside a server started with ``serve --port``
  prints that server's endpoint (not :8004).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests
import yaml

from heatweb.clouds import write_clouds_yaml
from tests.conftest import ROOT
from tests.live.door import openstack_command

pytestmark = pytest.mark.live
OPENSTACK = str(Path(sys.executable).parent / "openstack")

TEMPLATE = "heat_template_version: 2016-10-14\nresources:\n  r: {type: OS::Heat::None}\n"
BAD_YAML = "heat_template_version: 2016-10-14\nresources:\n  a: {type: OS::Heat::None\n  b: 1\n"


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"osc-{uuid.uuid4().hex[:6]}", f"oscp-{uuid.uuid4().hex[:6]}")


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_failure(done, *expected):
    """Exit status 1, no traceback, and a message saying what went wrong."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    message = done.stderr.strip()
    assert message, done
    for fragment in expected:
        assert fragment in message, message
    return message


def test_issue_token_writes_a_clouds_yaml_openstack_uses_with_no_other_flag(live_service,
                                                                           tmp_path):
    clouds = tmp_path / "clouds.yaml"
    done = live_service.manage("issue_token", f"cy-{uuid.uuid4().hex[:6]}", "--project",
                               f"cyp-{uuid.uuid4().hex[:6]}", "--clouds-yaml", str(clouds))
    assert done.returncode == 0, done.stderr
    cloud = yaml.safe_load(clouds.read_text())["clouds"]["heatweb"]
    assert cloud["auth_type"] == "admin_token"
    assert cloud["auth"]["token"] == done.stdout.strip()
    assert cloud["auth"]["endpoint"].startswith(live_service.url + "/v1/")
    assert oct(clouds.stat().st_mode & 0o777) == "0o600"
    template = tmp_path / "t.yaml"
    template.write_text(TEMPLATE)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OS_CLIENT_CONFIG_FILE": str(clouds),
           "OS_CLOUD": "heatweb"}
    name = f"cy{uuid.uuid4().hex[:6]}"
    created = subprocess.run([OPENSTACK, "stack", "create",
                              "-t", str(template), name, "--wait", "-f", "json"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    assert '"stack_status": "CREATE_COMPLETE"' in created.stdout, created.stdout


def test_every_error_path_prints_a_clean_message(live_service, info, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_YAML)
    good = tmp_path / "good.yaml"
    good.write_text("heat_template_version: 2016-10-14\nparameters:\n  n: {type: number}\n"
                    "resources:\n  r: {type: OS::Heat::None}\n")
    clean_failure(openstack_command(info, "stack", "create", "-t", str(bad), "x"),
                  "Error parsing template", "line 4")
    clean_failure(openstack_command(info, "stack", "create", "-t", str(tmp_path / "nope.yaml"),
                                    "x"), "No such file or directory")
    clean_failure(openstack_command(info, "stack", "create", "-t", str(good), "--parameter",
                                    "n", "x"), "Malformed parameter(n)")
    clean_failure(openstack_command(info, "stack", "create", "-t", str(good), "--parameter",
                                    "n=abc", "x"), "'abc' is not a number")
    clean_failure(openstack_command(info, "stack", "show", "no-such-stack"),
                  "Stack not found: no-such-stack")
    clean_failure(openstack_command(info, "stack", "lock", "no-such-stack"),
                  "Stack not found: no-such-stack")
    clean_failure(openstack_command(info, "stack", "lock", "history", "no-such-stack"),
                  "Stack not found: no-such-stack")
    wrong = {**info, "token": "not-a-token-" + uuid.uuid4().hex}
    for args in (("stack", "list"), ("stack", "lock", "list")):
        message = clean_failure(openstack_command(wrong, *args))
        assert "token" in message.lower() and len(message.splitlines()) == 1, message
    down = {**info, "token": info["token"] + "-down",
            "endpoint": f"http://127.0.0.1:{_free_port()}/v1/{info['project_id']}"}
    for args in (("stack", "list"), ("stack", "lock", "history", "x")):
        message = clean_failure(openstack_command(down, *args), "Unable to establish connection")
        assert len(message.splitlines()) == 1, message


def test_issue_token_and_bootstrap_name_the_server_that_runs(live_service, tmp_path):
    """``serve --port P`` records its URL; commands run later without HEATWEB_PUBLIC_URL
    (another shell) print endpoints on P, and the clouds.yaml of bootstrap reaches it."""
    env = {k: v for k, v in live_service.env.items() if k != "HEATWEB_PUBLIC_URL"}
    port = _free_port()
    server = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port),
                               "--no-worker", "--workers", "1"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
            time.sleep(0.3)
        done = subprocess.run([sys.executable, "manage.py", "issue_token", "elsewhere",
                               "--project", f"else-{uuid.uuid4().hex[:6]}", "--json"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        issued = json.loads(done.stdout)
        assert issued["endpoint"] == f"http://127.0.0.1:{port}/v1/{issued['project_id']}"
        listed = requests.get(f"{issued['endpoint']}/stacks",
                              headers={"X-Auth-Token": issued["token"]}, timeout=30)
        assert listed.status_code == 200, listed.text

        home = tmp_path / "home"
        done = subprocess.run([sys.executable, "manage.py", "bootstrap"], cwd=ROOT,
                              env={**env, "HOME": str(home)}, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        clouds = os.path.join(env["HEATWEB_DATA_DIR"], "clouds.yaml")
        assert f"export OS_CLIENT_CONFIG_FILE={clouds}" in done.stdout
        assert not (home / ".config").exists()  # only with --user-clouds-yaml (./run)
        listed = subprocess.run([OPENSTACK, "--os-cloud",
                                 "heatweb", "stack", "list"], capture_output=True, text=True,
                                env={"PATH": "/usr/bin:/bin", "HOME": str(home),
                                     "OS_CLIENT_CONFIG_FILE": clouds}, timeout=120)
        assert listed.returncode == 0, listed.stderr
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


def test_bootstrap_writes_the_users_clouds_yaml_only_when_it_is_heatwebs(live_service,
                                                                         tmp_path):
    home = tmp_path / "home"
    user_clouds = home / ".config" / "openstack" / "clouds.yaml"
    env = {**live_service.env, "HOME": str(home)}
    run = [sys.executable, "manage.py", "bootstrap", "--user-clouds-yaml"]
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "export OS_CLIENT_CONFIG_FILE" not in done.stdout
    first = yaml.safe_load(user_clouds.read_text())["clouds"]["heatweb"]["auth"]["token"]
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert yaml.safe_load(user_clouds.read_text())["clouds"]["heatweb"]["auth"]["token"] != first
    mine = "clouds:\n  mycloud:\n    auth_type: none\n"
    user_clouds.write_text(mine)
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert user_clouds.read_text() == mine
    assert "export OS_CLIENT_CONFIG_FILE" in done.stdout


def test_the_clouds_yaml_heatweb_writes_is_yaml_for_one_cloud(tmp_path):
    path = write_clouds_yaml(tmp_path / "c.yaml", endpoint="http://h:1/v1/p", token="t")
    assert yaml.safe_load(path.read_text()) == {"clouds": {"heatweb": {
        "auth_type": "admin_token", "auth": {"endpoint": "http://h:1/v1/p", "token": "t"},
        "orchestration_endpoint_override": "http://h:1/v1/p"}}}
