"""Migration stacks/0015: the owner records of objects existing stacks hold, the oldest
resource first; a later one naming the same object (an adopt made before owners were
recorded) holds nothing, and types whose physical id names no object are left out."""
import importlib
import uuid

import pytest
from django.apps import apps

from heatweb.models import Role
from heatweb.tokens import token_issue
from stacks.cloud import cloud_key
from stacks.models import CloudHold, RawTemplate, Resource, Stack

fill = importlib.import_module("stacks.migrations.0015_fill_cloud_holds").fill


@pytest.mark.django_db
def test_the_migration_fills_one_holder_per_object_oldest_first():
    _, project = token_issue(username="filler", project_name="filling", role=Role.MEMBER)
    raw = RawTemplate.objects.create(template={}, files={}, environment={})
    stacks = [Stack.objects.create(project=project, name=f"s{i}", raw_template=raw,
                                   state="CREATE_COMPLETE", current_traversal=str(uuid.uuid4()))
              for i in range(2)]
    first = Resource.objects.create(stack=stacks[0], name="server", type="OS::Nova::Server",
                                    physical_resource_id="srv-1", state="CREATE_COMPLETE")
    second = Resource.objects.create(stack=stacks[1], name="server", type="OS::Nova::Server",
                                     physical_resource_id="srv-1", state="ADOPT_COMPLETE")
    net = Resource.objects.create(stack=stacks[1], name="net", type="OS::Neutron::Net",
                                  physical_resource_id="net-1", state="CREATE_COMPLETE")
    Resource.objects.create(stack=stacks[1], name="rand", type="OS::Heat::RandomString",
                            physical_resource_id="abc", state="CREATE_COMPLETE")
    Resource.objects.create(stack=stacks[1], name="gone", type="OS::Nova::Server",
                            physical_resource_id="srv-2", state="DELETE_COMPLETE")
    CloudHold.objects.all().delete()

    fill(apps, None)

    holds = {(h.kind, h.physical_id): h.resource_id for h in CloudHold.objects.all()}
    assert holds == {("server", "srv-1"): first.pk, ("network", "net-1"): net.pk}
    assert set(CloudHold.objects.values_list("cloud", flat=True)) == {cloud_key()}
    assert second.pk not in holds.values()
    fill(apps, None)  # run again: nothing twice
    assert CloudHold.objects.count() == 2
