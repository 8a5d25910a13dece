"""Stack operations: each validates, moves the stack through its state machine
by compare-and-swap, and starts a convergence traversal.

Nothing is stored unless validation passed, and every refusal comes from the
state table (``stacks.models.states``) through ``stack_begin`` (``stacks.services.traversals``).
"""
import uuid

from django.db import IntegrityError, transaction
from django.utils import timezone

from convergence.graph import walk_graph
from convergence.services import new_traversal_id, stack_save_cas, traversal_begin, \
    traversal_fail
from heatweb.exceptions import StackExists, StackValidationFailed
from heatweb.keystone import stack_trust_create
from stacks.cloud import cloud_for_stack, cloud_for_user
from stacks.definitions import build_definition, normalize_environment, update_definition
from stacks.hot.hooks import hook_resources, matches_hook
from stacks.models import RawTemplate, Resource, Stack
from stacks.models import states as st
from stacks.models.events import stack_event
from stacks.ownership import holds_record_rows, take_over_refusal, taken_over
from stacks.resources import stack_user
from stacks.resources.stack import ADOPT_CHILD_KEY
from stacks.services import drift
from stacks.services.create_replay import create_replayed
from stacks.services.custom_constraints import check_custom_constraints, \
    check_property_constraints
from stacks.services.parameters import check_immutable_parameters
from stacks.services.traversals import live_resources, stack_begin, stack_converge, \
    stop_waiting_if_superseded

EMPTY_TEMPLATE = {"heat_template_version": "2013-05-23"}


def _source(template, old_raw=None):
    """The template text to keep as submitted: the text itself, the old version's when the
    update keeps the template, else "" (a JSON object is shown as its JSON)."""
    if isinstance(template, str):
        return template.replace("\r\n", "\n")  # a browser's form sends CRLF
    if old_raw is not None and (template is None or template == old_raw.template):
        return old_raw.source
    return ""


def stack_create(*, project, user, name, template, environment=None, parameters=None,
                 files=None, timeout_mins=None, disable_rollback=True, tags=None,
                 parent=None, parent_resource_name="", adopt_resources=None):
    """Validate and store a new stack, then start its CREATE traversal.

    A repeat of the create that made a live stack of that name returns that
    stack (``create_replay``); any other create of a taken name is 409.
    With ``adopt_resources`` (an abandon's ``resources``) the traversal is an
    ADOPT: each resource takes the physical object given there instead of
    making one.
    """
    files = files or {}
    env = normalize_environment(environment, parameters)
    stack_id = uuid.uuid4()
    definition = build_definition(template, environment=env, files=files, stack_name=name,
                                  stack_id=str(stack_id), project_id=project.pk)
    # A nested stack's values are looked up as its root's owner (through the root's trust,
    # as Heat's nested stacks take their parent's context), not as the engine's user: the
    # owner's key pair is the owner's alone.
    cloud = cloud_for_stack(parent) if parent is not None else cloud_for_user(user, project.pk)
    check_custom_constraints(definition.params, cloud)
    check_property_constraints(definition, cloud)
    seed = None if adopt_resources is None else adopt_seed(definition, adopt_resources)
    # An adopt or external_id takes over only what the caller sees and no one else holds.
    refused = take_over_refusal(taken_over(definition.plugins, seed), cloud=cloud, user=user,
                                project_id=project.pk)
    if refused is not None:
        raise refused
    try:
        with transaction.atomic():
            existing = Stack.objects.select_related("raw_template").filter(
                project=project, name=name, deleted_at__isnull=True).first()
            if existing is not None:
                if create_replayed(existing, user=user, template=definition.template.raw,
                                   environment=env, files=files, timeout_mins=timeout_mins,
                                   disable_rollback=disable_rollback, tags=tags):
                    return existing
                raise StackExists(stack_name=name)
            raw = RawTemplate.objects.create(template=definition.template.raw, files=files,
                                             environment=env, source=_source(template))
            stack = Stack(id=stack_id, project=project, user=user, name=name, raw_template=raw,
                          parameters=env.get("parameters", {}), timeout_mins=timeout_mins,
                          disable_rollback=disable_rollback, tags=tags or [], parent=parent,
                          parent_resource_name=parent_resource_name,
                          nested_depth=parent.nested_depth + 1 if parent else 0)
            stack.save()
            stack_trust_create(stack, user=user)
            old_state = stack.state
            action = "CREATE" if seed is None else "ADOPT"
            stack_begin(stack, action)
            stack_converge(stack, definition, raw, existing=[], reason=f"Stack {action} started",
                           cas_fields=dict(expected_state=old_state, expected_traversal="",
                                           action_started_at=timezone.now()), seed=seed)
            if seed is not None:  # the adopted objects' owner records, with their rows
                holds_record_rows(stack, definition.plugins)
    except IntegrityError:
        raise StackExists(stack_name=name) from None
    return stack


