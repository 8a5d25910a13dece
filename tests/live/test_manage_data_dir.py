"""Management commands use the data directory of the server that runs, or say in one line
that they cannot find its database (never a traceback, never a stray empty database).

``manage.py serve`` records its data directory (``heatweb/data_dirs.py``); a
command run in another shell without ``HEATWEB_DATA_DIR`` takes it. The
records go to a directory of the test's own (``HEATWEB_SERVERS_DIR``), never
the checkout's ``var/``.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import requests

from tests.conftest import ROOT, _free_port

pytestmark = pytest.mark.live


def manage(env, *args):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def without_data_dir(live_service, servers):
    env = {k: v for k, v in live_service.env.items() if k != "HEATWEB_DATA_DIR"}
    env["HEATWEB_SERVERS_DIR"] = str(servers)
    return env


def test_a_command_without_a_database_says_so_in_one_line(tmp_path, live_service):
    env = {**live_service.env, "HEATWEB_DATA_DIR": str(tmp_path / "nowhere")}
    env.pop("DATABASE_URL", None)
    done = manage(env, "issue_token", "someone", "--project", "p")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"heatweb: no database in {tmp_path / 'nowhere'}"), lines
    assert "HEATWEB_DATA_DIR" in lines[0]
    assert not (tmp_path / "nowhere").exists()

    # A database file with no tables (a stray one): one line too, naming migrate.
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "heatweb.sqlite3").write_bytes(b"")
    done = manage({**env, "HEATWEB_DATA_DIR": str(tmp_path / "empty")},
                  "issue_token", "someone", "--project", "p")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "has no heatweb tables" in done.stderr and "manage.py migrate" in done.stderr


def test_issue_token_uses_the_running_servers_data_dir(tmp_path, live_service):
    servers = tmp_path / "servers"
    env = {**live_service.env, "HEATWEB_SERVERS_DIR": str(servers)}
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--no-worker", "--workers", "1",
         "--port", str(_free_port())], cwd=ROOT, env={**env, "HEATWEB_PUBLIC_URL": live_service.url},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(100):
            if list(servers.glob("*.json")):
                break
            time.sleep(0.1)
        assert [p.name for p in servers.glob("*.json")] == [f"{server.pid}.json"]
        done = manage(without_data_dir(live_service, servers), "issue_token", "found-it",
                      "--project", "found-proj", "--json",
                      "--public-url", live_service.url)
        assert done.returncode == 0, done.stderr
        info = json.loads(done.stdout)
        answer = requests.get(info["endpoint"] + "/stacks",
                              headers={"X-Auth-Token": info["token"]}, timeout=30)
        assert answer.status_code == 200, answer.text
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    assert list(servers.glob("*.json")) == []
