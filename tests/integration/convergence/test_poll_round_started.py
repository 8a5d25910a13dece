"""A poll round asked for while one runs is a new round, not the running one.

The running round may have read the stacks before the caller's change (a lock
that cancels an update: its waiters are to be aborted now). Seen in CI: the
running round kept 50 cancelled waits, rescheduled them 600 s later, and the
lock waited for them past its test's 2 minutes.
"""
import time

import pytest

from convergence import waiting
from convergence.models import PollRound


@pytest.fixture
def round_row(db):
    return PollRound.objects.create(project_id="p-round", token="t-first",
                                    due_at=time.time() + 0.01)


def test_a_round_not_begun_and_due_soon_is_kept(round_row, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as sent:
        waiting.round_ensure("p-round", countdown=0)
    row = PollRound.objects.get(pk="p-round")
    assert (row.token, len(sent)) == ("t-first", 0)


def test_a_round_that_began_gives_way_to_a_new_one(round_row, django_capture_on_commit_callbacks):
    waiting.round_run("p-round", "t-first")  # no waiters: it begins, then ends the round
    assert not PollRound.objects.filter(pk="p-round").exists()
    PollRound.objects.create(project_id="p-round", token="t-first", due_at=time.time() - 0.2,
                             started_at=time.time() - 0.2)  # begun and still running
    with django_capture_on_commit_callbacks() as sent:
        waiting.round_ensure("p-round", countdown=0)
    row = PollRound.objects.get(pk="p-round")
    assert row.token != "t-first" and row.started_at is None and len(sent) == 1
    waiting._round_reschedule("p-round", "t-first")  # the running round's end: dropped
    assert PollRound.objects.get(pk="p-round").token == row.token


def test_a_stale_round_task_does_not_begin(round_row):
    waiting.round_run("p-round", "t-other")
    assert PollRound.objects.get(pk="p-round").started_at is None
