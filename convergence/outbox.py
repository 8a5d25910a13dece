"""The outbox: tasks recorded in the transaction that made their work, then published.

A stack action commits its traversal and the tasks that start it together
(``outbox_add``); the writer publishes them right after the commit while it
holds a short claim. A writer that dies between the commit and the publish
(a killed web process) leaves the rows behind, and the relay that every
engine runs from its heartbeat thread (``outbox_relay``) publishes them once
the claim lapses. Publishing twice is harmless (every task is idempotent);
losing one is what this prevents.
"""
import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from convergence.models import OutboxMessage
from heatweb.celery import app

log = logging.getLogger(__name__)


def _lease():
    return timedelta(seconds=settings.HEATWEB["OUTBOX_CLAIM_SECONDS"])


def outbox_add(messages, *, stack_id, traversal_id, delay_seconds=0):
    """Record ``[(task_name, args), ...]`` to publish after the current transaction commits.

    Undelayed messages are claimed by this writer and published by it on
    commit; delayed ones (``delay_seconds``) are left to the relay.
    """
    now = timezone.now()
    token = uuid.uuid4().hex if not delay_seconds else ""
    OutboxMessage.objects.bulk_create(
        [OutboxMessage(task=name, args=args, stack_id=stack_id, traversal_id=traversal_id,
                       due_at=now + timedelta(seconds=delay_seconds), claimed_by=token,
                       claimed_until=now + _lease() if token else None)
         for name, args in messages], batch_size=500)
    if token:
        transaction.on_commit(lambda: _publish_claimed(token))


def outbox_relay():
    """Publish messages that are due and unclaimed (or whose claim lapsed); returns how many."""
    now = timezone.now()
    free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    ids = list(OutboxMessage.objects.filter(free, due_at__lte=now)
               .values_list("pk", flat=True)[:500])
    if not ids:
        return 0
    token = uuid.uuid4().hex
    OutboxMessage.objects.filter(free, pk__in=ids).update(claimed_by=token,
                                                          claimed_until=now + _lease())
    return _publish_claimed(token)


def outbox_discard(traversal_id):
    """A traversal ended: what it still had queued (e.g. its timeout) is moot."""
    OutboxMessage.objects.filter(traversal_id=traversal_id).delete()


def _publish_claimed(token):
    rows = list(OutboxMessage.objects.filter(claimed_by=token).values_list("pk", "task", "args"))
    published = []
    try:
        for pk, name, args in rows:
            app.send_task(name, args=args)
            published.append(pk)
    except Exception:  # noqa: BLE001 - the broker is down: the relay retries the rest
        log.exception("publishing outbox messages")
    OutboxMessage.objects.filter(pk__in=published).delete()
    return len(published)
