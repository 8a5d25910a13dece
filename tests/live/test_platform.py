"""Tokens, meta endpoints and the OpenAPI schema against the live service."""
import uuid

import pytest
import requests
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

pytestmark = pytest.mark.live

TEMPLATE = """
heat_template_version: rocky
description: validated through python-heatclient
parameter_groups:
  - label: sizing
    parameters: [size]
parameters:
  size:
    type: number
    label: Size
    description: how many
    default: 3
    constraints:
      - range: {min: 1, max: 10}
        description: between 1 and 10
  password: {type: string, hidden: true}
resources:
  r: {type: OS::Heat::RandomString, properties: {length: {get_param: size}}}
"""


@pytest.fixture(scope="module")
def info(live_service):
    return live_service.issue_token(f"plat-{uuid.uuid4().hex[:6]}", f"plat-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def hc(info):
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def test_issue_token_prints_one_line_or_json(live_service):
    done = live_service.manage("issue_token", "plain-user", "--project", "plain")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) >= 32
    info = live_service.issue_token("plain-user", "plain", role="reader")
    assert set(info) >= {"token", "project_id", "endpoint"}
    assert info["endpoint"] == f"{live_service.url}/v1/{info['project_id']}"


def test_validate_through_heatclient(hc):
    result = hc.stacks.validate(template=TEMPLATE)
    assert result["Description"] == "validated through python-heatclient"
    size = result["Parameters"]["size"]
    assert size == {"Type": "Number", "Description": "how many", "Label": "Size",
                    "NoEcho": "false", "Default": 3, "MinValue": 1,
                    "MaxValue": 10, "ConstraintDescription": "between 1 and 10"}
    assert result["Parameters"]["password"]["NoEcho"] == "true"
    assert result["ParameterGroups"] == [{"label": "sizing", "parameters": ["size"]}]
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.validate(template=TEMPLATE.replace("RandomString", "RandomStrung"))
    assert error.value.error["error"]["type"] == "ResourceTypeNotFound"


def test_template_versions_resource_types_build_info(hc):
    versions = {v.version: v for v in hc.template_versions.list()}
    assert "heat_template_version.2013-05-23" in versions
    assert "heat_template_version.2021-04-16" in versions
    assert versions["heat_template_version.2016-10-14"].aliases == ["heat_template_version.newton"]
    functions = {f.functions for f in hc.template_versions.get("heat_template_version.2016-10-14")}
    assert {"get_param", "get_attr", "str_replace", "if"} <= functions
    # As Heat's table: condition functions only when asked for, removed ones never.
    assert not {"equals", "contains", "Fn::Join"} & functions
    with_conditions = {f.functions for f in hc.template_versions.get(
        "heat_template_version.2016-10-14", with_condition_func=True)}
    assert with_conditions - functions == {"equals", "not", "and", "or"}
    assert {"list_join", "Ref", "Fn::Join"} <= {
        f.functions for f in hc.template_versions.get("heat_template_version.2013-05-23")}
    types = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Heat::None", "OS::Heat::Value", "OS::Heat::RandomString",
            "OS::Heat::TestResource", "OS::Heat::Stack", "OS::Nova::Server",
            "OS::Glance::Image"} <= types
    server = hc.resource_types.get("OS::Nova::Server")
    assert server["properties"]["flavor"]["required"] is True  # image: not with a boot volume
    assert server["properties"]["flavor"]["update_allowed"] is True
    assert "first_address" in server["attributes"]
    assert hc.build_info.build_info()["api"]["revision"]


def test_revoked_token_is_refused(live_service):
    info = live_service.issue_token(f"rv-{uuid.uuid4().hex[:6]}", f"rv-{uuid.uuid4().hex[:6]}")
    headers = {"X-Auth-Token": info["token"]}
    assert requests.get(info["endpoint"] + "/stacks", headers=headers).status_code == 200
    assert live_service.manage("revoke_token", info["token"]).returncode == 0
    resp = requests.get(info["endpoint"] + "/stacks", headers=headers)
    assert resp.status_code == 401
    assert resp.json()["error"]["type"] == "NotAuthenticated"


def test_only_the_health_check_is_anonymous(live_service, info):
    assert requests.get(live_service.url + "/healthz").json() == {"status": "ok"}
    for path in ("/stacks", "/validate", "/resource_types", "/build_info"):
        resp = requests.get(info["endpoint"] + path)
        assert resp.status_code == 401, path
        assert resp.json()["title"] == "Unauthorized"


def test_unknown_path_is_a_heat_404(live_service, info):
    resp = requests.get(info["endpoint"] + "/nothing/here",
                        headers={"X-Auth-Token": info["token"]})
    assert resp.status_code == 404
    assert resp.json()["error"]["traceback"] is None


def test_openapi_schema_documents_the_api(live_service):
    schema = requests.get(live_service.url + "/api/schema/?format=json").json()
    paths = schema["paths"]
    assert "/v1/{tenant_id}/stacks" in paths
    action = paths["/v1/{tenant_id}/stacks/{stack_name}/{stack_id}/actions"]["post"]
    assert set(action["responses"]) >= {"200", "400", "401", "403", "404", "409"}
    body = schema["components"]["schemas"]["StackAction"]["properties"]
    assert {"lock", "unlock", "suspend", "resume", "check", "reason"} <= set(body)
    assert set(schema["components"]["schemas"]["LevelEnum"]["enum"]) == {"all", "stacks"}
    assert "/v1/{tenant_id}/validate" in paths
    assert schema["components"]["securitySchemes"]["X-Auth-Token"]["in"] == "header"
    error = schema["components"]["schemas"]["HeatErrorDetail"]["properties"]
    assert set(error) == {"type", "message", "traceback"}
