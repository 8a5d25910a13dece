"""Heat's tag filters of the stack list, through python-heatclient.

``tags`` (all of), ``tags_any`` (any of), ``not_tags`` (not all of) and
``not_tags_any`` (none of), each a comma-separated list, alone and together.
A script that lists by tag and deletes what it gets deletes only those.
"""
import json
import time
import uuid

import pytest
from heatclient import client as heat_client_module

pytestmark = pytest.mark.live

TEMPLATE = {"heat_template_version": "2016-10-14",
            "resources": {"n": {"type": "OS::Heat::None"}}}
TAGGED = {"web": ["prod", "web"], "db": ["prod", "db"], "dev": ["dev", "web"],
          "bare": [], "comma": ["prod,x"]}


@pytest.fixture(scope="module")
def tagged(live_service):
    tag = uuid.uuid4().hex[:6]
    info = live_service.issue_token(f"tags-{tag}", f"tags-{tag}")
    hc = heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])
    for name, tags in TAGGED.items():
        body = {"stack_name": name, "template": TEMPLATE}
        if name == "comma":
            body["tags"] = tags  # a list: one tag holding a comma
        elif tags:
            body["tags"] = ",".join(tags)
        hc.stacks.create(**body)
    return hc


def names(hc, **filters):
    return sorted(s.stack_name for s in hc.stacks.list(filters=filters))


@pytest.mark.parametrize("filters, expected", [
    ({"tags": "prod"}, ["db", "web"]),
    ({"tags": "prod,web"}, ["web"]),
    ({"tags": "prod,nothing"}, []),
    ({"tags_any": "db,dev"}, ["db", "dev"]),
    ({"not_tags": "prod,web"}, ["bare", "comma", "db", "dev"]),
    ({"not_tags_any": "prod,web"}, ["bare", "comma"]),
    ({"not_tags_any": "prod,web,dev,db"}, ["bare", "comma"]),
    ({"tags": "web", "not_tags": "dev"}, ["web"]),
    ({"tags_any": "web,db", "not_tags_any": "dev"}, ["db", "web"]),
    ({"tags": "nothing"}, []),
])
def test_each_tag_filter_lists_exactly_its_stacks(tagged, filters, expected):
    assert names(tagged, **filters) == expected


def test_the_stored_tags_are_shown_as_given(tagged):
    shown = {s.stack_name: s.tags for s in tagged.stacks.list()}
    assert shown["web"] == ["prod", "web"]
    assert shown["comma"] == ["prod,x"]
    assert not shown["bare"]


def test_list_by_tag_and_delete_deletes_only_those(live_service):
    tag = uuid.uuid4().hex[:6]
    info = live_service.issue_token(f"tagdel-{tag}", f"tagdel-{tag}")
    hc = heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])
    for name, tags in (("old1", "cleanup"), ("old2", "cleanup,x"), ("keep", "keep")):
        hc.stacks.create(stack_name=name, template=TEMPLATE, tags=tags)
    hc.stacks.create(stack_name="untagged", template=TEMPLATE)
    doomed = list(hc.stacks.list(filters={"tags": "cleanup"}))
    assert sorted(s.stack_name for s in doomed) == ["old1", "old2"]
    for stack in doomed:
        hc.stacks.delete(stack.id)
    deadline = time.monotonic() + 60
    while names(hc) != ["keep", "untagged"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert names(hc) == ["keep", "untagged"]


def test_owner_username_and_tenant_filters(live_service):
    tag = uuid.uuid4().hex[:6]
    info = live_service.issue_token(f"own-{tag}", f"own-{tag}")
    hc = heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])
    nested = {"heat_template_version": "2016-10-14",
              "resources": {"child": {"type": "OS::Heat::Stack",
                                      "properties": {"template": json.dumps(TEMPLATE)}}}}
    parent_id = hc.stacks.create(stack_name="parent", template=nested)["stack"]["id"]
    hc.stacks.create(stack_name="alone", template=TEMPLATE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(
            hc.stacks.list(filters={"owner_id": parent_id}, show_nested=True)):
        time.sleep(0.2)
    children = list(hc.stacks.list(filters={"owner_id": parent_id}, show_nested=True))
    assert len(children) == 1 and children[0].stack_name.startswith("parent-child-")
    assert names(hc, owner_id="not-a-uuid") == []
    assert names(hc, username=f"own-{tag}") == ["alone", "parent"]
    assert names(hc, username="somebody-else") == []
    assert names(hc, tenant=info["project_id"]) == ["alone", "parent"]
    assert names(hc, tenant="another-project") == []


def test_global_tenant_lists_every_project_for_a_cloud_admin_only(live_service):
    from heatclient import exc as heat_exc

    tag = uuid.uuid4().hex[:6]
    info = live_service.issue_token(f"gt-{tag}", f"gt-{tag}")
    hc = heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])
    hc.stacks.create(stack_name=f"mine-{tag}", template=TEMPLATE)
    try:
        list(hc.stacks.list(global_tenant=True))
        raise AssertionError("a member listed every project's stacks")
    except heat_exc.HTTPForbidden:
        pass
    admin_info = live_service.issue_token(f"gta-{tag}", f"gta-{tag}", role="admin")
    admin = heat_client_module.Client("1", endpoint=admin_info["endpoint"],
                                      token=admin_info["token"])
    assert f"mine-{tag}" not in [s.stack_name for s in admin.stacks.list()]
    assert f"mine-{tag}" in [s.stack_name for s in admin.stacks.list(global_tenant=True)]
