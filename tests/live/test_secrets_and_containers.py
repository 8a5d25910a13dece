"""Swift's and Barbican's types through python-heatclient against the live service on the
simulated cloud: a container with its metadata, a secret and its payload, orders, and
Barbican containers of the secrets, each gone after delete.
"""
import base64
import uuid

import pytest
from heatclient import client as heat_client_module

from tests.live.test_lock import cloud
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  bucket:
    type: OS::Swift::Container
    properties: {X-Container-Read: ".r:*", X-Container-Meta: {web: index.html},
                 PurgeOnDelete: true}
  secret:
    type: OS::Barbican::Secret
    properties: {name: db-password, payload: s3cr3t, payload_content_type: text/plain}
  key:
    type: OS::Barbican::Secret
    properties: {payload: {get_param: key}, payload_content_type: application/octet-stream,
                 payload_content_encoding: base64, secret_type: symmetric}
  aes:
    type: OS::Barbican::Order
    properties: {type: key, algorithm: aes, bit_length: 256, mode: cbc,
                 payload_content_type: application/octet-stream}
  rsa:
    type: OS::Barbican::Order
    properties: {type: asymmetric, algorithm: rsa, bit_length: 2048}
  blob:
    type: OS::Barbican::Secret
    properties: {payload: AAFhYmM=, payload_content_type: application/octet-stream,
                 payload_content_encoding: base64}
  generic:
    type: OS::Barbican::GenericContainer
    properties:
      secrets: [{name: password, ref: {get_resource: secret}},
                {name: key, ref: {get_resource: key}}]
  pair:
    type: OS::Barbican::RSAContainer
    properties: {private_key_ref: {get_resource: key}, public_key_ref: {get_resource: secret}}
  cert:
    type: OS::Barbican::CertificateContainer
    properties: {certificate_ref: {get_resource: secret}, private_key_ref: {get_resource: key}}
parameters:
  key: {type: string}
