"""A stack made from a CloudFormation-format template shows on the pages and in the API
(its AWS pseudo parameters, its update form) like a HOT one."""
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.models import RawTemplate, Resource, Stack

TEMPLATE = {"AWSTemplateFormatVersion": "2010-09-09", "Description": "cfn stack",
            "Parameters": {"Secret": {"Type": "String", "NoEcho": "true", "Default": "s3"}},
            "Resources": {"Group": {"Type": "AWS::EC2::SecurityGroup",
                                    "Properties": {"GroupDescription": "web"}}},
            "Outputs": {"Name": {"Value": {"Ref": "AWS::StackName"}}}}


@pytest.mark.django_db
def test_cfn_stack_pages_and_show():
    token, project = token_issue(username="cfnviewer", project_name="cfn-pages",
                                 role=Role.READER)
    raw = RawTemplate.objects.create(template=TEMPLATE, files={}, environment={})
    stack = Stack.objects.create(project=project, name="cfnstack", raw_template=raw,
                                 state="CREATE_COMPLETE", current_traversal=str(uuid.uuid4()))
    Resource.objects.create(stack=stack, name="Group", type="AWS::EC2::SecurityGroup",
                            state="CREATE_COMPLETE", properties_data={"GroupDescription": "web"})
    client = Client(HTTP_HOST="127.0.0.1")
    shown = client.get(f"/v1/{project.pk}/stacks/cfnstack/{stack.pk}",
                       HTTP_X_AUTH_TOKEN=token).json()["stack"]
    assert shown["parameters"]["AWS::StackName"] == "cfnstack"
    assert shown["parameters"]["AWS::Region"] == "ap-southeast-1"
    assert shown["parameters"]["Secret"] == "******"
    assert shown["description"] == shown["template_description"] == "cfn stack"
    (listed,) = client.get(f"/v1/{project.pk}/stacks", HTTP_X_AUTH_TOKEN=token).json()["stacks"]
    assert listed["description"] == "cfn stack"
    client.force_login(get_user_model().objects.get(username="cfnviewer"))
    client.get("/")
    for path in (f"/stacks/{stack.pk}/", f"/stacks/{stack.pk}/resources/Group",
                 f"/stacks/{stack.pk}/update"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.content[:300])
    assert b"AWS::EC2::SecurityGroup" in client.get(
        f"/stacks/{stack.pk}/resources/Group").content
    assert b"cfnstack" in client.get(f"/stacks/{stack.pk}/").content
