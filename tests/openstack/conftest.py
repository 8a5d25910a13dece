"""The openstack mode's fixtures: heatweb's live service driving the real cloud.

``./test --mode openstack`` brings the cloud up (``scripts/cloud-up``) and
sets ``HEATWEB_CLOUD=openstack``, ``OS_CLIENT_CONFIG_FILE`` (the cloud's
clouds.yaml) and ``OS_CLOUD`` (``heatweb-demo-member``). ``member`` is that
account as a Heat user would be: a Keystone token and python-heatclient
against heatweb in Keystone mode, which builds through each stack's trust
(``keystone_support.keystone_service``). ``cloud`` and ``admin_cloud`` are
openstacksdk connections for checking what heatweb did directly in Nova,
Glance and Neutron.
"""
import os
import time

import openstack
import pytest
import requests

from tests.openstack.keystone_support import Cloud as KeystoneCloud, keystone_service
# The browser tests' session fixtures (Debian's chromium, the screenshots directory), once for
# every module here: a session fixture imported by two modules would run twice.
from tests.browser.conftest import browser, screenshot_dir  # noqa: F401 - fixtures

pytestmark = pytest.mark.openstack


@pytest.fixture(scope="session")
def cloud():
    """openstacksdk as the account heatweb acts as (a member of the demo project)."""
    return openstack.connect(cloud=os.environ.get("OS_CLOUD", "heatweb-demo-member"),
                             connect_retries=3)


@pytest.fixture(scope="session")
def admin_cloud():
    # A pooled connection the API's gunicorn closed after its keep-alive (2 s) is tried
    # again (seen: "Remote end closed connection without response" from Nova).
    return openstack.connect(cloud="heatweb-admin", connect_retries=3)


class Member:
    """The cloud's ``demo-member`` as a Heat user: a Keystone token, python-heatclient on
    heatweb's catalog endpoint, and plain HTTP for the lock verbs."""

    def __init__(self, service, keystone):
        from heatclient import client

        self.token, body = keystone.token("heatweb-demo-member")
        self.endpoint = f"{service.url}/v1/{body['project']['id']}"
        self.heat = client.Client("1", endpoint=self.endpoint, token=self.token)

    def action(self, stack_name, stack_id, body):
        response = requests.post(f"{self.endpoint}/stacks/{stack_name}/{stack_id}/actions",
                                 json=body,
                                 headers={"X-Auth-Token": self.token}, allow_redirects=True,
                                 timeout=30)
        assert response.status_code in (200, 202), response.text


@pytest.fixture
def member(request, tmp_path_factory):
    """heatweb in Keystone mode with the OpenStack driver, used by the demo member."""
    return Member(keystone_service(request.config, tmp_path_factory), KeystoneCloud())


def wait_stack(heat, stack_id, state, timeout=240):
    """The stack once it reaches ``state``; fails at once on an unexpected FAILED."""
    deadline = time.monotonic() + timeout
    stack = None
    while time.monotonic() < deadline:
        stack = heat.stacks.get(stack_id)
        if stack.stack_status == state:
            return stack
        if stack.stack_status.endswith("FAILED") and not state.endswith("FAILED"):
            raise AssertionError(f"{stack.stack_status}: {stack.stack_status_reason}")
        time.sleep(1)
    raise AssertionError(f"stack {stack_id} is {stack and stack.stack_status}, not {state}, "
                         f"after {timeout}s")


def wait_for(check, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")
