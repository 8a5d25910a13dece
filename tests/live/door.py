"""Ways into the live service other than the API: a signed-in browser session (pages,
Django admin), the ``openstack`` command, and the service's own shell (database, cloud)."""
import hashlib
import html
import json
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import requests

from heatweb.clouds import write_clouds_yaml

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "door matrix password"


def shell(live_service, code):
    """Run ``code`` in the live service's ``manage.py shell``; its last printed line as JSON."""
    done = live_service.manage("shell", "-c", code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def set_password(live_service, username, *, superuser=False):
    shell(live_service, f"""
from django.contrib.auth import get_user_model
user, _ = get_user_model().objects.get_or_create(username="{username}")
user.set_password("{PASSWORD}")
user.is_staff = user.is_superuser = {superuser} or user.is_superuser
user.save()
print("{{}}")""")


class Browser:
    """A signed-in session of the pages (``/login/``) or of Django admin (``/admin/login/``)."""

    def __init__(self, live_service, username, *, login_path="/login/"):
        self.url = live_service.url
        self.session = requests.Session()
        self.session.get(self.url + login_path)
        resp = self.session.post(self.url + login_path, data={
            "username": username, "password": PASSWORD, "next": "/",
            "csrfmiddlewaretoken": self.session.cookies["csrftoken"]})
        assert resp.status_code in (200, 302) and "sessionid" in self.session.cookies, resp.text

    def post(self, path, data):
        resp = self.session.post(self.url + path, allow_redirects=True, data={
            **data, "csrfmiddlewaretoken": self.session.cookies["csrftoken"]})
        assert resp.status_code == 200, resp.status_code
        return resp

    def messages(self, resp):
        """The Django messages of a page (paragraphs on the pages, list items in admin)."""
        return [html.unescape(re.sub(r"<[^>]+>", "", m)).strip() for _, m in
                re.findall(r'<(li|p)[^>]*class="[^"]*(?:error|success|warning|info)[^"]*"[^>]*>'
                           r'(.*?)</\1>', resp.text, re.S)]

    def page_action(self, stack_id, action):
        return self.messages(self.post(f"/stacks/{stack_id}/actions/{action}", {}))

    def admin_action(self, stack_id, action):
        return self.messages(self.post("/admin/stacks/stack/", {
            "action": action, "_selected_action": [str(stack_id)], "index": "0"}))


def openstack_command(info, *args, timeout=120):
    """``openstack --os-cloud heatweb ...`` (python-openstackclient, heatclient's plugin and
    heatweb-osc), as a user runs it with the clouds.yaml heatweb writes for ``info``'s token."""
    key = hashlib.sha256(f"{info['endpoint']} {info['token']}".encode()).hexdigest()[:16]
    config = Path(tempfile.gettempdir()) / f"heatweb-clouds-{key}.yaml"
    if not config.exists():
        write_clouds_yaml(config, endpoint=info["endpoint"], token=info["token"])
    env = {"OS_CLIENT_CONFIG_FILE": str(config), "PATH": "/usr/bin:/bin",
           "HOME": tempfile.gettempdir()}
    return subprocess.run([str(Path(sys.executable).parent / "openstack"),
                           "--os-cloud", "heatweb", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def unique(prefix):
    return f"{prefix}{uuid.uuid4().hex[:8]}"