def adopt_seed(definition, resources):
    """Row fields of each resource to adopt: its physical id, data and metadata.

    Every resource of the template must be in the adopt data (Heat fails the
    adopt of one without a resource id; here it is refused before anything
    is stored).
    """
    if not isinstance(resources, dict):
        raise StackValidationFailed("adopt_stack_data: resources must be a mapping.")
    missing = sorted(n for n in definition.resources if not isinstance(resources.get(n), dict))
    if missing:
        raise StackValidationFailed(f"Resource ID was not provided for {', '.join(missing)} "
                                    f"in adopt_stack_data.")
    seed = {}
    for name in definition.resources:
        given = resources[name]
        if definition.plugins[name].nested_stack:
            # A child stack's entry is its own abandon data (Heat's nested adopt).
            seed[name] = {"plugin_data": {ADOPT_CHILD_KEY: given}}
            continue
        data = given.get("resource_data")
        metadata = given.get("metadata")
        physical_id = str(given.get("resource_id") or "")
        if len(physical_id) > 255:
            raise StackValidationFailed(f"adopt_stack_data: the resource_id of {name} is "
                                        f"longer than 255 characters.")
        seed[name] = {"physical_resource_id": physical_id,
                      "plugin_data": stack_user.data_at_rest(data) if isinstance(data, dict)
                      else {},
                      "rsrc_metadata": metadata if isinstance(metadata, dict) else {}}
    return seed


def stack_restore(stack, *, template, environment, files):
    """Converge the stack back to a snapshot's template, environment and files (RESTORE)."""
    definition = build_definition(template, environment=environment, files=files,
                                  stack_name=stack.name, stack_id=str(stack.pk),
                                  project_id=stack.project_id)
    with transaction.atomic():
        old_raw, old_state, old_traversal = stack.raw_template, stack.state, \
            stack.current_traversal
        stack_begin(stack, "RESTORE")
        raw = RawTemplate.objects.create(template=definition.template.raw, files=files,
                                         environment=environment)
        stack.raw_template = raw
        stack_converge(stack, definition, raw, existing=live_resources(stack),
                       reason="Stack RESTORE started",
                       cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                       raw_template_id=raw.pk, prev_raw_template_id=old_raw.pk,
                                       parameters=environment.get("parameters", {}),
                                       action_started_at=timezone.now(),
                                       updated_at=timezone.now()))
    return stack


def stack_update(stack, *, template=None, environment=None, parameters=None, files=None,
                 patch=False, clear_parameters=(), timeout_mins=None, disable_rollback=None,
                 tags=None, scaling=False, converge=False, user=None):
    """Validate the new definition, then converge the stack to it (PUT or PATCH).

    ``scaling``: a signal resizes a scaling group's members (``begin_scale``: a
    lock allowing ``signal`` lets it through, and is taken again after it).
    ``converge``: what drifted behind the stack's back is brought back too
    (``stacks.services.drift``).
    """
    old_raw = stack.raw_template
    definition, env, files = update_definition(
        stack, template=template, environment=environment, parameters=parameters, files=files,
        patch=patch, clear_parameters=clear_parameters)
    check_immutable_parameters(stack, definition)
    check_custom_constraints(definition.params, cloud_for_stack(stack))
    check_property_constraints(definition, cloud_for_stack(stack))
    refused = take_over_refusal(taken_over(definition.plugins, None), cloud=cloud_for_stack(stack),
                                user=user, project_id=stack.project_id, stack_id=stack.pk)
    if refused is not None:  # a new resource's external_id held by another stack
        raise refused
    drifted = drift.converge_drifted(stack, user=user) if converge else {}
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        kept = st.lock_kept(stack)
        stack_begin(stack, "SCALE" if scaling else "UPDATE")
        raw = RawTemplate.objects.create(template=definition.template.raw, files=files,
                                         environment=env, source=_source(template, old_raw))
        fields = dict(raw_template_id=raw.pk, prev_raw_template_id=old_raw.pk,
                      parameters=env.get("parameters", {}), action_started_at=timezone.now(),
                      updated_at=timezone.now(), lock_pending=kept)
        if timeout_mins is not None:
            fields["timeout_mins"] = timeout_mins
        if disable_rollback is not None:
            fields["disable_rollback"] = disable_rollback
        if tags is not None:
            fields["tags"] = tags
        stack.raw_template = raw
        existing = live_resources(stack)
        drift.converge_apply(stack, existing, drifted)
        stack_converge(stack, definition, raw, existing=existing, reason="Stack UPDATE started",
                       cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                       **fields),
                       unchanged=not drifted and _nothing_to_update(old_state, old_raw, raw,
                                                                    definition, existing),
                       # A drifted resource's template is unchanged, its stored properties not.
                       old_raw=None if drifted else old_raw)
    return stack


