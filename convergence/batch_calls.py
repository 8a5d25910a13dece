"""A batch's deferred cloud calls and first looks at what they started.

The nodes of a batch lock their resources and start their actions
(``convergence.check_resource``); a plugin's ``handle_<action>`` that only calls
the cloud may wait to be called beside the batch's others (a cloud whose calls
overlap), and an action that waits on a cloud object gets its first look with
the batch's others: one list call per kind, their saves and owner records in
one transaction.
"""
from concurrent.futures import ThreadPoolExecutor

from django.db import connections, transaction

from convergence import waiting
from convergence.check_resource import action_check, handled, plugin_handle
from convergence.row_saves import saves_flush
from stacks import ownership


def _handle_in_thread(started):
    try:
        return plugin_handle(started)
    finally:
        connections.close_all()  # this thread's own, should a plugin have opened one


def handles_run(ctx):
    """Call the batch's deferred ``handle_<action>``s side by side, then go on with each.

    Only for a cloud whose calls are round trips (the driver's
    ``parallel_calls`` > 1) and plugins that call nothing but the cloud in
    them: every resource is already locked, with its creation key stored,
    so a crash here leaves what any crash after a cloud call leaves.
    Returns ``[(started, outcome), ...]``.
    """
    batch, ctx.handles[:] = list(ctx.handles), []
    if not batch:
        return []
    with ThreadPoolExecutor(max_workers=min(len(batch), ctx.parallel_calls)) as pool:
        results = list(pool.map(_handle_in_thread, batch))
    return [(started, handled(ctx, started, cookie=cookie, error=error))
            for started, (cookie, error) in zip(batch, results)]


def first_checks_run(ctx):
    """Look at the batch's new waits with one list call per kind, then check each.

    Returns ``[(started, outcome), ...]``: each is done, failed or waiting
    (a Waiter row, as if it had been checked alone). Where the list call
    fails, the plugin asks the cloud itself, as it would have.
    """
    checks, ctx.first_checks[:] = list(ctx.first_checks), []
    if not checks:
        return []
    seen = waiting.observe(ctx.plugin_context.cloud, [
        (cookie["await"]["kind"], cookie["await"]["id"]) for _, cookie in checks])
    results = []
    # One commit for the batch's waits: a crash before it leaves each resource
    # locked with its creation key, as a crash right after its cloud call would.
    # Their owner records go in one statement, in the same transaction.
    with transaction.atomic():
        ctx.pending_holds, ctx.saves = [], []
        try:
            for started, cookie in checks:
                target = cookie["await"]
                status, listed = seen.get((target["kind"], target["id"]), (None, None))
                results.append((started, action_check(
                    ctx, started.res, action=started.action, plugin=started.plugin,
                    cookie=waiting.with_observed(cookie, status, listed),
                    props=started.props, pending=started.pending, entity=started.entity)))
            saves_flush(ctx)  # their waits' and finishes' UPDATEs: one statement
            ownership.holds_take_many(ctx.pending_holds)
        finally:
            ctx.pending_holds = ctx.saves = None
    return results
