"""The owner records of the objects existing stacks hold: each live resource with a
physical id of a type that holds its object (``held_kind``), the oldest first; a later
resource naming an object an older one holds (an adopt before owners were recorded) is
left without a hold, so the engine never deletes that object through it."""
from django.db import migrations


def fill(apps, schema_editor):
    from stacks.ownership import held_key
    from stacks.resources.registry import plugin_or_base

    Resource = apps.get_model("stacks", "Resource")
    CloudHold = apps.get_model("stacks", "CloudHold")
    taken = set(CloudHold.objects.values_list("cloud", "kind", "physical_id"))
    rows = (Resource.objects.exclude(physical_resource_id="")
            .exclude(state="DELETE_COMPLETE").filter(stack__deleted_at__isnull=True)
            .order_by("created_at", "id").values_list("id", "stack_id", "type",
                                                      "physical_resource_id"))
    new = []
    for resource_id, stack_id, type_name, physical_id in rows.iterator():
        key = held_key(plugin_or_base(type_name))
        if key is None or (*key, physical_id) in taken:
            continue
        taken.add((*key, physical_id))
        new.append(CloudHold(cloud=key[0], kind=key[1], physical_id=physical_id,
                             resource_id=resource_id, stack_id=stack_id))
    CloudHold.objects.bulk_create(new, batch_size=500)


class Migration(migrations.Migration):

    dependencies = [("stacks", "0014_cloud_holds")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
