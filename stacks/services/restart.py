"""Starting a stack's action over in a new traversal when the old one lost a task.

A task lost between two nodes (its worker died after a resource was saved
and before the next node was sent, and the broker had nothing left to hand
back) leaves nothing the recovery sweep can see: no lock, no message.
Convergence is built for new traversals that supersede old ones, computed
from the resources as they are now: done resources pass at once, the rest
run, and whatever the old traversal still had in flight finishes and is
retriggered in the new one. The sweep (``convergence.recovery``) restarts a
stack in progress that nobody worked on for ``RESTART_AFTER_SECONDS``.
Rollbacks, locks and unlocks are not restarted (their target is not in the
stack row); the stall sweep fails them as before.
"""
from django.db import transaction

from convergence.graph import walk_graph
from convergence.services import new_traversal_id, stack_save_cas, traversal_begin
from stacks.models import Stack
from stacks.models import states as st
from stacks.definitions import build_definition
from stacks.services.traversals import live_resources, stack_converge

RESTARTABLE = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME", "CHECK", "RESTORE", "ADOPT")


def stack_traversal_restart(stack_id, *, reason):
    """Run the stack's current action again in a new traversal; False when it may not be."""
    with transaction.atomic():
        stack = Stack.objects.select_for_update().select_related("raw_template").filter(
            pk=stack_id, deleted_at__isnull=True).first()
        if stack is None or stack.status != st.IN_PROGRESS or stack.action not in RESTARTABLE:
            return False
        cas = dict(expected_state=stack.state, expected_traversal=stack.current_traversal)
        existing = live_resources(stack)
        if stack.action in ("CREATE", "UPDATE", "RESTORE", "ADOPT"):
            raw = stack.raw_template
            definition = build_definition(
                raw.template, environment=raw.environment, files=raw.files,
                stack_name=stack.name, stack_id=str(stack.pk), project_id=stack.project_id,
                strict=False)
            stack_converge(stack, definition, raw, existing=existing, reason=reason,
                           cas_fields=cas)
        elif stack.action == "DELETE":
            stack_converge(stack, None, None, existing=existing, reason=reason, cas_fields=cas)
        else:
            _walk_again(stack, existing, reason=reason, cas=cas)
    return True


def _walk_again(stack, existing, *, reason, cas):
    rows = [r for r in existing if r.replaced_by_id is None]
    ids = {r.pk for r in rows}
    graph = walk_graph({r.pk: [x for x in r.requires if x in ids] for r in rows},
                       reverse=stack.action == "SUSPEND")
    traversal_id = new_traversal_id()
    stack_save_cas(stack, current_traversal=traversal_id, **cas)
    traversal_begin(stack, traversal_id=traversal_id, graph=graph, reason=reason)
