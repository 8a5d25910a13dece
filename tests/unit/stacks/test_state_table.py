"""The lock seed's state table, cell by cell, through the django-fsm transitions.

No database: a Stack instance in each state tries each action's transition;
refusals are the errors every entry point returns (``refusal_for``).
"""
import pytest
from django_fsm import TransitionNotAllowed

from heatweb import exceptions as exc
from stacks.models import Stack
from stacks.models import states as st

ACTIONS = ("UPDATE", "DELETE", "SUSPEND", "RESUME", "CHECK", "LOCK", "UNLOCK")

# The seed's table (001): what each lock-related state allows.
SEED_TABLE = {
    "LOCK_IN_PROGRESS": set(),
    "LOCK_COMPLETE": {"UNLOCK", "LOCK"},
    "LOCK_FAILED": {"UNLOCK", "DELETE", "LOCK"},
    "UNLOCK_IN_PROGRESS": set(),
    "UNLOCK_COMPLETE": {"UPDATE", "DELETE", "SUSPEND", "CHECK", "LOCK"},
    "UNLOCK_FAILED": {"DELETE", "UNLOCK"},
}


def attempt(state, action, pre_lock_state="CREATE_COMPLETE"):
    stack = Stack(name="s", state=state, pre_lock_state=pre_lock_state, lock_level="all")
    try:
        getattr(stack, f"begin_{action.lower()}")()
    except TransitionNotAllowed:
        return st.refusal_for(stack, action)
    return None


@pytest.mark.parametrize("state", sorted(SEED_TABLE))
@pytest.mark.parametrize("action", ACTIONS)
def test_seed_state_table(state, action):
    refusal = attempt(state, action)
    if action in SEED_TABLE[state]:
        assert refusal is None
    else:
        assert isinstance(refusal, exc.Conflict), refusal
        assert refusal.status == 409


def test_locked_refusals_say_why():
    refusal = attempt("LOCK_COMPLETE", "UPDATE")
    assert isinstance(refusal, exc.StackLocked)
    assert "locked at level all" in refusal.message and "unlock it first" in refusal.message


def test_resume_after_unlock_only_when_suspended_before_the_lock():
    assert attempt("UNLOCK_COMPLETE", "RESUME", pre_lock_state="SUSPEND_COMPLETE") is None
    assert attempt("UNLOCK_COMPLETE", "RESUME") is not None
    assert isinstance(attempt("UNLOCK_COMPLETE", "UPDATE", pre_lock_state="SUSPEND_COMPLETE"),
                      exc.NotSupported)


@pytest.mark.parametrize("state", ["INIT_COMPLETE", "DELETE_COMPLETE", "CREATE_IN_PROGRESS",
                                   "UPDATE_IN_PROGRESS"])
def test_lock_only_from_a_final_state(state):
    assert isinstance(attempt(state, "LOCK"), exc.Conflict)


@pytest.mark.parametrize("state", ["CREATE_COMPLETE", "UPDATE_FAILED", "SUSPEND_COMPLETE",
                                   "CHECK_COMPLETE", "RESUME_FAILED"])
def test_lock_from_final_states(state):
    assert attempt(state, "LOCK") is None


def test_heat_rules_outside_locks():
    assert isinstance(attempt("SUSPEND_COMPLETE", "UPDATE"), exc.NotSupported)
    assert isinstance(attempt("CREATE_COMPLETE", "RESUME"), exc.Conflict)
    assert isinstance(attempt("DELETE_IN_PROGRESS", "UPDATE"), exc.ActionInProgress)
    assert isinstance(attempt("UPDATE_IN_PROGRESS", "SUSPEND"), exc.ActionInProgress)
    # Convergence: a new update supersedes a create or update in flight.
    assert attempt("CREATE_IN_PROGRESS", "UPDATE") is None
    assert attempt("UPDATE_IN_PROGRESS", "UPDATE") is None
