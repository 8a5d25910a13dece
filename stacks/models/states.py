"""The stack and resource state tables, in one place.

A state is ``ACTION_STATUS`` (``CREATE_IN_PROGRESS``). The django-fsm
transitions on ``Stack`` and ``Resource`` take their allowed sources from
here, and ``refusal_for`` turns a refused transition into the Heat error a
user sees, so every way in (API, pages, admin, nested stacks, signals) is
refused the same way.
"""
from heatweb import exceptions as exc

ACTIONS = ("INIT", "CREATE", "DELETE", "UPDATE", "ROLLBACK", "SUSPEND", "RESUME",
           "ADOPT", "SNAPSHOT", "CHECK", "RESTORE", "LOCK", "UNLOCK")
IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
STATUSES = (IN_PROGRESS, COMPLETE, FAILED)
ALL_STATES = tuple(f"{a}_{s}" for a in ACTIONS for s in STATUSES)
STATE_CHOICES = [(s, s) for s in ALL_STATES]
INIT_COMPLETE = "INIT_COMPLETE"


def split(state):
    action, _, status = state.partition("_")
    return action, status


def states(actions=ACTIONS, statuses=STATUSES, exclude=()):
    return [f"{a}_{s}" for a in actions for s in statuses if f"{a}_{s}" not in exclude]


IN_PROGRESS_STATES = states(statuses=(IN_PROGRESS,))
FINAL_STATES = states(statuses=(COMPLETE, FAILED))
# A stack holds a lock over its nested stacks while in one of these states
# (an unlocking parent releases its children one by one, each still locked).
LOCK_HOLDING_STATES = ("LOCK_IN_PROGRESS", "LOCK_COMPLETE", "LOCK_FAILED")
# A stack is locked itself while its lock holds or is being released.
LOCKED_STATES = (*LOCK_HOLDING_STATES, "UNLOCK_IN_PROGRESS", "UNLOCK_FAILED")
# Actions that run under the resource lock but leave the resource's state as
# it was (a suspended server stays SUSPEND_COMPLETE while locked).
STATELESS_ACTIONS = ("LOCK", "UNLOCK")

# Stack: where each user-visible action may start from -------------------------
_NOT_LOCKED_FINAL = [s for s in FINAL_STATES if s not in LOCKED_STATES]

STACK_SOURCES = {
    "CREATE": [INIT_COMPLETE],
    # Convergence: a new update may start while a create or update is in
    # flight; its traversal supersedes the running one.
    "UPDATE": [s for s in _NOT_LOCKED_FINAL
               if split(s)[0] not in ("INIT", "SUSPEND", "DELETE")]
    + ["CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"],
    # Convergence: a delete supersedes any action in progress but a lock's or
    # another delete's (a stack waiting for an agent that never comes can go).
    "DELETE": [s for s in _NOT_LOCKED_FINAL if s != "DELETE_COMPLETE"]
    + ["LOCK_FAILED", "UNLOCK_FAILED"]
    + [s for s in IN_PROGRESS_STATES if split(s)[0] not in ("DELETE", "LOCK", "UNLOCK")],
    "SUSPEND": [s for s in _NOT_LOCKED_FINAL
                if split(s)[0] not in ("INIT", "DELETE")
                and (split(s)[1] == COMPLETE or split(s)[0] == "SUSPEND")],
    "RESUME": ["SUSPEND_COMPLETE", "RESUME_FAILED", "RESUME_COMPLETE", "UNLOCK_COMPLETE"],
    "CHECK": [s for s in _NOT_LOCKED_FINAL if split(s)[0] not in ("INIT", "DELETE")],
    "ROLLBACK": ["CREATE_FAILED", "UPDATE_FAILED", "UPDATE_IN_PROGRESS", "CREATE_IN_PROGRESS"],
    "LOCK": [s for s in FINAL_STATES if s not in ("INIT_COMPLETE", "DELETE_COMPLETE",
                                                  "UNLOCK_FAILED")],
    "UNLOCK": ["LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_FAILED"],
}

