"""Batch planning of rolling updates and batched creates: Heat's arithmetic
(``heat.scaling.rolling_update.next_batch`` and the groups' batch loops)."""
import pytest

from stacks.resources.batches import batch_members, iso_duration_seconds, next_batch, plan


@pytest.mark.parametrize("args, batch", [
    ((6, 6, 0, 2, 0), (6, 2)),    # in place: capacity stays, 2 change
    ((6, 6, 0, 2, 5), (7, 2)),    # one member more to keep 5 in service
    ((6, 6, 6, 2, 0), (6, 0)),    # all up to date: nothing changes
    ((5, 0, 0, 2, 0), (2, 2)),    # a batched create: the first two
    ((3, 4, 0, 1, 0), (3, 1)),    # shrinking while updating
])
def test_next_batch(args, batch):
    assert next_batch(*args) == batch


def test_more_up_to_date_than_members_is_refused():
    with pytest.raises(ValueError):
        next_batch(4, 2, 3, 1, 0)


@pytest.mark.parametrize("target, current, size, in_service, batches", [
    (6, 6, 2, 0, [(6, 2)] * 3),
    (4, 4, 1, 4, [(5, 1)] * 5 + [(4, 0)]),
    (4, 4, 2, 4, [(6, 2)] * 3 + [(4, 0)]),
    (5, 5, 2, 0, [(5, 2), (5, 2), (5, 1)]),
    (3, 3, 2, 4, [(5, 2), (5, 2), (4, 1), (3, 0)]),
    (5, 0, 2, 0, [(2, 2), (4, 2), (5, 1)]),  # batch_create
])
def test_resource_group_plan(target, current, size, in_service, batches):
    """As Heat's ResourceGroup: members made past the target are removed at the end."""
    assert plan(target, current, batch_size=size, min_in_service=in_service,
                surplus_stays=False) == batches


@pytest.mark.parametrize("target, current, size, in_service, batches", [
    (4, 4, 1, 0, [(4, 1)] * 4),
    (3, 4, 1, 0, [(3, 1)] * 3),
    (4, 4, 1, 4, [(5, 1)] * 4 + [(4, 0)]),
    (4, 4, 2, 4, [(6, 2)] * 2 + [(4, 0)]),
    (5, 5, 2, 0, [(5, 2), (5, 2), (5, 1)]),
])
def test_scaling_group_plan(target, current, size, in_service, batches):
    """As Heat's instance and auto scaling groups: members made to keep min_in_service stay."""
    assert plan(target, current, batch_size=size, min_in_service=in_service,
                surplus_stays=True) == batches


def test_batch_members_updates_the_first_listed_then_keeps_the_rest():
    old = [(n, "old") for n in ("5", "4", "3", "2", "1", "0")]
    fresh = iter(["6"])
    members = batch_members(old, lambda name: "new", capacity=6, changed=2,
                            new_name=lambda: next(fresh))
    assert members == [("5", "new"), ("4", "new"), ("3", "old"), ("2", "old"),
                       ("1", "old"), ("0", "old")]


def test_batch_members_drops_the_first_listed_and_skips_the_up_to_date():
    old = [("9", "old"), ("2", "new"), ("1", "old"), ("0", "old")]
    members = batch_members(old, lambda name: "new", capacity=3, changed=1, new_name=None)
    assert members == [("2", "new"), ("1", "new"), ("0", "old")]
    assert batch_members(old, lambda n: "new", capacity=0, changed=0, new_name=None) == []


def test_batch_members_adds_members_first():
    old = [("1", "old"), ("0", "old")]
    fresh = iter(["2"])
    members = batch_members(old, lambda name: f"new{name}", capacity=3, changed=2,
                            new_name=lambda: next(fresh))
    assert members == [("1", "new1"), ("0", "old"), ("2", "new2")]


@pytest.mark.parametrize("text, seconds", [("PT0S", 0), ("PT1M", 60), ("PT1H2M3S", 3723),
                                           ("PT", 0)])
def test_iso_durations(text, seconds):
    assert iso_duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["P1D", "1M", "PT1.5S", 5, ""])
def test_iso_durations_heat_refuses(text):
    with pytest.raises(ValueError, match="PT#H#M#S"):
        iso_duration_seconds(text)
