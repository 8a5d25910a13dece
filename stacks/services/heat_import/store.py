"""Storing one planned stack tree: rows as Heat had them, with no call to the cloud.

Everything of a root stack and its nested stacks is written in one
transaction: stacks (Heat's ids kept, so a second import finds them),
templates, resources with their physical ids and data, the owner records
an adopt makes, events (Heat's history, with its times), software configs
and deployments, and the ``StackConsent`` the root waits on.
"""
from datetime import timezone as tz

from django.contrib.auth import get_user_model
from django.db import transaction

from heatweb.keystone_models import KeystoneAccount
from stacks.models import Event, RawTemplate, Resource, Stack, StackConsent
from stacks.ownership import holds_record_rows
from stacks.resources import stack_user

# What stores a stack's software configs and deployments (``software_import(stack,
# resources, source)``): registered by the softwareconfig app at start, as the stacks'
# services import nothing of it.
_software_writers = []


def software_writer_register(writer):
    if writer not in _software_writers:
        _software_writers.append(writer)


def aware(value):
    """Heat stores naive UTC times."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=tz.utc)


def owner_of(row):
    """The user who owns a Heat stack here: the Keystone user of its trust, else the user
    of its name, else None (an admin of its project then re-authorises it)."""
    if row.get("trustor_user_id"):
        account = KeystoneAccount.objects.filter(keystone_user_id=row["trustor_user_id"]) \
            .select_related("user").first()
        if account is not None:
            return account.user
    if row.get("username"):
        return get_user_model().objects.filter(username=row["username"]).first()
    return None


def store_tree(plan, source):
    """Write ``plan`` (a TreePlan to import) in one transaction; the root Stack."""
    owner = owner_of(plan.root)
    with transaction.atomic():
        stacks = {}
        for stack_plan in plan.stacks:
            stacks[stack_plan.row["id"]] = _store_stack(stack_plan, plan.project, owner,
                                                        stacks, source)
        root = stacks[plan.root["id"]]
        StackConsent.objects.create(stack=root, source="heat",
                                    source_username=plan.root.get("username") or "",
                                    source_user_id=plan.root.get("trustor_user_id") or "")
    return root


def _store_stack(stack_plan, project, owner, stacks, source):
    row = stack_plan.row
    raw = RawTemplate.objects.create(template=stack_plan.template, files=stack_plan.files,
                                     environment=stack_plan.environment)
    parent = stacks.get(row["owner_id"])
    stack = Stack.objects.create(
        id=row["id"], project=project, name=row["name"], user=owner, raw_template=raw,
        parameters=stack_plan.environment.get("parameters") or {},
        state=f"{row['action']}_{row['status']}", status_reason=row["status_reason"] or "",
        parent=parent, parent_resource_name=row["parent_resource_name"] or "",
        nested_depth=parent.nested_depth + 1 if parent else 0, timeout_mins=row["timeout"],
        disable_rollback=bool(row["disable_rollback"]), tags=stack_plan.tags,
        needs_consent=True)
    Stack.objects.filter(pk=stack.pk).update(created_at=aware(row["created_at"]),
                                             updated_at=aware(row["updated_at"]))
    _store_resources(stack, raw, stack_plan)
    holds_record_rows(stack, stack_plan.definition.plugins)
    _store_events(stack, source.events(row["id"]))
    for writer in _software_writers:
        writer(stack, stack_plan.resources, source)
    return stack


def _store_resources(stack, raw, stack_plan):
    rows = []
    for res in stack_plan.resources:
        rows.append(Resource(
            uuid=res["uuid"], stack=stack, name=res["name"], type=res["type"],
            physical_resource_id=res["nova_instance"] or "",
            properties_data=res["properties"], attributes_data=res["attributes"],
            plugin_data=stack_user.data_at_rest(res["resource_data"]),
            rsrc_metadata=res["rsrc_metadata"],
            state=f"{res['action']}_{res['status']}", status_reason=res["status_reason"] or "",
            template=raw))
    Resource.objects.bulk_create(rows)
    by_heat_id = {res["id"]: new for res, new in zip(stack_plan.resources, rows)}
    for res, new in zip(stack_plan.resources, rows):
        new.requires = sorted(by_heat_id[r].pk for r in res["requires"] if r in by_heat_id)
        new.created_at = aware(res["created_at"]) or new.created_at
        new.updated_at = aware(res["updated_at"]) or new.created_at
    Resource.objects.bulk_update(rows, ["requires", "created_at", "updated_at"])


def _store_events(stack, events):
    rows = [Event(uuid=e["uuid"], stack=stack, resource_name=e["resource_name"] or "",
                  physical_resource_id=e["physical_resource_id"] or "",
                  resource_type=e["resource_type"] or "",
                  resource_action=e["resource_action"] or "",
                  resource_status=e["resource_status"] or "",
                  resource_status_reason=e["resource_status_reason"] or "",
                  created_at=aware(e["created_at"])) for e in events]  # Heat's times
    Event.objects.bulk_create(rows, batch_size=500)
