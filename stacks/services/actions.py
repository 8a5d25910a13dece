"""One door for every change to an existing stack.

The API, the pages, heatweb's ``heat`` command (through the API), Django
admin's actions, signals and webhooks, software deployment writes and
nested stacks all call ``stack_action``. A stack action starts one
django-fsm transition of the state table (``stacks.models.states``), whose
refusal is the error every way in answers; writes that are not a stack
transition (a signal, a deployment's PUT or DELETE) ask the same question,
``states.lock_holder``, and get the same refusal.

The door owns the table of actions (``ACTIONS``) and imports none of the
modules that do them: each registers its actions with ``action_register``
at start-up (``stacks.services.actions_registry``, called from
``StacksConfig.ready``), as Heat's plugin manager fills its registry. A
service that starts a follow-up action (the engine unlocking an expired
lock, a verified lock failing) calls ``stack_action`` like any other way in.
"""
from django_fsm import can_proceed

from heatweb.exceptions import ConcurrentTransaction, Forbidden, InvalidActionRequest, StackLocked
from stacks.models import Stack
from stacks.models import states as st
from stacks.services.consent import consent_refusal
from stacks.services.lock_history import lock_record

# name -> handler(stack, *, user, **args): what the action does once the state allows it.
ACTIONS = {}
# Bad arguments are refused before the state is asked (a 400 before a 409).
ARGUMENT_CHECKS = {}
# The transition each action starts (cancel_update starts a rollback), or a function of
# the stack and the action's arguments that chooses it (a lock's).
TRANSITIONS = {}


def action_register(name, handler, *, transition=None, argument_check=None):
    """Make ``name`` an action of the door: ``handler(stack, *, user, **args)`` does it.

    ``transition``: the state table's ``begin_<transition>`` the action needs
    (asked before ``handler`` runs), or a callable ``(stack, **args)`` that
    names it; None for an action that is not a transition (a signal, a
    drift detection). ``argument_check(**args)`` raises on bad arguments.
    """
    ACTIONS[name] = handler
    for table, value in ((TRANSITIONS, transition), (ARGUMENT_CHECKS, argument_check)):
        if value is None:
            table.pop(name, None)
        else:
            table[name] = value


def refuse_if_locked(stack):
    """Raise the state table's refusal if a lock holds over ``stack``."""
    refusal = st.lock_refusal(stack)
    if refusal is not None:
        raise refusal


def refusal_record(stack, action, user, refusal, *, what=None):
    """The lock history keeps every action a lock refused: who asked, what, and the answer."""
    holder = st.lock_holder(stack) or stack
    lock_record(stack, "refusal", user=user, level=holder.lock_level,
                reason=holder.lock_reason, allow=holder.lock_allow,
                detail=f"{what or action + ' refused'}: {refusal.message}")


def stack_action(stack, action, /, *, user=None, **args):
    """Do ``action`` (a key of ``ACTIONS``) to ``stack`` for ``user``, or raise the refusal.

    ``args`` are the action's own (an update's template, a lock's level and
    reason, a signal's resource name and details). ``user`` is None for the
    engine (nested stacks) and for signed webhooks.
    """
    handler = ACTIONS.get(action)
    if handler is None:
        raise InvalidActionRequest(f"Invalid action {action} specified")
    if action in ARGUMENT_CHECKS:
        ARGUMENT_CHECKS[action](**args)
    refused = consent_refusal(stack, action, **args)
    if refused is not None:  # an imported stack: no credentials on the cloud for it yet
        raise refused
    for attempt in range(MOVED_TRIES):
        read = (stack.state, stack.current_traversal)
        try:
            return _act(stack, action, handler, user, args)
        except ConcurrentTransaction:
            # A user's action read the stack in progress and its traversal ended (or was
            # superseded) before the action's write: the handler's transaction rolled
            # back. Ask again of the stack as it is now (the state table may refuse it
            # then). The engine's own calls (user None) keep their answer: each has its
            # way to look again (a lock taken again, a nested stack's signal).
            if user is None or attempt + 1 == MOVED_TRIES or not _ended_since(stack, read):
                raise
            stack.refresh_from_db()


# How often the door asks again when the stack moved under a user's action (a create's
# traversal ending as a delete arrives): each try is one short transaction.
MOVED_TRIES = 3


def _ended_since(stack, read):
    """Was the stack read in progress, and has that traversal moved on since?"""
    if not read[0].endswith("_IN_PROGRESS"):
        return False
    now = Stack.objects.filter(pk=stack.pk).values_list("state", "current_traversal").first()
    return now is not None and tuple(now) != read


def _act(stack, action, handler, user, args):
    transition = TRANSITIONS.get(action)
    if callable(transition):  # the parent's cascade, a lock taken again, one that interrupts
        transition = transition(stack, **args)
    try:
        if transition and not can_proceed(getattr(stack, f"begin_{transition}")):
            # Refused before any validation or work: the state table's answer.
            raise st.refusal_for(stack, action.upper())
        return handler(stack, user=user, **args)
    except StackLocked as refusal:
        refusal_record(stack, action, user, refusal)
        raise
    except Forbidden as refusal:
        if action in ("lock", "unlock") and stack.is_locked:
            refusal_record(stack, action, user, refusal)
        raise
