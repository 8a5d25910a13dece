"""Heat's template semantics through python-heatclient against the live service: which
one-key maps are functions, Python allowed_pattern, the parent environment in child
stacks and group members, get_attr paths, output_error and implicit dependencies."""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import create, hc, wait_stack  # noqa: F401

pytestmark = pytest.mark.live


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


WORKFLOW_DATA = """
heat_template_version: 2016-10-14
resources:
  workflow_like:
    type: OS::Heat::Value
    properties:
      type: json
      value:
        tasks:
          get_vm_id:
            action: nova.servers_get
            publish: {vm_id: "<% task(get_vm_id).result.id %>"}
          step: {get_vm_id: {on-success: done}}
        input: {get_input: server}
outputs:
  value: {value: {get_attr: [workflow_like, value]}}
"""


def test_one_key_maps_that_are_not_functions_are_data(hc):
    hc.stacks.validate(template=WORKFLOW_DATA)
    _, sid = create(hc, WORKFLOW_DATA)
    value = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))["value"]
    assert value["input"] == {"get_input": "server"}
    assert value["tasks"]["step"] == {"get_vm_id": {"on-success": "done"}}


def test_2013_05_23_has_list_join_and_cfn_functions(hc):
    template = """
heat_template_version: 2013-05-23
parameters:
  names: {type: comma_delimited_list, default: "a,b"}
resources:
  first: {type: OS::Heat::RandomString, properties: {length: 8}}
  joined:
    type: OS::Heat::Value
    properties:
      value:
        list_join: ["-", {get_param: names}]
  cfn:
    type: OS::Heat::Value
    properties:
      value:
        Fn::Join: [":", [{Ref: first}, {Fn::Select: [1, {Ref: names}]}]]
outputs:
  joined: {value: {get_attr: [joined, value]}}
  cfn: {value: {get_attr: [cfn, value]}}
  first: {value: {get_resource: first}}
"""
    _, sid = create(hc, template)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["joined"] == "a-b"
    assert outputs["cfn"] == f"{outputs['first']}:b"
    # Ref made "cfn" wait for "first", as a get_resource does.
    assert hc.resources.get(sid, "first").required_by == ["cfn"]


