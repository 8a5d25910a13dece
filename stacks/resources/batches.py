"""Batch planning of a group's rolling update or batched create (pure: no database).

A group of ``current`` members, ``up_to_date`` of them already built from
the new definition, moves to ``target`` members in batches: each batch
sets the group's capacity and gives the new definition to at most
``batch_size`` members (new ones first, then old ones), keeping at least
``min_in_service`` members that are not being changed. The arithmetic is
Heat's (``heat.scaling.rolling_update``), so a template gets the same
batches here as there.
"""
import re


def needs_update(target, current, up_to_date):
    """True while a batch is left: the group is not yet ``target`` members all up to date."""
    return not (up_to_date >= current == target)


def next_batch(target, current, up_to_date, batch_size, min_in_service):
    """``(capacity, changed)`` of the next batch: the group's size after it and how many
    members get the new definition in it (new members first, then updated ones)."""
    if up_to_date > current:
        raise ValueError("more members up to date than in the group")
    in_service = min(min_in_service, target, current)
    changed = min(batch_size, max(target - up_to_date, 0))
    # Those not changed are kept in service: as many as the target leaves room for,
    # never fewer than min_in_service (the group then grows past its target for a while).
    kept = max(min(current, target - changed), in_service)
    return changed + kept, changed


def plan(target, current, *, batch_size, min_in_service, surplus_stays):
    """Every batch of the update, as ``[(capacity, changed), ...]``.

    ``surplus_stays``: members made past the larger of ``current`` and
    ``target`` (to keep ``min_in_service``) stay and the oldest go, as in an
    auto scaling group; otherwise (a resource group, whose members keep
    their indexes) the surplus is removed at the end and does not count as
    up to date.
    """
    batches, up_to_date = [], 0
    while needs_update(target, current, up_to_date):
        capacity, changed = next_batch(target, current, up_to_date, batch_size, min_in_service)
        batches.append((capacity, changed))
        surplus = 0 if surplus_stays else max(capacity - max(current, target), 0)
        up_to_date += changed - surplus
        current = capacity
    return batches


def batch_members(old, new_definition, *, capacity, changed, new_name):
    """The members' definitions after one batch, ``[(name, definition), ...]``.

    ``old``: the current members ``[(name, definition), ...]``, those to go
    first (removed or given the new definition) first. The last ``capacity``
    of them are kept; members are added (named by ``new_name()``) up to
    ``capacity``; of ``changed`` new definitions, the added members take
    theirs first and the rest go to kept members whose definition differs.
    ``new_definition(name)`` is a member's new definition.
    """
    kept = old[max(len(old) - capacity, 0):] if capacity else []
    to_update = changed - (capacity - len(kept))
    members = []
    for name, definition in kept:
        wanted = new_definition(name)
        if wanted != definition and to_update > 0:
            to_update -= 1
            members.append((name, wanted))
        else:
            members.append((name, definition))
    while len(members) < capacity:
        name = new_name()
        members.append((name, new_definition(name)))
    return members


_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")


def iso_duration_seconds(text):
    """Seconds of an ISO 8601 duration of the form ``PT#H#M#S`` (CloudFormation's
    PauseTime; as in Heat, no year, month, week or day). Raises ValueError otherwise."""
    found = _DURATION.match(text) if isinstance(text, str) else None
    if found is None:
        raise ValueError("Only ISO 8601 duration format of the form PT#H#M#S is supported.")
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    return hours * 3600 + minutes * 60 + seconds
