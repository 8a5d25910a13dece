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

# Lock modes: what a lock may let through (``{"lock": {"allow": [...]}}``), and
# the mode each stack action or door action needs. Nothing else passes a lock.
LOCK_MODES = ("signal", "suspend_resume", "check")
MODE_OF = {"SUSPEND": "suspend_resume", "RESUME": "suspend_resume", "CHECK": "check",
           "SCALE": "signal", "SIGNAL": "signal"}

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
    # A group's members resized by a signal (an alarm): an update, which a lock
    # allowing ``signal`` lets through (below).
    "SCALE": [s for s in _NOT_LOCKED_FINAL if split(s)[0] not in ("INIT", "SUSPEND", "DELETE")]
    + ["CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"],
    "ROLLBACK": ["CREATE_FAILED", "UPDATE_FAILED", "UPDATE_IN_PROGRESS", "CREATE_IN_PROGRESS"],
    "LOCK": [s for s in FINAL_STATES if s not in ("INIT_COMPLETE", "DELETE_COMPLETE",
                                                  "UNLOCK_FAILED")],
    "UNLOCK": ["LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_FAILED"],
    # Heat refuses a snapshot while an action is in progress. A suspended stack is
    # refused too: its resources would leave SUSPEND_COMPLETE and never resume.
    "SNAPSHOT": [s for s in _NOT_LOCKED_FINAL
                 if split(s)[0] not in ("INIT", "DELETE", "SUSPEND")],
    # A restore is a convergence update to the snapshot's template (not while one runs).
    "RESTORE": [s for s in _NOT_LOCKED_FINAL
                if split(s)[0] not in ("INIT", "SUSPEND", "DELETE")],
    "ADOPT": [INIT_COMPLETE],
    # Abandon takes the stack out of heatweb at once, so nothing may be running on it.
    "ABANDON": [s for s in _NOT_LOCKED_FINAL if split(s)[0] not in ("INIT", "DELETE")]
    + ["DELETE_FAILED"],
}
# A lock whose mode allows an action lets it start from LOCK_COMPLETE (the
# condition ``lock_permits`` asks the mode); the lock is taken again when it settles.
for _action in ("SUSPEND", "RESUME", "CHECK", "SCALE"):
    STACK_SOURCES[_action].append("LOCK_COMPLETE")
# A lock with ``interrupt`` stops (cancel) or rolls back (rollback: the ROLLBACK
# sources) an action in progress, then takes the lock when the stack settles.
STACK_SOURCES["INTERRUPT"] = [s for s in IN_PROGRESS_STATES
                              if split(s)[0] in ("CREATE", "UPDATE", "ROLLBACK", "SUSPEND",
                                                 "RESUME", "CHECK")]
# The lock taken again after an action under it (or one a lock interrupted) settled.
STACK_SOURCES["LOCK_RESUME"] = list(FINAL_STATES)

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
    "SNAPSHOT": [s for s in FINAL_STATES if split(s)[0] not in ("INIT", "DELETE")],
    "ADOPT": [INIT_COMPLETE, "ADOPT_FAILED"],
}


def is_suspended(state, pre_lock_state=""):
    """The stack is suspended, or was when it was locked and still is (a lock and an
    unlock leave resources as they were: LOCK/UNLOCK_COMPLETE over a suspended stack)."""
    if state == "SUSPEND_COMPLETE":
        return True
    return split(state)[0] in STATELESS_ACTIONS and pre_lock_state == "SUSPEND_COMPLETE"


def suspended_if_unlocked(stack):
    """Resume from UNLOCK_COMPLETE (or under a lock) only when the stack was suspended
    before the lock."""
    return stack.state not in ("UNLOCK_COMPLETE", "LOCK_COMPLETE") or \
        stack.pre_lock_state.startswith("SUSPEND")


def not_suspended_under_lock(stack):
    """Suspend under a lock only a stack that is not suspended underneath."""
    return stack.state != "LOCK_COMPLETE" or not stack.pre_lock_state.startswith("SUSPEND")


def not_suspended_under_unlock(stack):
    return not (stack.state == "UNLOCK_COMPLETE" and stack.pre_lock_state.startswith("SUSPEND"))


def lock_holder(stack):
    """Who holds a lock over ``stack``: itself when locked, else the nearest ancestor
    in a lock-holding state; None when nothing does.

    The one answer asked by the transitions' conditions, signals, pages and
    nested stacks. Costs one query per ancestor (none for a top-level stack).
    """
    if stack.state in LOCKED_STATES or stack.lock_pending:
        return stack
    return ancestor_lock_holder(stack)


def ancestor_lock_holder(stack):
    """The nearest ancestor of ``stack`` holding a lock over it, or None."""
    current, seen = stack, {stack.pk}
    while current.parent_id is not None and current.parent_id not in seen:
        seen.add(current.parent_id)
        current = current.parent
        if current.state in LOCK_HOLDING_STATES or current.lock_pending:
            return current
    return None


def no_ancestor_lock(stack):
    """Condition: no ancestor holds a lock (a nested stack follows its parent's lock)."""
    return ancestor_lock_holder(stack) is None


def no_lock_over(stack):
    """Condition: no ancestor holds a lock, and no action runs under the stack's own lock."""
    return not stack.lock_pending and ancestor_lock_holder(stack) is None


def lock_allows(holder, mode):
    return mode is not None and mode in (holder.lock_allow or [])


def lock_permits(action):
    """Condition of ``action``: no lock holds over the stack, or its mode allows the action."""
    mode = MODE_OF.get(action)

    def permits(stack):
        holder = lock_holder(stack)
        return holder is None or lock_allows(holder, mode)
    permits.__name__ = f"lock_permits_{action.lower()}"
    return permits


def lock_resumable(stack):
    """Condition of taking a lock again: one waits for the stack's action to settle."""
    return bool(stack.lock_pending)


def lock_kept(stack):
    """The ``lock_pending`` to store when ``stack`` starts an action its lock allows (the
    lock is taken again when the action settles), or None when no lock of its own holds.

    A nested stack whose parent runs the action under the parent's lock keeps
    none: the parent's lock, taken again, takes the child's too.
    """
    if stack.state != "LOCK_COMPLETE":
        return stack.lock_pending or None
    parent = ancestor_lock_holder(stack)
    if parent is not None and parent.lock_pending:
        return None
    return {"pre_lock_state": stack.pre_lock_state, "after": None}


def parent_locking(stack):
    """Condition of a cascaded lock: the parent is taking its lock now."""
    return stack.parent_id is not None and stack.parent.state == "LOCK_IN_PROGRESS"


def lock_refusal(stack, action=None):
    """The StackLocked error when a lock holds over ``stack`` (see ``lock_holder``) whose
    mode does not allow ``action`` (``MODE_OF``), else None."""
    holder = lock_holder(stack)
    if holder is None or lock_allows(holder, MODE_OF.get(action)):
        return None
    return exc.StackLocked(holder.lock_message())


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
    if action == "UNLOCK" and stack.lock_pending:  # the lock waits for the stack to settle
        return exc.ActionInProgress(stack_name=name,
                                    action=current if status == IN_PROGRESS else "LOCK")
    locked = lock_refusal(stack, action)
    if locked is not None:
        return locked
    if action in ("CANCEL_UPDATE", "CANCEL_WITHOUT_ROLLBACK"):
        return exc.NotSupported(
            f"Cancelling update when stack is {state} is not supported.")
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
    return exc.InvalidStackState(
        f"{action.capitalize()} of stack {name} is not allowed in state {state}.")
