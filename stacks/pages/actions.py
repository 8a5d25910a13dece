"""What each stack action button does, and why it is disabled when it is.

Availability is asked of the stack's state machine (the same transitions
the services apply), and the reason shown is the state table's own refusal,
so a disabled button says what the server would answer.
"""
from dataclasses import dataclass

from django_fsm import can_proceed

from heatweb.exceptions import ActionInProgress, StackLocked
from heatweb.models import ROLE_RANK, Role
from stacks.models import states as st
from stacks.services import locking
from stacks.services.consent import consent_refusal


def form_args(action, form):
    """The door's (``stack_action``) arguments from an action button's form."""
    if action == "lock":
        return {"level": form.get("level") or None, "reason": form.get("reason", "").strip(),
                "duration": form.get("expires_in", "").strip() or None,
                "allow": form.getlist("allow") if hasattr(form, "getlist") else
                form.get("allow")}
    return {}


STARTED = {"suspend": "Suspend", "resume": "Resume", "check": "Check", "delete": "Delete",
           "lock": "Lock", "unlock": "Unlock", "update": "Update"}


@dataclass
class ActionState:
    name: str
    label: str
    enabled: bool
    reason: str = ""
    # Shown under the buttons (a lock, an action in progress, the role);
    # other refusals ("not allowed in state ...") only as the button's title.
    prominent: bool = False


def action_states(stack, role, user):
    """``{action: ActionState}`` for lock, unlock, suspend, resume, check, delete, update."""
    states = {}
    for name, label in STARTED.items():
        states[name] = ActionState(name, label, *_availability(stack, role, user, name))
    return states


def disabled_reasons(states):
    """``[(labels, reason)]``: each distinct reason once, with the actions it disables."""
    grouped = {}
    for state in states.values():
        if not state.enabled and state.prominent:
            grouped.setdefault(state.reason, []).append(state.label)
    return [(", ".join(labels), reason) for reason, labels in grouped.items()]


def _availability(stack, role, user, name):
    if ROLE_RANK[role] < ROLE_RANK[Role.MEMBER]:
        return False, f"Your role in this project ({role.value}) may only look.", True
    refusal = locking.lock_change_refusal(stack, user) if name in ("lock", "unlock") else None
    if refusal is None and name != "lock":  # a lock's level is chosen in its form
        refusal = consent_refusal(stack, name)  # an imported stack waiting for its owner
    if refusal is not None:
        return False, refusal.message, True
    if can_proceed(getattr(stack, f"begin_{name}")):  # what the door asks first
        return True, "", False
    refusal = st.refusal_for(stack, name.upper())
    return False, refusal.message, isinstance(refusal, (StackLocked, ActionInProgress))