def _nothing_to_update(old_state, old_raw, raw, definition, existing):
    """Same template, environment and files, and every resource complete as it stands.

    Then every update node would find its properties unchanged, so the
    update runs no resource node at all.
    """
    if st.split(old_state)[1] != st.COMPLETE or st.split(old_state)[0] in ("DELETE", "INIT"):
        return False
    if (old_raw.template, old_raw.environment, old_raw.files) != \
            (raw.template, raw.environment, raw.files):
        return False
    hooks = hook_resources(raw.environment)
    if any(matches_hook(hooks, r.name, h) for r in existing for h in ("pre-update", "post-update")):
        return False  # as in Heat, an update hook pauses an unchanged resource too
    types = {name: defn.type for name, defn in definition.resources.items()}
    if len(existing) != len(types) or any(p.replace_on_update
                                          for p in definition.plugins.values()):
        return False
    return all(types.get(r.name) == r.type and r.status == st.COMPLETE and r.action != "DELETE"
               and r.replaced_by_id is None and r.engine_id is None for r in existing)


def stack_delete(stack):
    """Delete every resource (dependents first), then the stack."""
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        stack_begin(stack, "DELETE")
        stack_converge(stack, None, None, existing=live_resources(stack),
                       reason="Stack DELETE started",
                       cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                       action_started_at=timezone.now()))
        stop_waiting_if_superseded(stack, old_state)
    return stack


def stack_rollback(stack):
    """Converge back to the previous template (or to nothing after a failed create)."""
    old_state, old_traversal = stack.state, stack.current_traversal
    was_create = stack.action == "CREATE"
    stack_begin(stack, "ROLLBACK")
    definition, raw, fields = None, None, {}
    if not was_create and stack.prev_raw_template_id:
        raw = stack.prev_raw_template
        definition = build_definition(
            raw.template, environment=raw.environment, files=raw.files, stack_name=stack.name,
            stack_id=str(stack.pk), project_id=stack.project_id, strict=False)
        fields = dict(raw_template_id=raw.pk, prev_raw_template_id=stack.raw_template_id,
                      parameters=raw.environment.get("parameters", {}))
        stack.raw_template = raw
    stack_converge(stack, definition, raw, existing=live_resources(stack),
                   reason="Stack ROLLBACK started",
                   cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                   action_started_at=timezone.now(), **fields))


def stack_failed(stack, action):
    """A traversal failed the stack's ``action``: roll back a create or update, unless
    the stack disables rollback (the decision is the stack's, not the engine's)."""
    if action in ("CREATE", "UPDATE") and not stack.disable_rollback:
        stack_rollback(stack)


def _walk(stack, action, *, reverse=False, traversal_id=None):
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        kept = st.lock_kept(stack)  # an action the lock allows: the lock holds on
        stack_begin(stack, action)
        existing = [r for r in live_resources(stack) if r.replaced_by_id is None]
        ids = {r.pk for r in existing}
        graph = walk_graph({r.pk: [x for x in r.requires if x in ids] for r in existing},
                           reverse=reverse)
        traversal_id = traversal_id or new_traversal_id()
        stack_save_cas(stack, expected_state=old_state, expected_traversal=old_traversal,
                       current_traversal=traversal_id, action_started_at=timezone.now(),
                       lock_pending=kept)
        note = " under the lock (its mode allows it)" if kept else ""
        traversal_begin(stack, traversal_id=traversal_id, graph=graph,
                        reason=f"Stack {action} started{note}")
    return stack


def stack_suspend(stack):
    """Suspend dependents first. Suspending a suspended stack changes nothing."""
    if stack.state == "SUSPEND_COMPLETE":
        return stack
    return _walk(stack, "SUSPEND", reverse=True)


def stack_resume(stack):
    return _walk(stack, "RESUME")


def stack_check(stack):
    return _walk(stack, "CHECK")


def stack_snapshot_walk(stack, *, traversal_id):
    """Each resource saves what a restore needs (SNAPSHOT), in traversal ``traversal_id``
    (a snapshot's id, as Heat's convergence names it)."""
    return _walk(stack, "SNAPSHOT", traversal_id=traversal_id)


def stack_cancel_update(stack):
    """Stop an update in progress and roll back to the previous template."""
    if stack.state != "UPDATE_IN_PROGRESS":
        raise st.refusal_for(stack, "CANCEL_UPDATE")
    with transaction.atomic():
        stack_rollback(stack)
        stop_waiting_if_superseded(stack, "UPDATE_IN_PROGRESS")
    return stack


def stack_cancel_without_rollback(stack):
    """Stop a create or update in progress and leave the stack CREATE_FAILED or
    UPDATE_FAILED (Heat allows this one on a create, unlike ``cancel_update``)."""
    if stack.state not in ("CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"):
        raise st.refusal_for(stack, "CANCEL_UPDATE")
    traversal_fail(stack.pk, stack.current_traversal, f"Stack {stack.action} cancelled",
                   allow_rollback=False)
    stack.refresh_from_db()
    return stack


__all__ = ["adopt_seed", "stack_restore", "stack_snapshot_walk", "stack_cancel_update", "stack_cancel_without_rollback", "stack_check",
           "stack_create", "stack_delete", "stack_failed", "stack_resume", "stack_rollback",
           "stack_suspend",
           "stack_update", "stack_event"]