# Resource: where each resource action may start from ----------------------------
RESOURCE_SOURCES = {
    "CREATE": [INIT_COMPLETE, "CREATE_FAILED"],
    "UPDATE": [s for s in FINAL_STATES if split(s)[0] not in ("INIT", "DELETE")],
    "DELETE": [s for s in FINAL_STATES if s != "DELETE_COMPLETE"],
    "SUSPEND": [s for s in FINAL_STATES if split(s)[0] not in ("INIT", "DELETE")
                and (split(s)[1] == COMPLETE or split(s)[0] == "SUSPEND")],
    "RESUME": ["SUSPEND_COMPLETE", "RESUME_FAILED", "RESUME_COMPLETE"],
    "CHECK": [s for s in FINAL_STATES if split(s)[0] not in ("DELETE",)],
    "ROLLBACK": [s for s in FINAL_STATES if s != "DELETE_COMPLETE"],
}


def suspended_if_unlocked(stack):
    """Resume from UNLOCK_COMPLETE only when the stack was suspended before the lock."""
    return stack.state != "UNLOCK_COMPLETE" or stack.pre_lock_state.startswith("SUSPEND")


def not_suspended_under_unlock(stack):
    return not (stack.state == "UNLOCK_COMPLETE" and stack.pre_lock_state.startswith("SUSPEND"))


def lock_holder(stack):
    """Who holds a lock over ``stack``: itself when locked, else the nearest ancestor
    in a lock-holding state; None when nothing does.

    The one answer asked by the transitions' conditions, signals, pages and
    nested stacks. Costs one query per ancestor (none for a top-level stack).
    """
    if stack.state in LOCKED_STATES:
        return stack
    return ancestor_lock_holder(stack)


def ancestor_lock_holder(stack):
    """The nearest ancestor of ``stack`` holding a lock over it, or None."""
    current, seen = stack, {stack.pk}
    while current.parent_id is not None and current.parent_id not in seen:
        seen.add(current.parent_id)
        current = current.parent
        if current.state in LOCK_HOLDING_STATES:
            return current
    return None


def no_ancestor_lock(stack):
    """Condition: no ancestor holds a lock (a nested stack follows its parent's lock)."""
    return ancestor_lock_holder(stack) is None


def parent_locking(stack):
    """Condition of a cascaded lock: the parent is taking its lock now."""
    return stack.parent_id is not None and stack.parent.state == "LOCK_IN_PROGRESS"


def lock_refusal(stack):
    """The StackLocked error when a lock holds over ``stack`` (see ``lock_holder``), else None."""
    holder = lock_holder(stack)
    return None if holder is None else exc.StackLocked(holder.lock_message())


def refusal_for(stack, action):
    """The Heat error for a stack whose state refuses ``action``."""
    state = stack.state
    current, status = split(state)
    name = stack.name
    holder = ancestor_lock_holder(stack)
    if holder is not None and action == "UNLOCK":
        return exc.StackLocked(f"Stack {name} follows the lock of its parent stack "
                               f"{holder.name}; unlock the parent first.")
    if action == "UNLOCK" and state in LOCKED_STATES:
        return exc.ActionInProgress(stack_name=name, action=current)
    locked = lock_refusal(stack)
    if locked is not None:
        return locked
    if status == IN_PROGRESS:
        return exc.ActionInProgress(stack_name=name, action=current)
    if action == "UNLOCK":
        return exc.InvalidStackState(
            f"Stack {name} is not locked (state {state}); only a locked stack, or one "
            f"whose lock or unlock failed, can be unlocked.")
    current = split(stack.effective_state)[0]
    if action == "UPDATE" and current in ("SUSPEND", "DELETE", "INIT"):
        verb = {"SUSPEND": "suspended", "DELETE": "deleted", "INIT": "not created"}[current]
        return exc.NotSupported(f"Updating a stack when it is {verb} is not supported.")
    if action == "CANCEL_UPDATE":
        return exc.NotSupported(
            f"Cancelling update when stack is {state} is not supported.")
    return exc.InvalidStackState(
        f"{action.capitalize()} of stack {name} is not allowed in state {state}.")