outputs:
  url: {value: {get_attr: [bucket, WebsiteURL]}}
  count: {value: {get_attr: [bucket, ObjectCount]}}
  decrypted: {value: {get_attr: [secret, decrypted]}}
  status: {value: {get_attr: [secret, status]}}
  key_ref: {value: {get_attr: [aes, secret_ref]}}
  rsa_container: {value: {get_attr: [rsa, container_ref]}}
  rsa_public: {value: {get_attr: [rsa, public_key]}}
  blob: {value: {get_attr: [blob, decrypted]}}
  order_status: {value: {get_attr: [aes, status]}}
  refs: {value: {get_attr: [generic, secret_refs]}}
  pair_refs: {value: {get_attr: [pair, secret_refs]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"secrets-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_container_secrets_orders_and_barbican_containers(hc, live_service):
    key = base64.b64encode(b"0123456789abcdef").decode()
    name, stack_id = create(hc, TEMPLATE, parameters={"key": key})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert ids["bucket"].startswith(f"{name}-bucket-")
    assert out["url"].endswith(f"/{ids['bucket']}") and out["count"] == 0
    assert out["decrypted"] == "s3cr3t" and out["status"] == "ACTIVE"
    assert out["order_status"] == "ACTIVE" and out["key_ref"] and out["rsa_container"]
    assert out["refs"] == {"password": ids["secret"], "key": ids["key"]}
    assert out["rsa_public"].startswith("-----BEGIN PUBLIC KEY-----")
    # A binary payload's NUL byte (PostgreSQL's JSON cannot store one) is replaced.
    assert out["blob"] == "\ufffd\x01abc"
    assert out["pair_refs"] == {"private_key": ids["key"], "public_key": ids["secret"]}
    state = cloud(live_service, f"""print(json.dumps({{
    "meta": c.object_get("container", "{ids['bucket']}")["metadata"],
    "key": c.secret_payload("{ids['key']}").decode(),
    "made": c.object_get("secret", "{out['key_ref']}")["bit_length"],
    "rsa": [r["name"] for r in c.object_get("secret_container",
                                            "{out['rsa_container']}")["secret_refs"]]}}))""")
    assert state == {"meta": {"web": "index.html"}, "key": "0123456789abcdef", "made": 256,
                     "rsa": ["private_key", "public_key"]}

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    gone = cloud(live_service, f"""print(json.dumps([
    c.object_get("container", "{ids['bucket']}"), c.object_get("secret", "{ids['secret']}"),
    c.object_get("order", "{ids['aes']}"), c.object_get("secret_container", "{ids['pair']}"),
    c.object_get("secret_container", "{ids['generic']}")]))""")
    assert gone == [None] * 5


def test_a_container_needs_its_secrets(hc):
    _, stack_id = create(hc, """
heat_template_version: 2018-08-31
resources:
  generic:
    type: OS::Barbican::GenericContainer
    properties: {secrets: [{name: a, ref: "https://key-manager.simulated/v1/secrets/nope"}]}
""", disable_rollback=True)
    failed = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "Secret provided for 'a' doesn't exist" in failed.stack_status_reason


SWIFT_SIGNAL = """
heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 2}
resources:
  handle: {type: OS::Heat::SwiftSignalHandle}
  signal:
    type: OS::Heat::SwiftSignal
    properties: {handle: {get_resource: handle}, timeout: 120, count: {get_param: count}}
outputs:
  curl: {value: {get_attr: [handle, curl_cli]}}
  url: {value: {get_attr: [handle, endpoint]}}
  data: {value: {get_attr: [signal, data]}}
"""


def put_signal(url, body):
    import requests

    response = requests.put(url, data=body, timeout=30)
    assert response.status_code == 201, response.text


def test_swift_signal_through_the_handles_temp_url(hc, live_service):
    import json
    import time

    import requests

    _, stack_id = create(hc, SWIFT_SIGNAL)
    deadline = time.monotonic() + 60
    while hc.resources.get(stack_id, "handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    url = hc.resources.get(stack_id, "handle").attributes["endpoint"]
    assert "temp_url_sig=" in url and "temp_url_expires=" in url
    assert requests.put(url.replace("temp_url_sig=", "temp_url_sig=0"), data="{}",
                        timeout=30).status_code == 401
    put_signal(url, json.dumps({"status": "SUCCESS", "data": "first", "id": "a"}))
    assert hc.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    put_signal(url, "")  # an empty body is a success
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert out["curl"] == f"curl -i -X PUT '{out['url']}'"
    assert json.loads(out["data"]) == {"a": "first", "2": None}
    container = hc.resources.get(stack_id, "handle").physical_resource_id
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert cloud(live_service, f'print(json.dumps(c.object_get("container", "{container}")))') \
        is None

    _, stack_id = create(hc, SWIFT_SIGNAL, parameters={"count": 1}, disable_rollback=True)
    deadline = time.monotonic() + 60
    while hc.resources.get(stack_id, "handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    put_signal(hc.resources.get(stack_id, "handle").attributes["endpoint"],
               json.dumps({"status": "FAILURE", "reason": "disk full"}))
    failed = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "SwiftSignalFailure" in failed.stack_status_reason
    assert "disk full" in failed.stack_status_reason


BUCKET = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Site": {
    "Type": "AWS::S3::Bucket", "Properties": {
        "AccessControl": "PublicRead",
        "WebsiteConfiguration": {"IndexDocument": "index.html", "ErrorDocument": "oops.html"},
        "Tags": [{"Key": "team", "Value": "web"}]}}},
    "Outputs": {"Name": {"Value": {"Ref": "Site"}},
                "Domain": {"Value": {"Fn::GetAtt": ["Site", "DomainName"]}},
                "Url": {"Value": {"Fn::GetAtt": ["Site", "WebsiteURL"]}}}}


def test_a_cloudformation_bucket_is_a_container_with_heats_acls(hc, live_service):
    """AWS::S3::Bucket as Heat makes it: a Swift container named after the stack and the
    resource, its ACL, website documents and tags as the container's headers."""
    name, stack_id = create(hc, BUCKET)
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    bucket = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}["Site"]
    out = {o["output_key"]: o.get("output_value") for o in hc.stacks.get(stack_id).outputs}
    assert bucket.startswith(f"{name}-Site-") and out["Name"] == bucket
    assert out["Url"].endswith(f"/{bucket}") and bucket.split("-")[-1] not in ("", None)
    assert out["Domain"] and "/" not in out["Domain"]
    state = cloud(live_service, f"""print(json.dumps(c.object_get("container", "{bucket}")))""")
    assert (state["read_acl"], state["write_acl"]) == (".r:*", None)
    assert state["metadata"] == {"team": "web", "Web-Index": "index.html",
                                 "Web-Error": "oops.html"}
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    assert cloud(live_service, f"""print(json.dumps(c.object_get("container", "{bucket}")))""") \
        is None
    # PublicReadWrite: Heat asks Swift for a referrer in the write ACL; Swift refuses it.
    name, stack_id = create(hc, {**BUCKET, "Resources": {"Site": {
        "Type": "AWS::S3::Bucket", "Properties": {"AccessControl": "PublicReadWrite"}}}})
    stack = wait_stack(hc, stack_id, "CREATE_FAILED")
    assert "Referrers not allowed in write ACL: '.r:*'" in stack.stack_status_reason
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
