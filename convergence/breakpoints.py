"""Hooks (breakpoints): a node paused before or after its resource's action, until cleared.

When a traversal reaches a resource the stack's environment sets a hook on
(``stacks.hot.hooks``), the node is parked in a ``Breakpoint`` row with an
event ("CREATE paused until Hook pre-create is cleared"); no worker waits
and the resource keeps its state, as in Heat. A signal ``{"unset_hook":
"pre-create"}`` (``hook_clear``, through the stack door) marks it cleared
with an event ("Hook pre-create is cleared") and writes a ``hook_release``
task to the outbox in the same transaction, which sends the node on: a
``pre-`` hook's node runs again (and passes the cleared hook), a ``post-``
hook's output is propagated. A traversal that is superseded (a delete, a
cancel) or fails drops its pauses, each with Heat's "Failure occurred
while waiting." event.

Heat pauses ``pre-create``/``post-create`` only in a stack CREATE,
``pre-update``/``post-update`` in a stack UPDATE (also for an unchanged
resource, not for a replacement's create), ``pre-delete``/``post-delete``
in a stack DELETE.
"""
import logging

from django.db import IntegrityError, transaction

from convergence.models import Breakpoint
from convergence.outbox import outbox_add
from heatweb.exceptions import InvalidBreakPointHook
from stacks.hot.hooks import HOOK_TYPES, hook_description, hook_resources, matches_hook
from stacks.models import Resource, Stack
from stacks.models.events import resource_event

log = logging.getLogger(__name__)

PAUSE_ACTIONS = ("CREATE", "UPDATE", "DELETE")


def _environment(ctx):
    if ctx.definition is not None:
        return ctx.definition.environment
    return ctx.stack.raw_template.environment


def hook_set(ctx, res, hook):
    """Does the stack's environment set ``hook`` on ``res`` in this traversal's action?"""
    if ctx.action != hook.split("-", 1)[1].upper():
        return False
    return matches_hook(hook_resources(_environment(ctx)), res.name, hook)


def pause(ctx, res, hook, *, entity, data):
    """True when the node must stop here: ``hook`` is set and not cleared in this traversal.

    The first arrival parks the node (a row and an event); a duplicate
    delivery finds it parked; a rerun after the clear passes.
    """
    if not hook_set(ctx, res, hook):
        return False
    if not Stack.objects.filter(pk=res.stack_id, current_traversal=ctx.traversal_id).exists():
        return False  # an older traversal's action finishing: the newer one retriggers it
    row = Breakpoint.objects.filter(resource_id=res.pk, hook=hook).first()
    if row is not None and row.traversal_id == ctx.traversal_id:
        return not row.cleared
    _, paused_reason, _ = hook_description(hook)
    if ctx.events is not None:
        ctx.events.flush()  # the action's own events come first
    try:
        with transaction.atomic():
            if row is not None:
                row.delete()  # left by an older traversal
            Breakpoint.objects.create(resource_id=res.pk, hook=hook, stack_id=res.stack_id,
                                      traversal_id=ctx.traversal_id, entity=list(entity),
                                      data=data)
            # Written now, not with the task's events: a clear may come before they are.
            resource_event(res, paused_reason).save()
    except IntegrityError:
        pass  # another delivery of the node parked it just now
    log.info("resource %s paused on %s", res.pk, hook)
    return True


def pause_before(ctx, res, *, action, data):
    """``pre-<action>`` of the node being run (``ctx.node``); True when it paused."""
    return pause(ctx, res, f"pre-{action.lower()}", entity=ctx.node, data=data or {})


def pause_after(ctx, res, *, action, entity, data):
    """``post-<action>`` once the action completed; True when the node paused with ``data``."""
    if action not in PAUSE_ACTIONS:
        return False
    entity = entity or ctx.node or [res.pk, action != "DELETE"]
    return pause(ctx, res, f"post-{action.lower()}", entity=entity, data=data)


def _describe(stack, res):
    """Heat's ``str(resource)``: ``Class "name" [physical id] Stack "name" [id]``; the
    class is named as Heat's (``OS::Heat::RandomString``: RandomString)."""
    cls_name = res.type.rsplit("::", 1)[-1] if "::" in res.type else "TemplateResource"
    physical = f" [{res.physical_resource_id}]" if res.physical_resource_id else ""
    return f'{cls_name} "{res.name}"{physical} Stack "{stack.name}" [{stack.pk}]'


def hook_clear(stack, res, hook):
    """Clear ``hook`` on ``res`` (a signal ``{"unset_hook": hook}``) and send its node on.

    Raises ``InvalidBreakPointHook`` (400) for an unknown hook, or one the
    resource is not paused on, with Heat's texts.
    """
    if not isinstance(hook, str) or hook not in HOOK_TYPES:
        raise InvalidBreakPointHook(f'Invalid hook type "{hook}" for {_describe(stack, res)}')
    with transaction.atomic():
        row = Breakpoint.objects.select_for_update().filter(
            resource_id=res.pk, hook=hook, cleared=False).first()
        if row is None:
            raise InvalidBreakPointHook(
                f'The "{hook}" hook is not defined on {_describe(stack, res)}')
        Breakpoint.objects.filter(pk=row.pk).update(cleared=True)
        fresh = Resource.objects.filter(pk=res.pk).first() or res
        resource_event(fresh, hook_description(hook)[2]).save()
        outbox_add([("convergence.hook_release",
                     [str(row.stack_id), row.traversal_id, row.resource_id, hook])],
                   stack_id=str(row.stack_id), traversal_id=row.traversal_id)
    log.info("resource %s: %s cleared", res.pk, hook)


def breakpoints_drop(stack, *, traversal_id=None, keep_traversal=None):
    """Forget the pauses of a traversal that ended (``traversal_id``), or of every traversal
    but ``keep_traversal``; each one still paused gets Heat's event."""
    rows = Breakpoint.objects.filter(stack_id=stack.pk)
    if traversal_id is not None:
        rows = rows.filter(traversal_id=traversal_id)
    if keep_traversal is not None:
        rows = rows.exclude(traversal_id=keep_traversal)
    paused = list(rows.filter(cleared=False).values_list("resource_id", flat=True))
    if paused:
        for res in Resource.objects.filter(pk__in=paused):
            resource_event(res, "Failure occurred while waiting.").save()
    rows.delete()


def paused_stack_ids(stack_ids):
    """Those of ``stack_ids`` with a node paused on a hook (a user, not an engine, is due)."""
    return set(Breakpoint.objects.filter(stack_id__in=list(stack_ids), cleared=False)
               .values_list("stack_id", flat=True))


def paused_resource(stack, name):
    """The resource of ``stack`` named ``name`` that is paused on a hook (even once deleted)."""
    ids = Breakpoint.objects.filter(stack_id=stack.pk, cleared=False).values_list(
        "resource_id", flat=True)
    return Resource.objects.filter(pk__in=list(ids), stack=stack, name=name).first()
