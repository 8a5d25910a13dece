"""A corpus of templates written as Heat's guides write them (networks, routers, floating
IPs, security groups, flavors, key pairs, server groups, quotas, Keystone objects ...):
each validates, reaches CREATE_COMPLETE on the simulated cloud, and is deleted.
"""
import uuid
from pathlib import Path

import pytest
from heatclient import client as heat_client_module

from tests.live.test_stack_lifecycle import wait_deleted, wait_stack

pytestmark = pytest.mark.live

CORPUS = sorted((Path(__file__).parent / "corpus_rtypes").glob("*.yaml"))


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"corpus-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_a_guide_template_validates_creates_and_deletes(hc, path):
    template = path.read_text()
    validated = hc.stacks.validate(template=template)
    assert validated["Description"]
    name = f"c{uuid.uuid4().hex[:8]}"
    stack_id = hc.stacks.create(stack_name=name, template=template)["stack"]["id"]
    try:
        stack = wait_stack(hc, stack_id, "CREATE_COMPLETE", timeout=90)
        assert all(r.resource_status == "CREATE_COMPLETE" for r in hc.resources.list(stack_id))
        for output in stack.outputs or []:
            assert "output_error" not in output, output
    finally:
        hc.stacks.delete(stack_id)
        wait_deleted(hc, stack_id)
