"""Stack operations: each validates, moves the stack through its state machine
by compare-and-swap, and starts a convergence traversal.

Nothing is stored unless validation passed, and every refusal comes from the
state table (``stacks.models.states``) through ``_begin``.
"""
import uuid

from django.db import IntegrityError, transaction
from django.utils import timezone
from django_fsm import TransitionNotAllowed

from convergence.graph import Graph, converge_graph, walk_graph
from convergence.services import new_traversal_id, stack_save_cas, traversal_begin, \
    traversal_fail
from heatweb.exceptions import StackExists
from heatweb.keystone import stack_trust_create
from stacks.definitions import build_definition, normalize_environment, update_definition
from stacks.models import RawTemplate, Resource, Stack
from stacks.models import states as st
from stacks.models.events import stack_event
from stacks.services.create_replay import create_replayed
from stacks.services.parameters import check_immutable_parameters

EMPTY_TEMPLATE = {"heat_template_version": "2013-05-23"}


def _begin(stack, action, *, transition=None):
    """Apply the ``begin_<transition or action>`` transition or raise the state table's
    refusal for ``action``."""
    try:
        getattr(stack, f"begin_{transition or action.lower()}")()
    except TransitionNotAllowed:
        raise st.refusal_for(stack, action) from None


def _live_resources(stack):
    return list(Resource.objects.filter(stack=stack).exclude(state="DELETE_COMPLETE"))


def _converge(stack, definition, raw, *, existing, reason, cas_fields, unchanged=False):
    """Resource rows for new names, the graph, the CAS save and the traversal.

    ``unchanged``: the stack already is what the definition says, so the
    traversal has no resource nodes (it completes at once: O(1) tasks).
    """
    current = {r.name: r for r in existing if r.replaced_by_id is None}
    names = definition.resources if definition else {}
    new_rows = [Resource(stack=stack, name=n, type=d.type, template=raw)
                for n, d in names.items() if n not in current]
    Resource.objects.bulk_create(new_rows, batch_size=500)
    by_name = {**current, **{r.name: r for r in new_rows}}
    new_requires = {
        by_name[n].pk: sorted(by_name[d].pk for d in d_.depends_on if d in names)
        for n, d_ in names.items()}
    graph = Graph() if unchanged else converge_graph(
        new_requires=new_requires,
        existing_requires={r.pk: list(r.requires) for r in existing},
        in_new_template={by_name[n].pk for n in names if n in current},
        no_cleanup=_never_replaced(definition, current))
    traversal_id = new_traversal_id()
    stack_save_cas(stack, current_traversal=traversal_id, **cas_fields)
    traversal_begin(stack, traversal_id=traversal_id, graph=graph, reason=reason)


def stack_create(*, project, user, name, template, environment=None, parameters=None,
                 files=None, timeout_mins=None, disable_rollback=True, tags=None,
                 parent=None, parent_resource_name=""):
    """Validate and store a new stack, then start its CREATE traversal.

    A repeat of the create that made a live stack of that name returns that
    stack (``create_replay``); any other create of a taken name is 409.
    """
    files = files or {}
    env = normalize_environment(environment, parameters)
    stack_id = uuid.uuid4()
    definition = build_definition(template, environment=env, files=files, stack_name=name,
                                  stack_id=str(stack_id), project_id=project.pk)
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
                                             environment=env)
            stack = Stack(id=stack_id, project=project, user=user, name=name, raw_template=raw,
                          parameters=env.get("parameters", {}), timeout_mins=timeout_mins,
                          disable_rollback=disable_rollback, tags=tags or [], parent=parent,
                          parent_resource_name=parent_resource_name,
                          nested_depth=parent.nested_depth + 1 if parent else 0)
            stack.save()
            stack_trust_create(stack, user=user)
            old_state = stack.state
            _begin(stack, "CREATE")
            _converge(stack, definition, raw, existing=[], reason="Stack CREATE started",
                      cas_fields=dict(expected_state=old_state, expected_traversal="",
                                      action_started_at=timezone.now()))
    except IntegrityError:
        raise StackExists(stack_name=name) from None
    return stack


