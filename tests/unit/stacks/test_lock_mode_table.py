"""Lock modes in the state table, row by row: what a lock allowing each mode lets through.

No database: a Stack instance in ``LOCK_COMPLETE`` with a mode tries each action's
transition; refusals are the door's (``refusal_for``), so an old lock (no mode)
refuses exactly what it did before.
"""
import itertools

import pytest
from django_fsm import TransitionNotAllowed

from heatweb import exceptions as exc
from stacks.models import Stack
from stacks.models import states as st

ACTIONS = ("UPDATE", "SCALE", "DELETE", "SUSPEND", "RESUME", "CHECK", "ROLLBACK", "LOCK",
           "UNLOCK")
# The mode each action needs under a lock; the others pass no lock.
NEEDS = {"SUSPEND": "suspend_resume", "RESUME": "suspend_resume", "CHECK": "check",
         "SCALE": "signal"}
MODE_SETS = [list(c) for n in range(len(st.LOCK_MODES) + 1)
             for c in itertools.combinations(st.LOCK_MODES, n)]


def stack_in(state, *, allow=(), pre_lock_state="CREATE_COMPLETE", pending=None):
    return Stack(name="s", state=state, pre_lock_state=pre_lock_state, lock_level="all",
                 lock_allow=list(allow), lock_pending=pending)


def attempt(stack, action):
    try:
        getattr(stack, f"begin_{action.lower()}")()
    except TransitionNotAllowed:
        return st.refusal_for(stack, action)
    return None


@pytest.mark.parametrize("allow", MODE_SETS, ids=lambda a: "+".join(a) or "nothing")
@pytest.mark.parametrize("action", ACTIONS)
def test_lock_complete_row_per_mode(allow, action):
    pre = "SUSPEND_COMPLETE" if action == "RESUME" else "CREATE_COMPLETE"
    refusal = attempt(stack_in("LOCK_COMPLETE", allow=allow, pre_lock_state=pre), action)
    if action in ("LOCK", "UNLOCK") or NEEDS.get(action) in allow:
        assert refusal is None
    else:
        assert isinstance(refusal, exc.StackLocked), refusal
        assert refusal.status == 409
        assert ("allows only" in refusal.message) == bool(allow), refusal.message


def test_suspend_and_resume_under_the_lock_follow_what_is_underneath():
    mode = ["suspend_resume"]
    assert isinstance(attempt(stack_in("LOCK_COMPLETE", allow=mode), "RESUME"),
                      exc.InvalidStackState)
    assert isinstance(attempt(stack_in("LOCK_COMPLETE", allow=mode,
                                       pre_lock_state="SUSPEND_COMPLETE"), "SUSPEND"),
                      exc.InvalidStackState)


@pytest.mark.parametrize("state", ["SUSPEND_IN_PROGRESS", "SUSPEND_COMPLETE", "CHECK_COMPLETE",
                                   "UPDATE_FAILED", "ROLLBACK_IN_PROGRESS"])
def test_a_lock_waiting_for_its_stack_holds(state):
    """While an action runs under the lock (or one it interrupted settles), it holds."""
    pending = {"pre_lock_state": None, "interrupted": "UPDATE (cancel)"}
    for action in ("UPDATE", "DELETE"):
        refusal = attempt(stack_in(state, pending=pending), action)
        assert isinstance(refusal, exc.Conflict), (state, action, refusal)
    assert isinstance(attempt(stack_in(state, pending=pending), "UNLOCK"), exc.ActionInProgress)
    assert st.lock_refusal(stack_in(state, pending=pending), "SIGNAL") is not None
    assert st.lock_refusal(stack_in(state, allow=["signal"], pending=pending), "SIGNAL") is None


def test_the_lock_is_taken_again_only_when_it_waits():
    assert attempt(stack_in("SUSPEND_COMPLETE", pending={"pre_lock_state": "X"}),
                   "LOCK_RESUME") is None
    assert attempt(stack_in("SUSPEND_COMPLETE"), "LOCK_RESUME") is not None
    assert attempt(stack_in("SUSPEND_IN_PROGRESS", pending={"pre_lock_state": "X"}),
                   "LOCK_RESUME") is not None


@pytest.mark.parametrize("state", st.STACK_SOURCES["INTERRUPT"])
def test_interrupt_cancel_from_an_action_in_progress(state):
    assert attempt(stack_in(state), "INTERRUPT") is None


@pytest.mark.parametrize("state", ["CREATE_COMPLETE", "DELETE_IN_PROGRESS", "LOCK_IN_PROGRESS",
                                   "UNLOCK_IN_PROGRESS"])
def test_interrupt_cannot_stop_a_delete_or_a_lock(state):
    assert attempt(stack_in(state), "INTERRUPT") is not None


def test_lock_kept_only_from_the_stacks_own_lock():
    assert st.lock_kept(stack_in("LOCK_COMPLETE", pre_lock_state="SUSPEND_COMPLETE")) == {
        "pre_lock_state": "SUSPEND_COMPLETE", "after": None}
    assert st.lock_kept(stack_in("CREATE_COMPLETE")) is None
    waiting = {"pre_lock_state": "CREATE_COMPLETE", "after": None}
    assert st.lock_kept(stack_in("SUSPEND_COMPLETE", pending=waiting)) == waiting
