"""The owner records of a batch of creates in one statement (``holds_take_many``), with
``hold_take``'s answers: a rerun holds what it held, another resource's object is refused."""
import uuid

import pytest

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.models import CloudHold, RawTemplate, Resource, Stack
from stacks.ownership import ObjectHeld, holds_take_many
from stacks.resources.registry import get_plugin

SERVER = get_plugin("OS::Nova::Server")


@pytest.fixture
def servers():
    _, project = token_issue(username="holder", project_name="holding", role=Role.MEMBER)
    raw = RawTemplate.objects.create(template={}, files={}, environment={})
    stack = Stack.objects.create(project=project, name="s", raw_template=raw,
                                 state="CREATE_IN_PROGRESS", current_traversal=str(uuid.uuid4()))
    return [Resource.objects.create(stack=stack, name=f"s{i}", type="OS::Nova::Server",
                                    state="CREATE_IN_PROGRESS") for i in range(4)]


@pytest.mark.django_db
def test_a_batch_of_creates_holds_its_servers_in_one_statement(servers,
                                                               django_assert_num_queries):
    claims = [(res, SERVER, f"srv-{i}") for i, res in enumerate(servers[:3])]
    with django_assert_num_queries(1):
        holds_take_many(claims)
    assert dict(CloudHold.objects.values_list("physical_id", "resource_id")) == \
        {f"srv-{i}": res.pk for i, res in enumerate(servers[:3])}
    holds_take_many(claims)  # run again after a crash: the same holders, no error
    assert CloudHold.objects.count() == 3
    with pytest.raises(ObjectHeld, match="srv-1 is held by another resource"):
        holds_take_many([(servers[3], SERVER, "srv-1")])


@pytest.mark.django_db
def test_two_resources_of_one_batch_claiming_one_object_are_refused(servers):
    with pytest.raises(ObjectHeld, match="srv-x is held by another resource"):
        holds_take_many([(servers[0], SERVER, "srv-x"), (servers[1], SERVER, "srv-x")])
