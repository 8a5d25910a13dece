"""Child stacks on behalf of a parent's resource (OS::Heat::Stack, template resources).

Every change to an existing child goes through the door
(``stacks.services.actions.stack_action``), as a user's would. A child's
environment is its parent's as Heat hands it down
(``stacks.hot.environment.child_environment``), hooks (breakpoints) included.
"""
import secrets
from types import SimpleNamespace

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django_fsm import can_proceed

from heatweb.api import param_minutes
from heatweb.exceptions import ConcurrentTransaction, RequestLimitExceeded, StackValidationFailed
from stacks.definitions import definition_cache, parse_template

from stacks.hot.template import Template
from stacks.models import Resource, Stack
from stacks.models import states as st
from stacks.resources import registry
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.plugins import node_data, plugin_class, plugin_for, stack_context
from stacks.selectors import stack_outputs
from stacks.services import lifecycle
from stacks.services.actions import stack_action
from stacks.services.validation import nested_template_check  # noqa: F401 (the interface's)


def nested_create(*, parent_id, resource_name, template, parameters, files, timeout_mins=None,
                  environment=None, adopt_resources=None):
    parent = Stack.objects.select_related("project", "user").get(pk=parent_id)
    limit = settings.HEATWEB["MAX_NESTED_DEPTH"]
    if parent.nested_depth + 1 > limit:
        raise StackValidationFailed(f"Recursion depth exceeds {limit}.")
    parsed = parse_template(template, files)  # once: the count below and the create use it
    _check_tree_resources(parent, parsed, files)
    timeout_mins = param_minutes(timeout_mins or None, "timeout")
    name = f"{parent.name}-{resource_name}-{secrets.token_hex(6)}"
    child = lifecycle.stack_create(
        project=parent.project, user=parent.user, name=name, template=parsed,
        environment=environment, parameters=parameters, files=files,
        timeout_mins=timeout_mins or parent.timeout_mins,
        parent=parent, parent_resource_name=resource_name, adopt_resources=adopt_resources)
    return str(child.pk)


def _tree_stack_ids(stack):
    """Ids of the stacks of ``stack``'s whole tree (from its root down), one query a level."""
    root_id, parent_id = stack.pk, stack.parent_id
    while parent_id is not None:
        root_id, parent_id = parent_id, Stack.objects.filter(pk=parent_id).values_list(
            "parent_id", flat=True).first()
    ids, level = [root_id], [root_id]
    while level:
        level = list(Stack.objects.filter(parent_id__in=level, deleted_at__isnull=True)
                     .values_list("pk", flat=True))
        ids.extend(level)
    return ids


def _check_tree_resources(parent, template, files, *, replacing=None):
    """As Heat: a whole tree of nested stacks counts against ``max_resources_per_stack``.

    ``replacing``: the stack whose resources the new template replaces (an update).
    """
    limit = settings.HEATWEB["MAX_RESOURCES_PER_STACK"]
    if not isinstance(template, Template):
        template = parse_template(template, files)
    new = len(template.resources)
    rows = Resource.objects.filter(stack_id__in=_tree_stack_ids(parent),
                                   replaced_by__isnull=True).exclude(state="DELETE_COMPLETE")
    existing = (rows.exclude(stack_id=replacing) if replacing else rows).count()
    if existing + new > limit:
        raise RequestLimitExceeded(
            f"Maximum resources per stack exceeded: the stack tree would have "
            f"{existing + new} resources (at most {limit}).")


def nested_get(child_id):
    return Stack.objects.select_related("raw_template").filter(pk=child_id).first()


def nested_update(child_id, *, template, parameters, files, timeout_mins=None,
                  environment=None, scaling=False):
    """Update the child (``scaling``: a signal resizes a group's members, which a lock
    allowing ``signal`` lets through)."""
    child = nested_get(child_id)
    _check_tree_resources(child, template, files, replacing=child.pk)
    timeout_mins = param_minutes(timeout_mins or None, "timeout")
    stack_action(child, "scale" if scaling else "update", template=template,
                 environment=environment,
                 parameters=parameters, files=files, timeout_mins=timeout_mins)


def nested_delete(child_id, *, first_step=True):
    """One step of deleting the child; True when there is nothing (left) to delete.

    A child still locked (it follows its parent's lock) is unlocked first,
    then deleted; a child in progress is deleted at once (the delete supersedes
    its action); a failed delete of ours fails the parent's resource.
    """
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return True
    if child.state == "LOCK_COMPLETE":
        stack_action(child, "unlock", cascade=True)
    elif child.state == "DELETE_FAILED" and not first_step:
        raise ResourceFailure(child.status_reason)
    elif can_proceed(child.begin_delete):
        stack_action(child, "delete")
    return False


def nested_action(child_id, action):
    stack_action(nested_get(child_id), action.lower())


def nested_progress(child_id, action):
    """True when the child finished ``action``; raises with its reason when it failed."""
    child = nested_get(child_id)
    if child is None:
        if action == "DELETE":
            return True
        raise ResourceFailure(f"Nested stack {child_id} not found")
    if action == "DELETE" and child.deleted_at is not None:
        return True
    if child.state == f"{action}_COMPLETE":
        return True
    if child.status == "FAILED" and child.action in (action, "ROLLBACK"):
        raise ResourceFailure(child.status_reason)
    return False


