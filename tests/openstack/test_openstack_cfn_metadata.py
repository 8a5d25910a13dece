"""heatweb's CloudFormation metadata API with the real Keystone (issue 37): a
``POLL_SERVER_CFN`` server's stack user gets an EC2 credential in Keystone; requests signed
with it as os-collect-config signs them (keystoneclient's ``Ec2Signer``) are checked by
Keystone's ``/v3/ec2tokens`` and answered with the server's metadata; heatweb's agent,
given the metadata's ``cfn`` settings, runs the deployment and signals it (``CFN_SIGNAL``);
delete removes the user and its credential. (Without Keystone:
tests/live/test_cfn_metadata.py.)"""
import copy
import json
import subprocess
import sys
import time
import uuid
from xml.etree import ElementTree

import pytest

from tests.live.test_cfn_metadata import AGENT, TEMPLATE, error_code, signed_get
from tests.openstack.conftest import wait_stack

pytestmark = pytest.mark.openstack


def test_describe_stack_resource_signed_with_the_stack_users_ec2_credential(
        member, cloud, admin_cloud, tmp_path):
    heat, tag = member.heat, f"cfn{uuid.uuid4().hex[:6]}"
    template = copy.deepcopy(TEMPLATE)
    net = cloud.network.create_network(name=f"{tag}-net")
    cloud.network.create_subnet(network_id=net.id, cidr="10.45.0.0/24", ip_version=4)
    template["resources"]["server"]["properties"].update(
        image="heatweb-tiny", flavor="m1.tiny", networks=[{"network": net.id}])
    try:
        stack_id = heat.stacks.create(stack_name=tag, template=template)["stack"]["id"]
        deadline = time.monotonic() + 180
        while not (metadata := heat.resources.metadata(stack_id, "server")).get("deployments"):
            assert time.monotonic() < deadline
            time.sleep(1)
        cfn = metadata["os-collect-config"]["cfn"]
        credential = [c for c in admin_cloud.identity.credentials(type="ec2")
                      if json.loads(c.blob)["access"] == cfn["access_key_id"]]
        assert len(credential) == 1
        user = admin_cloud.identity.get_user(credential[0].user_id)
        assert user.name.startswith(f"{tag}-server-")
        assert admin_cloud.identity.get_domain(user.domain_id).name == "heatweb_stack_users"

        answer = signed_get(cfn)
        assert answer.status_code == 200, answer.text
        detail = ElementTree.fromstring(answer.text).find(
            "DescribeStackResourceResult/StackResourceDetail")
        assert json.loads(detail.findtext("Metadata")) == metadata
        refused = signed_get(cfn, secret="0" * 32)  # Keystone finds the signature wrong
        assert (refused.status_code, error_code(refused)) == (403, "AccessDenied")

        done = subprocess.run(
            [sys.executable, str(AGENT), "--once", "--state-dir", str(tmp_path),
             "--cfn-metadata-url", cfn["metadata_url"], "--access-key-id",
             cfn["access_key_id"], "--secret-access-key", cfn["secret_access_key"],
             "--stack-name", cfn["stack_name"], "--path", cfn["path"]],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        stack = wait_stack(heat, stack_id, "CREATE_COMPLETE")
        server_id = heat.resources.get(stack_id, "server").physical_resource_id
        outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
        assert outputs["result"] == f"got fooooo on {server_id} during CREATE"

        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
        assert admin_cloud.identity.find_user(user.id) is None
        assert not [c for c in admin_cloud.identity.credentials(type="ec2")
                    if json.loads(c.blob)["access"] == cfn["access_key_id"]]
        gone = signed_get(cfn)
        assert (gone.status_code, error_code(gone)) == (403, "InvalidClientTokenId")
    finally:
        deadline = time.monotonic() + 60
        while list(cloud.network.ports(network_id=net.id)) and time.monotonic() < deadline:
            time.sleep(1)
        cloud.network.delete_network(net.id)
