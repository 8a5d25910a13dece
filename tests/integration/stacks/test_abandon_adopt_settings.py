"""HEATWEB_ENABLE_STACK_ABANDON / _ADOPT off: Heat's NotSupported, and nothing changes."""
import uuid

import pytest
from django.conf import settings
from django.test import Client

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.models import RawTemplate, Stack


def _disabled(**flags):
    return {**settings.HEATWEB, **flags}


@pytest.mark.django_db
def test_abandon_and_adopt_refused_when_disabled(settings):
    settings.HEATWEB = _disabled(ENABLE_STACK_ABANDON=False, ENABLE_STACK_ADOPT=False)
    token, project = token_issue(username="abandoner", project_name="abandoning",
                                 role=Role.MEMBER)
    raw = RawTemplate.objects.create(template={"heat_template_version": "2016-10-14"},
                                     files={}, environment={})
    stack = Stack.objects.create(project=project, name="kept", raw_template=raw,
                                 state="CREATE_COMPLETE", current_traversal=str(uuid.uuid4()))
    client = Client(HTTP_HOST="127.0.0.1")
    base = f"/v1/{project.pk}"
    refused = client.delete(f"{base}/stacks/kept/{stack.pk}/abandon", HTTP_X_AUTH_TOKEN=token)
    assert refused.status_code == 400
    assert refused.json()["error"] == {"type": "NotSupported", "traceback": None,
                                       "message": "Stack Abandon is not supported."}
    stack.refresh_from_db()
    assert (stack.state, stack.deleted_at) == ("CREATE_COMPLETE", None)
    exported = client.get(f"{base}/stacks/kept/{stack.pk}/export", HTTP_X_AUTH_TOKEN=token)
    assert exported.status_code == 200 and exported.json()["name"] == "kept"
    adopt = client.post(f"{base}/stacks", {"stack_name": "adopted", "adopt_stack_data": {
        "template": {"heat_template_version": "2016-10-14"}, "resources": {}}},
        content_type="application/json", HTTP_X_AUTH_TOKEN=token)
    assert adopt.status_code == 400
    assert adopt.json()["error"]["message"] == "Stack Adopt is not supported."
    assert not Stack.objects.filter(name="adopted").exists()