def nested_outputs(child_id):
    """``({key: value}, {key: error})`` of the child's outputs (an output that cannot be
    resolved has an error, as its ``output_error``)."""
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return {}, {}
    outputs = stack_outputs(child)
    return ({o["output_key"]: o.get("output_value") for o in outputs},
            {o["output_key"]: o["output_error"] for o in outputs if "output_error" in o})


def nested_resources_data(child_id, names=None):
    """``{name: node_data}`` (``ref``, ``attrs``, ...) of the child's current resources
    (a group's members); only those of ``names`` when given."""
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return {}
    ctx = stack_context(child)
    rows = Resource.objects.filter(stack=child, replaced_by__isnull=True).exclude(
        state__in=("DELETE_COMPLETE", "INIT_COMPLETE"))
    if names is not None:
        rows = rows.filter(name__in=list(names))
    data, others = {}, []
    for pk, name, type_name, physical_id, attrs in rows.values_list(
            "pk", "name", "type", "physical_resource_id", "attributes_data"):
        # The class as the definition says (no properties: neither an adopted object's
        # nor a deletion policy's class changes how a reference is made).
        cls = plugin_class(ctx, SimpleNamespace(name=name, type=type_name, properties_data=None))
        if cls.get_reference_id is ResourcePlugin.get_reference_id:
            # Its reference is its physical id or name: no row object or plugin to make
            # (a group's refs read 10,000 members).
            data[name] = {"id": pk, "name": name, "type": cls.type_name,
                          "ref": physical_id or name, "attrs": attrs}
        else:
            others.append(pk)
    for res in Resource.objects.filter(pk__in=others) if others else ():
        data[res.name] = node_data(res, plugin_for(ctx, res))
    return data


def stack_parameters(stack_id):
    """The typed parameters of a stack's definition (a plugin making a child's template
    from its own stack's parameters)."""
    stack = Stack.objects.select_related("raw_template").get(pk=stack_id)
    return definition_cache.get(stack).params


def nested_lock(child_id, *, parent_id):
    """Lock the child as its parent is locked; False when it already is (nothing to wait for)."""
    parent = Stack.objects.select_related("locked_by").get(pk=parent_id)
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return False
    if child.state == "LOCK_COMPLETE" and child.lock_level == parent.lock_level:
        return False
    stack_action(child, "lock", cascade_from=parent)
    return True


def nested_unlock(child_id):
    """Unlock the child; False when it is not locked (nothing to wait for).

    A child running an action under the lock (a scaling its mode allowed), or
    taking the lock again after it, is unlocked once it holds the lock
    (``nested_unlock_progress``).
    """
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return False
    if child.state == "LOCK_IN_PROGRESS" or \
            (child.lock_pending and child.state not in st.LOCKED_STATES):
        return True
    if child.state not in st.LOCKED_STATES:
        return False
    stack_action(child, "unlock", cascade=True)
    return True


def nested_unlock_progress(child_id):
    """True when the child is unlocked; one that took its lock again after an action
    under it is unlocked now (and waited for)."""
    child = nested_get(child_id)
    if child is None or child.deleted_at is not None:
        return True
    if child.state == "LOCK_COMPLETE":
        stack_action(child, "unlock", cascade=True)
        return False
    return nested_progress(child_id, "UNLOCK")


CLAIM_ATTEMPTS = 20


def scaling_group_resize(*, stack_id, group_physical_id, new_size, context):
    """Resize an auto scaling group to ``new_size(current size)``, as a signal asks.

    Claims the group's resource row with one conditional UPDATE on its
    ``atomic_key`` (and no engine holding it) that also saves the new
    members, then updates the members' stack in the same transaction: two
    signals at once both scale (the second sees the first's members), and
    an update of the group running meanwhile is not overwritten (the signal
    is ignored, as Heat ignores one to a group in progress). When the
    members' stack moves on between the claim and its update (the other
    signal's traversal started or finished), the claim is rolled back and
    taken again.
    Returns ``((group name, old size, new size), None)`` or ``(None, why ignored)``.
    """
    for _ in range(CLAIM_ATTEMPTS):
        row = Resource.objects.filter(
            stack_id=stack_id, physical_resource_id=group_physical_id,
            replaced_by__isnull=True).exclude(state="DELETE_COMPLETE").first()
        if row is None or row.status != st.COMPLETE:
            return None, "signal ignored: the group is not ready"
        if row.engine_id is not None:
            return None, "signal ignored: the group is being updated"
        # OS::Heat::AutoScalingGroup or AWS::AutoScaling::AutoScalingGroup
        group = registry.get_plugin(row.type)(name=row.name, properties=row.properties_data,
                                 context=context, physical_id=row.physical_resource_id,
                                 data=dict(row.plugin_data or {}), resource_id=row.pk)
        current = group.current_size()
        size = group.resized(new_size(current))
        try:
            with transaction.atomic():
                claimed = Resource.objects.filter(
                    pk=row.pk, atomic_key=row.atomic_key, engine_id__isnull=True,
                ).update(plugin_data=group.data, atomic_key=F("atomic_key") + 1,
                         attributes_data={**row.attributes_data, "current_size": size})
                if claimed:
                    nested_update(group.physical_id, template=group.member_template(),
                                  parameters={}, files={}, scaling=True)
                    return (row.name, current, size), None
        except ConcurrentTransaction:
            continue  # the members' stack moved on while we claimed (claim rolled back): again
    return None, "signal ignored: the group is busy"
