"""Swift's and Barbican's types on the real cloud: a container, secrets, orders and
Barbican containers, each checked directly in Swift and Barbican with openstacksdk
and gone after delete."""
import base64
import uuid

import pytest

from tests.live.test_secrets_and_containers import BUCKET, TEMPLATE
from tests.openstack.conftest import wait_for, wait_stack

pytestmark = pytest.mark.openstack


def _uuid(href):
    return href.rsplit("/", 1)[-1]


def test_container_secrets_and_orders_in_swift_and_barbican(member, cloud):
    heat, tag = member.heat, f"sb{uuid.uuid4().hex[:6]}"
    key = base64.b64encode(b"0123456789abcdef").decode()
    stack_id = heat.stacks.create(stack_name=tag, template=TEMPLATE,
                                  parameters={"key": key})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}
    out = {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}

    head = cloud.object_store.get_container_metadata(ids["bucket"])
    assert head.read_ACL == ".r:*" and head.metadata == {"web": "index.html"}
    assert out["url"] == f"{cloud.object_store.get_endpoint()}/{ids['bucket']}"
    cloud.object_store.upload_object(container=ids["bucket"], name="index.html", data=b"hi")

    keys = cloud.key_manager
    secret = keys.get_secret(_uuid(ids["secret"]))
    assert (secret.name, secret.status, secret.secret_type) == ("db-password", "ACTIVE",
                                                                "opaque")
    assert out["decrypted"] == "s3cr3t"
    payload = keys.get(f"/secrets/{_uuid(ids['key'])}/payload",
                       headers={"Accept": "application/octet-stream"}).content
    assert payload == b"0123456789abcdef"
    order = keys.get_order(_uuid(ids["aes"]))
    assert order.status == "ACTIVE" and order.secret_ref == out["key_ref"]
    assert keys.get_secret(_uuid(out["key_ref"])).bit_length == 256
    rsa = keys.get_container(_uuid(out["rsa_container"]))
    assert sorted(r["name"] for r in rsa.secret_refs) == ["private_key", "public_key"]
    pair = keys.get_container(_uuid(ids["pair"]))
    assert pair.type == "rsa" and {r["name"]: r["secret_ref"] for r in pair.secret_refs} == \
        {"private_key": ids["key"], "public_key": ids["secret"]}
    assert out["refs"] == {"password": ids["secret"], "key": ids["key"]}

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert ids["bucket"] not in [c.name for c in cloud.object_store.containers()]  # purged
    for kind, href in (("secrets", ids["secret"]), ("secrets", ids["key"]),
                       ("orders", ids["aes"]), ("containers", ids["pair"]),
                       ("containers", ids["generic"]), ("containers", ids["cert"])):
        wait_for(lambda k=kind, h=href: keys.get(f"/{k}/{_uuid(h)}").status_code == 404,
                 f"{href} gone")


def test_swift_signal_signalled_by_curl_through_a_temp_url(member, cloud):
    import json
    import shlex
    import subprocess
    import time

    from tests.live.test_secrets_and_containers import SWIFT_SIGNAL

    heat, tag = member.heat, f"ss{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=SWIFT_SIGNAL)["stack"]["id"]
    deadline = time.monotonic() + 120
    while heat.resources.get(stack_id, "handle").resource_status != "CREATE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(1)
    handle = heat.resources.get(stack_id, "handle")
    container = handle.physical_resource_id
    assert cloud.object_store.get_container_metadata(container).versions_location == \
        f"{container}-versions"
    for body in (json.dumps({"status": "SUCCESS", "data": "up", "id": "web"}), ""):
        done = subprocess.run(shlex.split(handle.attributes["curl_cli"]) + ["--data-binary",
                                                                             body],
                              capture_output=True, text=True, timeout=60)
        assert " 201 " in done.stdout.splitlines()[0], done.stdout
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    data = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert json.loads(data["data"]) == {"web": "up", "2": None}
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    names = [c.name for c in cloud.object_store.containers()]
    assert container not in names and f"{container}-versions" not in names


def test_a_cloudformation_bucket_is_a_swift_container(member, cloud):
    heat, tag = member.heat, f"s3{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=BUCKET)["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    bucket = {r.resource_name: r.physical_resource_id
              for r in heat.resources.list(stack_id)}["Site"]
    out = {o["output_key"]: o["output_value"] for o in heat.stacks.get(stack_id).outputs}
    assert bucket.startswith(f"{tag}-Site-") and out["Url"] == \
        f"{cloud.object_store.get_endpoint()}/{bucket}"
    head = cloud.object_store.get_container_metadata(bucket)
    assert head.read_ACL == ".r:*" and not head.write_ACL
    assert {k.lower(): v for k, v in head.metadata.items()} == {
        "team": "web", "web-index": "index.html", "web-error": "oops.html"}
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert bucket not in [c.name for c in cloud.object_store.containers()]
