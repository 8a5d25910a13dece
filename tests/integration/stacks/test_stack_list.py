"""The stack list reads summaries from SQL; they must say what the stack's show says."""
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.models import RawTemplate, Stack

DESCRIPTIONS = ["123", "true", "null", 'say "hi"\né', 7, None, ""]
SUMMARY_KEYS = ("id", "stack_name", "links", "description", "stack_status",
                "stack_status_reason", "creation_time", "updated_time", "deletion_time",
                "stack_owner", "parent", "stack_user_project_id", "project", "tags", "locked",
                "lock_level", "lock_allow", "lock_reason", "locked_by", "locked_at", "lock_expires_at",
                "suspended")


@pytest.mark.django_db
def test_the_list_shows_each_stack_as_its_show_does():
    token, project = token_issue(username="lister", project_name="listing", role=Role.READER)
    owner = get_user_model().objects.get(username="lister")
    templates = [{"heat_template_version": "2018-08-31", "description": d, "resources": {}}
                 for d in DESCRIPTIONS] + [{"heat_template_version": "2018-08-31"}]
    for i, template in enumerate(templates):
        raw = RawTemplate.objects.create(template=template, files={}, environment={})
        Stack.objects.create(project=project, name=f"s{i}", raw_template=raw, user=owner,
                             state="CREATE_COMPLETE", tags=["a", "b"] if i == 1 else [],
                             current_traversal=str(uuid.uuid4()))
    now = timezone.now()
    Stack.objects.filter(name="s2").update(
        state="LOCK_COMPLETE", lock_level="all", lock_reason="maintenance", locked_by=owner,
        locked_at=now, lock_expires_at=now)
    Stack.objects.filter(name="s3").update(state="UNLOCK_COMPLETE",
                                           pre_lock_state="SUSPEND_COMPLETE")
    client = Client(HTTP_HOST="127.0.0.1")
    listed = client.get(f"/v1/{project.pk}/stacks?sort_keys=stack_name&sort_dir=asc",
                        HTTP_X_AUTH_TOKEN=token).json()["stacks"]
    assert [s["stack_name"] for s in listed] == [f"s{i}" for i in range(len(templates))]
    for summary, template in zip(listed, templates):
        assert summary["description"] == template.get("description", "")
        assert tuple(summary) == SUMMARY_KEYS
        shown = client.get(f"/v1/{project.pk}/stacks/{summary['stack_name']}/{summary['id']}",
                           HTTP_X_AUTH_TOKEN=token).json()["stack"]
        assert {key: shown[key] for key in SUMMARY_KEYS} == summary
    assert listed[1]["tags"] == ["a", "b"]
    assert listed[2]["locked"] is True and listed[2]["locked_by"] == "lister"
    assert listed[0]["stack_owner"] == "lister"
    assert [s["suspended"] for s in listed[:4]] == [False, False, False, True]
