"""heatweb's CloudFormation metadata API (``GET /v1/?Action=DescribeStackResource``, EC2
signed) for a ``POLL_SERVER_CFN`` server, on the simulated cloud (no Keystone: heatweb
checks the signature with the key pair it keeps), through real HTTP: the server's metadata
gives os-collect-config's ``cfn`` settings; heatweb's agent polls with them, runs a
``script`` config and signals it (``CFN_SIGNAL``); requests signed by keystoneclient's
``Ec2Signer`` (what os-collect-config signs with) are read; bad ones get heat-api-cfn's
errors.
"""
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest
import requests
from keystoneclient.contrib.ec2.utils import Ec2Signer

from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

AGENT = Path(__file__).resolve().parents[2] / "softwareconfig" / "agent" / "heatweb_agent.py"

TEMPLATE = {
    "heat_template_version": "2014-10-16",
    "resources": {
        "cfg": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "inputs": [{"name": "foo"}], "outputs": [{"name": "result"}],
            "config": '#!/bin/sh\necho -n "got $foo on $deploy_server_id during '
                      '$deploy_action" > $heat_outputs_path.result\necho out\n'
                      'echo err 1>&2\n'}},
        "dep": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "cfg"}, "server": {"get_resource": "server"},
            "input_values": {"foo": "fooooo"}, "signal_transport": "CFN_SIGNAL"}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny", "user_data_format": "SOFTWARE_CONFIG",
            "software_config_transport": "POLL_SERVER_CFN"}},
        "other": {"type": "OS::Heat::None"},
    },
    "outputs": {"result": {"value": {"get_attr": ["dep", "result"]}},
                "stderr": {"value": {"get_attr": ["dep", "deploy_stderr"]}}},
}


@pytest.fixture(scope="module")
def hc(live_service):
    return live_service.heat()


def signed_get(cfn, *, secret=None, **params):
    """A GET of the metadata URL signed as os-collect-config signs it (keystoneclient)."""
    url = urlsplit(cfn["metadata_url"])
    params = {"Action": "DescribeStackResource", "StackName": cfn["stack_name"],
              "LogicalResourceId": "server", "AWSAccessKeyId": cfn["access_key_id"],
              "SignatureVersion": "2", **params}
    params["Signature"] = Ec2Signer(secret or cfn["secret_access_key"]).generate(
        {"params": params, "verb": "GET", "host": url.netloc, "path": url.path})
    return requests.get(cfn["metadata_url"], params=params, timeout=30)


def error_code(response):
    return ElementTree.fromstring(response.text).findtext("Error/Code")


