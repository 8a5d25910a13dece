"""OS::Nova::Server's admin_pass, config_drive, tags and update policies, through heatclient
on the live service: tags and the password change in place, a flavor change resizes
(the same server) or, with ``flavor_update_policy: REPLACE``, replaces it; the password
is never shown."""
import json
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import wait_deleted, wait_stack

pytestmark = pytest.mark.live

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  flavor: {type: string, default: m1.tiny}
  tags: {type: comma_delimited_list, default: "web,blue"}
  policy: {type: string, default: RESIZE}
  password: {type: string, hidden: true, default: First-Pass1}
resources:
  server:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: {get_param: flavor}
      admin_pass: {get_param: password}
      config_drive: true
      tags: {get_param: tags}
      flavor_update_policy: {get_param: policy}
      scheduler_hints: {different_host: []}
outputs:
  show: {value: {get_attr: [server, show]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    return live_service.heat()


def _server(hc, stack_id):
    stack = hc.stacks.get(stack_id)
    resource = hc.resources.get(stack_id, "server")
    return resource.physical_resource_id, stack.outputs[0]["output_value"]


def _update(hc, stack_id, **parameters):
    hc.stacks.update(stack_id, existing=True, parameters=parameters)
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    return _server(hc, stack_id)


def test_tags_password_and_flavor_policies(hc):
    stack_id = hc.stacks.create(stack_name=f"srv-opts-{uuid.uuid4().hex[:6]}",
                                template=TEMPLATE)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    first, show = _server(hc, stack_id)
    assert show["tags"] == ["web", "blue"] and show["config_drive"] == "True"
    assert "First-Pass1" not in json.dumps(show)

    same, show = _update(hc, stack_id, tags="web,green", password="Second-Pass2")
    assert same == first and show["tags"] == ["web", "green"]
    assert "Second-Pass2" not in json.dumps(show)

    same, show = _update(hc, stack_id, flavor="m1.small")  # RESIZE: in place
    assert same == first and show["flavor"] == "m1.small"

    replaced, show = _update(hc, stack_id, flavor="m1.medium", policy="REPLACE")
    assert replaced != first and show["flavor"] == "m1.medium"
    assert show["tags"] == ["web", "green"]  # the new server has the stack's tags

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_bad_update_policy_is_refused(hc):
    with pytest.raises(heat_exc.HTTPBadRequest) as caught:
        hc.stacks.validate(template=TEMPLATE, parameters={"policy": "REBUILD"})
    assert "flavor_update_policy" in caught.value.error["error"]["message"]