def stack_update(stack, *, template=None, environment=None, parameters=None, files=None,
                 patch=False, clear_parameters=(), timeout_mins=None, disable_rollback=None,
                 tags=None):
    """Validate the new definition, then converge the stack to it (PUT or PATCH)."""
    old_raw = stack.raw_template
    definition, env, files = update_definition(
        stack, template=template, environment=environment, parameters=parameters, files=files,
        patch=patch, clear_parameters=clear_parameters)
    check_immutable_parameters(stack, definition)
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        _begin(stack, "UPDATE")
        raw = RawTemplate.objects.create(template=definition.template.raw, files=files,
                                         environment=env)
        fields = dict(raw_template_id=raw.pk, prev_raw_template_id=old_raw.pk,
                      parameters=env.get("parameters", {}), action_started_at=timezone.now(),
                      updated_at=timezone.now())
        if timeout_mins is not None:
            fields["timeout_mins"] = timeout_mins
        if disable_rollback is not None:
            fields["disable_rollback"] = disable_rollback
        if tags is not None:
            fields["tags"] = tags
        stack.raw_template = raw
        existing = _live_resources(stack)
        _converge(stack, definition, raw, existing=existing, reason="Stack UPDATE started",
                  cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                  **fields),
                  unchanged=_nothing_to_update(old_state, old_raw, raw, definition, existing))
    return stack


def _never_replaced(definition, current):
    """Kept resources that no update can replace (their cleanup node would do nothing)."""
    if definition is None:
        return set()
    return {res.pk for name, res in current.items()
            if name in definition.resources and definition.resources[name].type == res.type
            and res.action != "DELETE" and res.status != st.IN_PROGRESS
            and res.engine_id is None and definition.plugins[name].never_replaced()}


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
    types = {name: defn.type for name, defn in definition.resources.items()}
    if len(existing) != len(types):
        return False
    return all(types.get(r.name) == r.type and r.status == st.COMPLETE and r.action != "DELETE"
               and r.replaced_by_id is None and r.engine_id is None for r in existing)


def stack_delete(stack):
    """Delete every resource (dependents first), then the stack."""
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        _begin(stack, "DELETE")
        _converge(stack, None, None, existing=_live_resources(stack),
                  reason="Stack DELETE started",
                  cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                                  action_started_at=timezone.now()))
    return stack


def stack_rollback(stack):
    """Converge back to the previous template (or to nothing after a failed create)."""
    old_state, old_traversal = stack.state, stack.current_traversal
    was_create = stack.action == "CREATE"
    _begin(stack, "ROLLBACK")
    definition, raw, fields = None, None, {}
    if not was_create and stack.prev_raw_template_id:
        raw = stack.prev_raw_template
        definition = build_definition(
            raw.template, environment=raw.environment, files=raw.files, stack_name=stack.name,
            stack_id=str(stack.pk), project_id=stack.project_id, strict=False)
        fields = dict(raw_template_id=raw.pk, prev_raw_template_id=stack.raw_template_id,
                      parameters=raw.environment.get("parameters", {}))
        stack.raw_template = raw
    _converge(stack, definition, raw, existing=_live_resources(stack),
              reason="Stack ROLLBACK started",
              cas_fields=dict(expected_state=old_state, expected_traversal=old_traversal,
                              action_started_at=timezone.now(), **fields))


def stack_failed(stack, action):
    """A traversal failed the stack's ``action``: roll back a create or update, unless
    the stack disables rollback (the decision is the stack's, not the engine's)."""
    if action in ("CREATE", "UPDATE") and not stack.disable_rollback:
        stack_rollback(stack)


def _walk(stack, action, *, reverse=False):
    with transaction.atomic():
        old_state, old_traversal = stack.state, stack.current_traversal
        _begin(stack, action)
        existing = [r for r in _live_resources(stack) if r.replaced_by_id is None]
        ids = {r.pk for r in existing}
        graph = walk_graph({r.pk: [x for x in r.requires if x in ids] for r in existing},
                           reverse=reverse)
        traversal_id = new_traversal_id()
        stack_save_cas(stack, expected_state=old_state, expected_traversal=old_traversal,
                       current_traversal=traversal_id, action_started_at=timezone.now())
        traversal_begin(stack, traversal_id=traversal_id, graph=graph,
                        reason=f"Stack {action} started")
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


def stack_cancel_update(stack):
    """Stop an update in progress and roll back to the previous template."""
    if stack.state != "UPDATE_IN_PROGRESS":
        raise st.refusal_for(stack, "CANCEL_UPDATE")
    with transaction.atomic():
        stack_rollback(stack)
    return stack


def stack_cancel_without_rollback(stack):
    """Stop an update in progress and leave the stack UPDATE_FAILED."""
    if stack.state != "UPDATE_IN_PROGRESS":
        raise st.refusal_for(stack, "CANCEL_UPDATE")
    traversal_fail(stack.pk, stack.current_traversal, "Stack UPDATE cancelled",
                   allow_rollback=False)
    stack.refresh_from_db()
    return stack


__all__ = ["stack_cancel_update", "stack_cancel_without_rollback", "stack_check",
           "stack_create", "stack_delete", "stack_failed", "stack_resume", "stack_rollback",
           "stack_suspend",
           "stack_update", "stack_event"]