def test_a_poll_server_cfn_server_is_configured_through_describe_stack_resource(hc, tmp_path):
    _, stack_id = create(hc, TEMPLATE)
    deadline = time.monotonic() + 60
    while not (metadata := hc.resources.metadata(stack_id, "server")).get("deployments"):
        assert time.monotonic() < deadline, metadata
        time.sleep(0.3)
    occ = metadata["os-collect-config"]
    assert occ["collectors"] == ["cfn", "local"]
    cfn = occ["cfn"]
    assert cfn["metadata_url"].endswith("/v1/") and cfn["path"] == "server.Metadata"
    assert len(cfn["access_key_id"]) == 32 and len(cfn["secret_access_key"]) == 32
    server_id = hc.resources.get(stack_id, "server").physical_resource_id

    answer = signed_get(cfn)
    assert answer.status_code == 200, answer.text
    detail = ElementTree.fromstring(answer.text).find(
        "DescribeStackResourceResult/StackResourceDetail")
    assert detail.findtext("LogicalResourceId") == "server"
    assert detail.findtext("PhysicalResourceId") == server_id
    assert detail.findtext("ResourceType") == "OS::Nova::Server"
    assert json.loads(detail.findtext("Metadata")) == metadata
    as_json = signed_get(cfn, ContentType="JSON").json()
    assert as_json["DescribeStackResourceResponse"]["DescribeStackResourceResult"][
        "StackResourceDetail"]["Metadata"] == metadata

    # Refused in heat-api-cfn's words.
    assert (signed_get(cfn, secret="0" * 32).status_code,
            error_code(signed_get(cfn, secret="0" * 32))) == (403, "SignatureDoesNotMatch")
    other = signed_get(cfn, LogicalResourceId="other")
    assert (other.status_code, error_code(other)) == (403, "AccessDenied")
    unknown = signed_get({**cfn, "access_key_id": "f" * 32})
    assert (unknown.status_code, error_code(unknown)) == (403, "InvalidClientTokenId")
    bare = requests.get(cfn["metadata_url"], params={"Action": "DescribeStackResource"},
                        timeout=30)
    assert (bare.status_code, error_code(bare)) == (403, "MissingAuthenticationToken")
    listing = signed_get(cfn, Action="ListStacks")
    assert (listing.status_code, error_code(listing)) == (400, "InvalidAction")

    # heatweb's agent polls with the server's cfn settings, runs the script, signals.
    done = subprocess.run(
        [sys.executable, str(AGENT), "--once", "--state-dir", str(tmp_path),
         "--cfn-metadata-url", cfn["metadata_url"],
         "--access-key-id", cfn["access_key_id"], "--secret-access-key",
         cfn["secret_access_key"], "--stack-name", cfn["stack_name"], "--path", cfn["path"]],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outputs == {"result": f"got fooooo on {server_id} during CREATE",
                       "stderr": "err\n"}

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    gone = signed_get(cfn)
    assert (gone.status_code, error_code(gone)) == (403, "InvalidClientTokenId")


ACCESS_KEY_TEMPLATE = {
    "HeatTemplateFormatVersion": "2012-12-12",
    "Resources": {
        "CfnUser": {"Type": "AWS::IAM::User"},
        "Keys": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "CfnUser"}}},
        "Thing": {"Type": "OS::Heat::None", "Metadata": {"AWS::CloudFormation::Init": {
            "config": {"files": {"/tmp/x": {"content": "x"}}}}}},
    },
    "Outputs": {"access": {"Value": {"Ref": "Keys"}},
                "secret": {"Value": {"Fn::GetAtt": ["Keys", "SecretAccessKey"]}}},
}


def test_an_access_keys_credential_reads_any_resource_of_its_stack(hc):
    """cfn-init / cfn-hup with an AWS::IAM::AccessKey's key (as heat-tempest-plugin's
    test_server_cfn_init template writes it to /etc/cfn/cfn-credentials): the key reads the
    metadata of any resource of its stack (Heat's User without Policies)."""
    name, stack_id = create(hc, ACCESS_KEY_TEMPLATE)
    stack = wait_stack(hc, stack_id, "CREATE_COMPLETE")
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert len(outputs["access"]) == 32 and len(outputs["secret"]) == 32
    assert hc.resources.get(stack_id, "Keys").physical_resource_id == outputs["access"]
    cfn = {"metadata_url": hc.http_client.endpoint.split("/v1/")[0] + "/v1/",
           "access_key_id": outputs["access"], "secret_access_key": outputs["secret"],
           "stack_name": name}
    answer = signed_get(cfn, LogicalResourceId="Thing")
    assert answer.status_code == 200, answer.text
    detail = ElementTree.fromstring(answer.text).find(
        "DescribeStackResourceResult/StackResourceDetail")
    assert json.loads(detail.findtext("Metadata")) == ACCESS_KEY_TEMPLATE["Resources"][
        "Thing"]["Metadata"]
    missing = signed_get(cfn, LogicalResourceId="Nope")
    assert (missing.status_code, error_code(missing)) == (400, "InvalidParameterValue")
    wrong = signed_get(cfn, LogicalResourceId="Thing", secret="0" * 32)
    assert (wrong.status_code, error_code(wrong)) == (403, "SignatureDoesNotMatch")
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    gone = signed_get(cfn, LogicalResourceId="Thing")
    assert (gone.status_code, error_code(gone)) == (403, "InvalidClientTokenId")
