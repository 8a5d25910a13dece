"""Immutable parameters (seed 003, Heat's ``immutable``) through python-heatclient."""
import time
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

pytestmark = pytest.mark.live

MESSAGE = "The following parameters are immutable and may not be updated: "


def template(*, flavor_default="small", size_flag="immutable: true", secret_default="s3cret",
             extra=""):
    return f"""
heat_template_version: 2016-10-14
parameters:
  flavor: {{type: string, default: {flavor_default}, immutable: true}}
  size: {{type: number, default: 1, {size_flag}}}
  label: {{type: string, default: first}}
  password: {{type: string, default: {secret_default}, hidden: true, updatable: false}}
  {extra}
resources:
  v:
    type: OS::Heat::Value
    properties:
      value: {{list_join: ["-", [{{get_param: flavor}}, {{get_param: label}}]]}}
outputs:
  value: {{value: {{get_attr: [v, value]}}}}
  size: {{value: {{get_param: size}}}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"imm-{uuid.uuid4().hex[:6]}", f"imm-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def wait(hc, sid, status, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = hc.stacks.get(sid)
        if stack.stack_status == status:
            return stack
        assert not stack.stack_status.endswith("FAILED"), stack.stack_status_reason
        time.sleep(0.2)
    raise AssertionError(f"{sid} never reached {status}")


@pytest.fixture
def stack(hc):
    name = f"imm{uuid.uuid4().hex[:8]}"
    sid = hc.stacks.create(stack_name=name, template=template(),
                           parameters={"size": "5", "label": "one"})["stack"]["id"]
    return wait(hc, sid, "CREATE_COMPLETE")


def snapshot(hc, stack):
    current = hc.stacks.get(stack.id)
    return (current.stack_status, current.parameters, hc.stacks.template(stack.id),
            len(list(hc.events.list(stack.id))),
            [(r.resource_name, r.resource_status) for r in hc.resources.list(stack.id)])


def refused(hc, stack, names, **update):
    before = snapshot(hc, stack)
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.update(stack.id, **update)
    body = error.value.error["error"]
    assert body["type"] == "ImmutableParameterModified"
    assert body["message"] == MESSAGE + ", ".join(names)
    assert snapshot(hc, stack) == before
    return body


def outputs(stack):
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def test_changed_immutable_value_is_refused_and_nothing_changes(hc, stack):
    refused(hc, stack, ["flavor"], template=template(),
            parameters={"flavor": "large", "size": "5", "label": "one"})


def test_same_value_and_typed_compare_are_accepted(hc, stack):
    hc.stacks.update(stack.id, template=template(),
                     parameters={"flavor": "small", "size": 5.0, "label": "two"})
    updated = wait(hc, stack.id, "UPDATE_COMPLETE")
    assert outputs(updated) == {"value": "small-two", "size": 5}


def test_patch_omitting_immutable_is_accepted(hc, stack):
    hc.stacks.update(stack.id, existing=True, parameters={"label": "patched"})
    updated = wait(hc, stack.id, "UPDATE_COMPLETE")
    assert outputs(updated)["value"] == "small-patched"
    assert updated.parameters["size"] == "5"


def test_put_omitting_a_set_immutable_falls_back_to_default_and_is_refused(hc, stack):
    refused(hc, stack, ["size"], template=template(), parameters={"label": "one"})


def test_clear_parameters_with_a_different_default_is_refused(hc, stack):
    refused(hc, stack, ["size"], existing=True, clear_parameters=["size"])


def test_changed_default_is_refused(hc, stack):
    refused(hc, stack, ["flavor"], template=template(flavor_default="large"),
            parameters={"size": "5", "label": "one"})


def test_several_names_in_one_message_and_hidden_value_not_shown(hc, stack):
    body = refused(hc, stack, ["flavor", "size", "password"], template=template(),
                   parameters={"flavor": "large", "size": "6", "password": "other-pw",
                               "label": "one"})
    assert "other-pw" not in str(body) and "s3cret" not in str(body)


def test_flag_toggles(hc, stack):
    # Dropping the flag while changing the value: the new template decides.
    hc.stacks.update(stack.id, template=template(size_flag="immutable: false"),
                     parameters={"size": "7", "label": "one"})
    assert outputs(wait(hc, stack.id, "UPDATE_COMPLETE"))["size"] == 7
    # Adding it back while changing the value is refused.
    refused(hc, stack, ["size"], template=template(size_flag="updatable: false"),
            parameters={"size": "8", "label": "one"})


def test_update_preview_is_refused_too(hc, stack):
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.preview_update(stack.id, template=template(),
                                 parameters={"flavor": "large", "size": "5"})
    assert error.value.error["error"]["type"] == "ImmutableParameterModified"


def test_validate_answers_heats_parameter_keys(hc):
    """Heat's validate has no immutability key (heat-tempest-plugin compares the whole
    answer): immutability shows in the template and is enforced at update."""
    result = hc.stacks.validate(template=template())
    heat_keys = {"Type", "Default", "NoEcho", "AllowedValues", "AllowedPattern", "MaxLength",
                 "MinLength", "MaxValue", "MinValue", "Step", "Offset", "Description",
                 "ConstraintDescription", "Label", "CustomConstraint", "Value", "Tags"}
    for name in ("flavor", "password", "label"):
        assert set(result["Parameters"][name]) <= heat_keys
    assert result["Parameters"]["password"]["NoEcho"] == "true"


def test_contradicting_flags_are_a_template_error(hc):
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.validate(template=template(size_flag="immutable: true, updatable: true"))
    assert "says both" in error.value.error["error"]["message"]


CHILD = """
heat_template_version: 2016-10-14
parameters:
  zone: {type: string, immutable: true}
resources:
  r: {type: OS::Heat::Value, properties: {value: {get_param: zone}}}
"""


def test_nested_stack_parameter_passed_down_is_refused_before_anything_runs(hc):
    def parent(zone):
        return {"heat_template_version": "2016-10-14",
                "resources": {"child": {"type": "child.yaml", "properties": {"zone": zone}}}}

    sid = hc.stacks.create(stack_name=f"nest{uuid.uuid4().hex[:8]}", template=parent("a"),
                           files={"child.yaml": CHILD})["stack"]["id"]
    stack = wait(hc, sid, "CREATE_COMPLETE")
    refused(hc, stack, ["zone"], template=parent("b"), files={"child.yaml": CHILD})
    hc.stacks.update(sid, template=parent("a"), files={"child.yaml": CHILD})
    wait(hc, sid, "UPDATE_COMPLETE")
