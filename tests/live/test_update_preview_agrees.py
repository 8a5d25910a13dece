"""The update preview (PUT .../preview) and the update ask one question: replaced or not.

Through python-heatclient against the live service, on the example server
with its image: a flavor change previews as an update in place and the
update resizes the server (same physical id); a new image location
replaces the image, and the server booted from it with it, in the preview
and in the update.
"""
import uuid

import pytest
from heatclient import client as heat_client_module

from tests.conftest import ROOT
from tests.live.test_stack_lifecycle import wait_stack

pytestmark = pytest.mark.live

TEMPLATE = (ROOT / "examples" / "server_with_image.yaml").read_text()
NEW_IMAGE = TEMPLATE.replace("http://images.example/cirros.qcow2",
                             "http://images.example/cirros-2.qcow2")


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"pva-{uuid.uuid4().hex[:6]}", f"pva-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def changes(hc, sid, **update):
    found = hc.stacks.preview_update(sid, **update)["resource_changes"]
    return {kind: sorted(r["resource_name"] for r in found[kind]) for kind in found}


def physical_ids(hc, sid):
    return {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}


def test_the_preview_says_what_the_update_then_does(hc):
    name = f"pva{uuid.uuid4().hex[:6]}"
    sid = hc.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, sid, "CREATE_COMPLETE")
    before = physical_ids(hc, sid)

    resize = changes(hc, sid, template=TEMPLATE, parameters={"flavor": "m1.tiny"})
    assert (resize["updated"], resize["replaced"], resize["unchanged"]) == \
        (["server"], [], ["image"]), resize
    hc.stacks.update(sid, template=TEMPLATE, parameters={"flavor": "m1.tiny"})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert physical_ids(hc, sid) == before

    swap = changes(hc, sid, template=NEW_IMAGE, parameters={"flavor": "m1.tiny"})
    assert (swap["replaced"], swap["updated"]) == (["image", "server"], []), swap
    hc.stacks.update(sid, template=NEW_IMAGE, parameters={"flavor": "m1.tiny"})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    after = physical_ids(hc, sid)
    assert after["image"] != before["image"] and after["server"] != before["server"]
