"""A batch's resource saves, written together at the end of its transaction.

A node's action writes its resource row when it waits and when it finishes,
each a compare-and-swap on ``engine_id`` (``convergence.rows``). A batch of
them (the first looks of a batch of creates, a ``waits_complete`` task) keeps
them in ``ctx.saves`` and writes them with one statement per shape; each row
keeps its own condition, and what follows a save (the wait registered, or
the result kept after a broken lock) runs as it would have after a single one.
"""
from dataclasses import dataclass

from convergence.rows import rows_update
from stacks import ownership
from stacks.models import Resource


@dataclass
class RowSave:
    """A locked resource's conditional UPDATE, written with its batch's others
    (``saves_flush``); ``saved`` or ``lost`` (the lock was broken meanwhile) runs after."""

    res: object
    where: dict
    values: dict
    saved: object = None
    lost: object = None
    release: bool = False  # its owner records go (a delete completed)


def saves_flush(ctx):
    """Write the batch's deferred resource saves (``ctx.saves``) in one statement per shape.

    Each keeps its own compare-and-swap on ``engine_id``: a row whose lock was
    broken meanwhile is left out and handled as a single save would handle it.
    """
    batch, ctx.saves[:] = list(ctx.saves), []
    if not batch:
        return
    ownership.holds_release_many([save.res.pk for save in batch if save.release])
    saved = rows_update(Resource, [(save.where, save.values) for save in batch])
    for save in batch:
        then = save.saved if save.res.pk in saved else save.lost
        if then is not None:
            then()
