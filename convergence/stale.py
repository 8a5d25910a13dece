"""Messages of superseded traversals, dropped as they arrive: no task, no pool process.

A task of a traversal that is no longer its stack's current one (or whose
stack stopped) does nothing (``nodes_run`` returns at once), yet each cost a
pool process and a turn of the queue: after a crash with a long backlog,
a worker drained 1,252 such ``converge_nodes`` at about one a second while
the work that mattered waited behind them. The worker's main process now
looks at each message of these tasks before making it a task
(``skip_superseded``, their Celery ``Strategy``) and acknowledges the stale
ones at once. A traversal once superseded never becomes current again, so
it is remembered: the rest of its messages go without a query.
"""
import logging
from collections import OrderedDict

from celery.worker.strategy import default
from django.db import DatabaseError, connection

from stacks.models import Stack
from stacks.models import states as st

log = logging.getLogger(__name__)
REMEMBERED = 10_000
_superseded = OrderedDict()


def traversal_stale(stack_id, traversal_id):
    """True when a task of ``traversal_id`` has nothing to do: superseded, or its stack stopped."""
    if traversal_id in _superseded:
        return True
    row = Stack.objects.filter(pk=stack_id).values_list("current_traversal", "state").first()
    if row is None or row[0] != traversal_id:
        _superseded[traversal_id] = True
        if len(_superseded) > REMEMBERED:
            _superseded.popitem(last=False)
        return True
    return row[1] not in st.IN_PROGRESS_STATES


def _message_stale(message):
    try:
        args = message.decode()[0]
        return traversal_stale(args[0], args[1])
    except DatabaseError:
        connection.close()  # a broken connection: the next message opens another
        log.exception("checking whether a message is stale")
    except Exception:  # noqa: BLE001 - an odd message is the task's to judge, not ours
        log.exception("checking whether a message is stale")
    return False


def skip_superseded(task, app, consumer, **kwargs):
    """Celery's default strategy, after a look at the message's ``(stack_id, traversal_id)``."""
    handle = default(task, app, consumer, **kwargs)
    errors = consumer.connection_errors

    def on_message(message, body, ack, reject, callbacks, **options):
        if _message_stale(message):
            log.debug("dropped %s of a superseded or stopped traversal", task.name)
            ack(log, errors)
            return None
        return handle(message, body, ack, reject, callbacks, **options)

    return on_message
