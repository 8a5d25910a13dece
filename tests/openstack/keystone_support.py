"""What the Keystone tests share: the running cloud's accounts, Keystone's
REST API, and one heatweb live service in Keystone mode for the session.

The cloud is the one ``scripts/cloud-up`` started (its ``clouds.yaml`` in
``HEATWEB_CLOUD_BASE``, ``/tmp/heatweb-cloud`` by default); the tests fail,
never skip, when it is not there.
"""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml

from tests.conftest import BIN, ROOT, LiveService

CLOUD_BASE = Path(os.environ.get("HEATWEB_CLOUD_BASE", "/tmp/heatweb-cloud"))
TIMEOUT = 30


class Cloud:
    """The accounts of the running cloud's ``clouds.yaml`` and Keystone's API."""

    def __init__(self, base=CLOUD_BASE):
        path = base / "clouds.yaml"
        if not (base / "READY").exists() or not path.exists():
            pytest.fail(f"no running OpenStack cloud at {base} (scripts/cloud-up makes one)")
        self.clouds = yaml.safe_load(path.read_text())["clouds"]
        self.auth_url = self.account("heatweb-admin")["auth_url"].rstrip("/")
        self.v3 = self.auth_url if self.auth_url.endswith("/v3") else self.auth_url + "/v3"
        self._admin_token = None

    def account(self, cloud):
        return self.clouds[cloud]["auth"]

    def os_env(self, cloud):
        """``OS_*`` variables for ``openstack`` / ``heat`` as the cloud's account."""
        auth = self.account(cloud)
        env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        env.update(OS_AUTH_URL=auth["auth_url"], OS_USERNAME=auth["username"],
                   OS_PASSWORD=auth["password"], OS_PROJECT_NAME=auth["project_name"],
                   OS_USER_DOMAIN_NAME="Default", OS_PROJECT_DOMAIN_NAME="Default",
                   OS_IDENTITY_API_VERSION="3", OS_REGION_NAME="RegionOne",
                   OS_INTERFACE="public")
        return env

    def token(self, cloud):
        """A new project-scoped token: (token, body of Keystone's answer)."""
        auth = self.account(cloud)
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": auth["username"], "password": auth["password"],
            "domain": {"name": "Default"}}}},
            "scope": {"project": {"name": auth["project_name"],
                                  "domain": {"name": "Default"}}}}}
        resp = requests.post(f"{self.v3}/auth/tokens", json=body, timeout=TIMEOUT)
        assert resp.status_code == 201, resp.text
        return resp.headers["X-Subject-Token"], resp.json()["token"]

    def admin(self, method, path, *, headers=None, **kwargs):
        """Keystone's API as the cloud admin."""
        if self._admin_token is None:
            self._admin_token = self.token("heatweb-admin")[0]
        return requests.request(method, f"{self.v3}{path}", timeout=TIMEOUT,
                                headers={"X-Auth-Token": self._admin_token, **(headers or {})},
                                **kwargs)

    def admin_compute(self, method, path, **kwargs):
        """Nova's API as the cloud admin (the endpoint from the catalog)."""
        if self._admin_token is None:
            self._admin_token = self.token("heatweb-admin")[0]
        catalog = self.token("heatweb-admin")[1]["catalog"]
        url = next(e["url"] for s in catalog if s["type"] == "compute"
                   for e in s["endpoints"] if e["interface"] == "public")
        return requests.request(method, url.rstrip("/") + path, timeout=TIMEOUT,
                                headers={"X-Auth-Token": self._admin_token}, **kwargs)

    def revoke(self, token):
        """Revoke a token (as if it had expired) and check Keystone refuses it."""
        resp = self.admin("DELETE", "/auth/tokens", headers={"X-Subject-Token": token})
        assert resp.status_code == 204, resp.text
        check = self.admin("GET", "/auth/tokens", headers={"X-Subject-Token": token})
        assert check.status_code == 404, check.text

    def trusts(self, trustor_user_id):
        resp = self.admin("GET", "/OS-TRUST/trusts", params={"trustor_user_id": trustor_user_id})
        assert resp.status_code == 200, resp.text
        return {t["id"]: t for t in resp.json()["trusts"]}


class Heat:
    """heatweb's API with a Keystone token, as python-heatclient would call it."""

    def __init__(self, service, token, project_id):
        self.base = f"{service.url}/v1/{project_id}"
        self.session = requests.Session()
        self.session.headers.update({"X-Auth-Token": token, "Content-Type": "application/json"})

    def call(self, method, path, body=None):
        return self.session.request(method, self.base + path, timeout=TIMEOUT,
                                    data=None if body is None else json.dumps(body))

    def create(self, name, template, **extra):
        resp = self.call("POST", "/stacks", {"stack_name": name, "template": template, **extra})
        assert resp.status_code == 201, resp.text
        return f"/stacks/{name}/{resp.json()['stack']['id']}"

    def wait(self, path, state, timeout=120):
        deadline = time.monotonic() + timeout
        stack = None
        while time.monotonic() < deadline:
            resp = self.call("GET", path)
            assert resp.status_code == 200, resp.text
            stack = resp.json()["stack"]
            if stack["stack_status"] == state:
                return stack
            if stack["stack_status"].endswith("FAILED") and not state.endswith("FAILED"):
                raise AssertionError(f"{stack['stack_status']}: {stack['stack_status_reason']}")
            time.sleep(0.3)
        raise AssertionError(f"not {state} after {timeout} s: {stack and stack['stack_status']}")


_services = {}


def keystone_settings(cloud):
    """The environment of a heatweb in Keystone mode with the OpenStack driver."""
    return dict(
        HEATWEB_AUTH="keystone", KEYSTONE_URL=cloud.v3,
        HEATWEB_SERVICE_USERNAME=cloud.account("heatweb-service")["username"],
        HEATWEB_SERVICE_PASSWORD=cloud.account("heatweb-service")["password"],
        HEATWEB_SERVICE_PROJECT=cloud.account("heatweb-service")["project_name"],
        # The OpenStack driver acts through each stack's trust; its own
        # connection (for what has no stack) is heatweb's service user.
        HEATWEB_CLOUD="openstack", OS_CLIENT_CONFIG_FILE=str(CLOUD_BASE / "clouds.yaml"),
        OS_CLOUD="heatweb-service",
        # Mistral's cron triggers make their trust from the stack trust's token.
        HEATWEB_TRUSTS_REDELEGATION="true")


def keystone_service(config, tmp_path_factory):
    """The session's heatweb in Keystone mode, registered in the catalog."""
    if "service" in _services:
        return _services["service"]
    service = LiveService(tmp_path_factory.mktemp("keystone"), name="keystone",
                          **keystone_settings(Cloud()))
    service.start()
    config.add_cleanup(service.stop)
    allow_guest_port(service.port)
    done = service.manage("keystone_catalog", "--public-url", service.url, "--json")
    assert done.returncode == 0, done.stderr
    _services["service"] = service
    return service


def allow_guest_port(port):
    """Let the cloud's real guests reach ``127.0.0.1:port`` (a signal URL of this heatweb):
    the guest driver forwards the ports listed in ``BASE/guests/host-ports`` into each
    guest it starts (docs/guests.md)."""
    path = CLOUD_BASE / "guests" / "host-ports"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(f"{port}\n")


def run_cli(args, env, *, timeout=180):
    """``openstack`` from the venv; a CompletedProcess."""
    return subprocess.run([str(BIN / args[0]), *args[1:]], env=env, cwd=ROOT, timeout=timeout,
                          capture_output=True, text=True)