def test_a_removed_function_is_refused_as_heat_refuses_it(hc):
    template = {"heat_template_version": "2016-10-14", "outputs": {
        "o": {"value": {"Fn::Join": ["", ["a"]]}}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.validate(template=template)
    body = error.value.error["error"]
    assert body["type"] == "InvalidTemplateVersion"
    assert "The function Fn::Join is not supported in this version of HOT" in body["message"]


PASSWORD = {"heat_template_version": "2016-10-14", "parameters": {"password": {
    "type": "string", "hidden": True,
    "constraints": [{"allowed_pattern": "(?=.*[0-9])(?=.*[a-z])(?!.*(.)\\1)[a-z0-9]{8,}",
                     "description": "8 letters and digits, both, no letter twice in a row"}]}},
    "resources": {"v": {"type": "OS::Heat::None"}}}


def test_python_allowed_pattern_with_lookarounds_and_backreferences(hc):
    _, sid = create(hc, PASSWORD, parameters={"password": "abc12345"})
    wait_stack(hc, sid, "CREATE_COMPLETE")
    for bad in ("abcdefgh", "abbc1234", "ab1"):
        with pytest.raises(heat_exc.HTTPBadRequest) as error:
            create(hc, PASSWORD, parameters={"password": bad})
        assert "8 letters and digits" in error.value.error["error"]["message"]


MEMBER = """
heat_template_version: 2016-10-14
parameters:
  flavor: {type: string}
  index: {type: string, default: "none"}
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {list_join: ["/", [{get_param: flavor}, {get_param: index}]]}
outputs:
  value: {value: {get_attr: [value, value]}}
"""

REGISTRY_PARENT = """
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: My::Member
        properties: {index: "%index%"}
  nested:
    type: My::Wrapper
outputs:
  first: {value: {get_attr: [group, resource.0.value]}}
  values: {value: {get_attr: [group, value]}}
  nested: {value: {get_attr: [nested, inner]}}
  nested_resource: {value: {get_attr: [nested, resource.inner.value]}}
  nested_path: {value: {get_attr: [nested, resource.inner, value]}}
"""

WRAPPER = """
heat_template_version: 2016-10-14
resources:
  inner:
    type: My::Member
outputs:
  inner: {value: {get_attr: [inner, value]}}
"""

ENVIRONMENT = {"resource_registry": {"My::Member": "member.yaml", "My::Wrapper": "wrapper.yaml"},
               "parameter_defaults": {"flavor": "m1.small"}}
FILES = {"member.yaml": MEMBER, "wrapper.yaml": WRAPPER}


def test_the_parent_environment_reaches_nested_stacks_and_group_members(hc):
    hc.stacks.validate(template=REGISTRY_PARENT, environment=ENVIRONMENT, files=FILES)
    _, sid = create(hc, REGISTRY_PARENT, environment=ENVIRONMENT, files=FILES)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["first"] == "m1.small/0"
    assert outputs["values"] == ["m1.small/0", "m1.small/1"]
    # A nested stack's own nested stack: the registry and the defaults reach it too.
    assert outputs["nested"] == "m1.small/none"
    # resource.<name>.<attribute> of a template resource: a resource of its stack.
    assert outputs["nested_resource"] == outputs["nested_path"] == "m1.small/none"
    child = hc.resources.get(sid, "group").physical_resource_id
    assert hc.stacks.environment(child)["resource_registry"]["My::Member"] == "member.yaml"


def test_an_unmapped_member_type_is_refused_at_validation(hc):
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.validate(template=REGISTRY_PARENT, files=FILES)
    assert error.value.error["error"]["type"] == "ResourceTypeNotFound"


OUTPUT_ERROR = """
heat_template_version: 2016-10-14
resources:
  v:
    type: OS::Heat::Value
    properties: {value: "a,b"}
outputs:
  fine: {value: {get_attr: [v, value]}}
  broken: {value: {str_split: [",", {get_attr: [v, value]}, 7]}}
"""


def test_an_output_that_cannot_be_resolved_gets_output_error(hc):
    _, sid = create(hc, OUTPUT_ERROR)
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    by_key = {o["output_key"]: o for o in stack.outputs}
    assert by_key["fine"]["output_value"] == "a,b"
    assert by_key["broken"]["output_value"] is None
    assert "7" in by_key["broken"]["output_error"]
    shown = hc.stacks.output_show(sid, "broken")["output"]
    assert shown["output_value"] is None and shown["output_error"]


NESTED_ERROR = """
heat_template_version: 2015-10-15
resources:
  parent: {type: 1.yaml}
outputs:
  a: {value: {get_attr: [parent, a]}, description: parent a}
  b: {value: {get_attr: [parent, b]}, description: parent b}
"""
CHILD_ERROR = """
heat_template_version: 2015-10-15
resources:
  v: {type: OS::Heat::Value, properties: {value: a}}
outputs:
  a: {value: {get_attr: [v, value]}}
  b: {value: {get_param: foo}}
"""


def test_a_nested_output_that_cannot_be_resolved_is_the_parents_output_error(hc):
    """As heat-tempest-plugin's test_output_error_nested: Heat resolves outputs lazily, so
    a child's output naming a parameter it lacks fails neither create nor update."""
    files = {"1.yaml": CHILD_ERROR}
    _, sid = create(hc, NESTED_ERROR, files=files)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    hc.stacks.update(sid, template=NESTED_ERROR, files=files)
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert sorted(stack.outputs, key=lambda o: o["output_key"]) == [
        {"output_key": "a", "output_value": "a", "description": "parent a"},
        {"output_key": "b", "output_value": None, "description": "parent b",
         "output_error": "Error in parent output b: The Parameter (foo) was not provided."}]
    assert "_output_errors" not in hc.resources.get(sid, "parent").attributes


NETWORK = """
heat_template_version: 2016-10-14
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.20.0.0/24}
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}}
  server:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: m1.tiny
      networks: [{network: {get_resource: net}}]
outputs:
  port_ips: {value: {get_attr: [port, fixed_ips]}}
"""


def test_a_port_and_a_server_wait_for_their_networks_subnet(hc):
    _, sid = create(hc, NETWORK)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert sorted(hc.resources.get(sid, "subnet").required_by) == ["port", "server"]
    assert outputs["port_ips"] and outputs["port_ips"][0]["ip_address"].startswith("10.20.0.")
    hc.stacks.delete(sid)
    wait_stack(hc, sid, "DELETE_COMPLETE")


ASG_OF_MAPPED = """
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 2
      max_size: 3
      resource:
        type: My::Member
        properties: {index: member}
outputs:
  values: {value: {get_attr: [group, outputs_list, value]}}
"""


def test_autoscaling_group_members_of_a_mapped_type_get_the_environment(hc):
    _, sid = create(hc, ASG_OF_MAPPED, environment=ENVIRONMENT, files=FILES)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["values"] == ["m1.small/member", "m1.small/member"]


METADATA = """
heat_template_version: 2016-10-14
parameters:
  port: {type: number, default: 8080}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 12}
  config:
    type: OS::Heat::None
    metadata:
      app:
        port: {get_param: port}
        secret_ref: {get_resource: secret}
        secret: {get_attr: [secret, value]}
      tags: [web, {get_param: "OS::stack_name"}]
  plain:
    type: OS::Heat::None
"""


def test_a_resources_template_metadata_is_resolved_and_kept_as_heat_keeps_it(hc):
    name, sid = create(hc, METADATA)
    wait_stack(hc, sid, "CREATE_COMPLETE")
    secret = hc.resources.get(sid, "secret")
    metadata = hc.resources.metadata(sid, "config")
    assert metadata["app"]["port"] == 8080
    assert metadata["app"]["secret_ref"] == secret.physical_resource_id
    assert isinstance(metadata["app"]["secret"], str) and len(metadata["app"]["secret"]) == 12
    assert metadata["tags"] == ["web", name]
    assert hc.resources.metadata(sid, "plain") == {}
    # A change of only the metadata (and a parameter it uses) is kept by the update.
    changed = METADATA.replace("tags: [web,", "tags: [api,").replace(
        "    properties: {length: 12}\n", "    properties: {length: 12}\n"
        "    metadata: {rotated: true}\n")
    hc.stacks.update(sid, template=changed, parameters={"port": 9090})
    wait_stack(hc, sid, "UPDATE_COMPLETE")
    metadata = hc.resources.metadata(sid, "config")
    assert metadata["app"]["port"] == 9090
    assert metadata["tags"] == ["api", name]
    assert metadata["app"]["secret_ref"] == secret.physical_resource_id
    assert hc.resources.metadata(sid, "secret") == {"rotated": True}
    # As Heat: a resource whose metadata alone changed is updated (its events say so), in
    # place (the string is the same one); one whose metadata did not change is not.
    assert hc.resources.get(sid, "secret").physical_resource_id == \
        secret.physical_resource_id
    for resource in ("config", "secret"):
        states = [(e.resource_status, e.resource_status_reason)
                  for e in hc.events.list(sid, resource_name=resource)]
        assert ("UPDATE_IN_PROGRESS", "state changed") in states, (resource, states)
        assert ("UPDATE_COMPLETE", "state changed") in states, (resource, states)
    assert not [e for e in hc.events.list(sid, resource_name="plain")
                if e.resource_status.startswith("UPDATE")]


AUTOHEALING_MEMBER = """
heat_template_version: 2017-02-24
parameters:
  tag: {type: string}
resources:
  value: {type: OS::Heat::Value, properties: {value: {get_param: tag}}}
  container: {type: OS::Zun::Container}
"""
AUTOHEALING_GROUP = """
heat_template_version: 2017-02-24
resources:
  servers:
    type: OS::Heat::AutoScalingGroup
    properties:
      resource: {type: member.yaml, properties: {tag: t}}
      min_size: 1
      max_size: 2
"""


def test_a_nested_templates_missing_service_is_refused_at_create_as_heat_refuses_it(hc):
    """Heat's create validates the nested stacks (``validate_nested_stack``): an
    autohealing group whose member template holds a Zun container is a 400 on a cloud
    without Zun, naming the path. Heat's /validate does not look into them."""
    files = {"member.yaml": AUTOHEALING_MEMBER}
    hc.stacks.validate(template=AUTOHEALING_GROUP, files=files)
    name = f"s{uuid.uuid4().hex[:10]}"
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.create(stack_name=name, template=AUTOHEALING_GROUP, files=files)
    body = error.value.error["error"]
    assert body["type"] == "StackValidationFailed"
    assert body["message"].startswith(
        "ResourceTypeUnavailable: resources.servers<nested_stack>.resources.m0<member.yaml>: "
        "HEAT-E99001 Service zun is not available for resource type OS::Zun::Container"), body
    assert not [s for s in hc.stacks.list() if s.stack_name == name]

    # A template resource's template with a type nobody has: Heat's path, nothing stored.
    parent = """
heat_template_version: 2017-02-24
resources:
  direct: {type: member.yaml, properties: {tag: t}}
"""
    unknown = {"member.yaml": AUTOHEALING_MEMBER.replace("OS::Zun::Container", "My::Nothing")}
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.create(stack_name=name, template=parent, files=unknown)
    assert error.value.error["error"]["message"] == (
        "ResourceTypeNotFound: resources.direct<member.yaml>: "
        "The Resource Type (My::Nothing) could not be found."), error.value.error
    assert not [s for s in hc.stacks.list() if s.stack_name == name]


FACADE_CHILD = """
heat_template_version: 2016-10-14
resources:
  settings:
    type: OS::Heat::Value
    properties: {type: json, value: {resource_facade: metadata}}
outputs:
  settings: {value: {get_attr: [settings, value]}}
"""
FACADE_PARENT = """
heat_template_version: 2016-10-14
parameters:
  port: {type: number, default: 8080}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 10}
  member:
    type: child.yaml
    metadata:
      port: {get_param: port}
      secret_ref: {get_resource: secret}
      secret: {get_attr: [secret, value]}
outputs:
  settings: {value: {get_attr: [member, settings]}}
"""


def test_resource_facade_metadata_is_the_parents_resolved_metadata(hc):
    """As Heat: ``resource_facade: metadata`` in a child stack answers its parent
    resource's metadata resolved as the parent resolves it, get_resource and get_attr of
    the parent's resources included (they were ``{}`` before)."""
    _, sid = create(hc, FACADE_PARENT, files={"child.yaml": FACADE_CHILD})
    settings = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))["settings"]
    secret = hc.resources.get(sid, "secret")
    assert settings == {"port": 8080, "secret_ref": secret.physical_resource_id,
                        "secret": secret.attributes["value"]}, settings
