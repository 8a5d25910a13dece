"""SNAPSHOT, RESTORE, ABANDON and ADOPT in the state table (no database)."""
import pytest

from heatweb import exceptions as exc
from stacks.models import Stack
from stacks.models import states as st
from tests.unit.stacks.test_state_table import attempt

LOCKED = ("LOCK_IN_PROGRESS", "LOCK_COMPLETE", "LOCK_FAILED", "UNLOCK_IN_PROGRESS",
          "UNLOCK_FAILED")


@pytest.mark.parametrize("action", ["SNAPSHOT", "RESTORE", "ABANDON"])
@pytest.mark.parametrize("state", LOCKED)
def test_a_locked_stack_refuses(action, state):
    refusal = attempt(state, action)
    assert isinstance(refusal, (exc.StackLocked, exc.ActionInProgress)), refusal
    assert refusal.status == 409


@pytest.mark.parametrize("action", ["SNAPSHOT", "RESTORE", "ABANDON"])
@pytest.mark.parametrize("state", ["CREATE_COMPLETE", "UPDATE_FAILED", "SNAPSHOT_COMPLETE",
                                   "RESTORE_COMPLETE", "ADOPT_COMPLETE", "CHECK_COMPLETE",
                                   "UNLOCK_COMPLETE"])
def test_allowed_from_a_finished_action(action, state):
    assert attempt(state, action) is None


@pytest.mark.parametrize("action", ["SNAPSHOT", "RESTORE", "ABANDON"])
@pytest.mark.parametrize("state", ["CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS",
                                   "SNAPSHOT_IN_PROGRESS", "RESTORE_IN_PROGRESS"])
def test_refused_while_an_action_runs(action, state):
    assert isinstance(attempt(state, action), exc.ActionInProgress)


def test_suspended_stack_refuses_snapshot_and_restore():
    for action in ("SNAPSHOT", "RESTORE"):
        assert isinstance(attempt("SUSPEND_COMPLETE", action), exc.InvalidStackState)
        assert attempt("UNLOCK_COMPLETE", action, pre_lock_state="SUSPEND_COMPLETE") is not None
    assert attempt("SUSPEND_COMPLETE", "ABANDON") is None


def test_adopt_only_starts_a_new_stack():
    assert attempt("INIT_COMPLETE", "ADOPT") is None
    assert attempt("CREATE_COMPLETE", "ADOPT") is not None


@pytest.mark.parametrize("state", ["CREATE_COMPLETE", "SUSPEND_COMPLETE"])
def test_cancels_the_state_refuses_are_not_supported(state):
    stack = Stack(name="s", state=state)
    for action in ("CANCEL_UPDATE", "CANCEL_WITHOUT_ROLLBACK"):
        refusal = st.refusal_for(stack, action)
        assert isinstance(refusal, exc.NotSupported)
        assert refusal.message == f"Cancelling update when stack is {state} is not supported."
