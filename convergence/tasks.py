"""Celery tasks: thin, idempotent, taking only ids and primitives.

Tasks that do nothing for a superseded traversal are dropped by the
worker before they run (``convergence.stale``). This module is the top of
the engine: the layers below send its tasks by name (``app.send_task``, or
an outbox message), never importing it.
"""
from celery import shared_task

from convergence import nodes, services, wait_complete, waiting

SKIP_SUPERSEDED = "convergence.stale:skip_superseded"


@shared_task(name="convergence.converge_nodes", Strategy=SKIP_SUPERSEDED)
def converge_nodes(stack_id, traversal_id, node_list):
    nodes.nodes_run(stack_id, traversal_id, nodes=node_list)


@shared_task(name="convergence.poll_node")
def poll_node(stack_id, traversal_id, resource_id):
    """Kept for tasks queued before waits were batched; new waits use poll_round."""
    nodes.node_poll(stack_id, traversal_id, resource_id=resource_id)


@shared_task(name="convergence.poll_round")
def poll_round(project_id, token):
    waiting.round_run(project_id, token)


@shared_task(name="convergence.waits_complete")
def waits_complete(stack_id, traversal_id, items):
    wait_complete.waits_complete(stack_id, traversal_id, items=items)


@shared_task(name="convergence.traversal_finish", Strategy=SKIP_SUPERSEDED)
def traversal_finish(stack_id, traversal_id):
    services.traversal_complete(stack_id, traversal_id)


@shared_task(name="convergence.stack_timeout", Strategy=SKIP_SUPERSEDED)
def stack_timeout(stack_id, traversal_id):
    services.traversal_fail(stack_id, traversal_id, "Timed out")


@shared_task(name="convergence.hook_release")
def hook_release(stack_id, traversal_id, resource_id, hook):
    nodes.hook_release(stack_id, traversal_id, resource_id=resource_id, hook=hook)
