"""Celery tasks: thin, idempotent, taking only ids and primitives."""
from celery import shared_task

from convergence import nodes, services


@shared_task(name="convergence.converge_nodes")
def converge_nodes(stack_id, traversal_id, node_list):
    nodes.nodes_run(stack_id, traversal_id, node_list)


@shared_task(name="convergence.poll_node")
def poll_node(stack_id, traversal_id, resource_id):
    nodes.node_poll(stack_id, traversal_id, resource_id)


@shared_task(name="convergence.traversal_finish")
def traversal_finish(stack_id, traversal_id):
    services.traversal_complete(stack_id, traversal_id)


@shared_task(name="convergence.stack_timeout")
def stack_timeout(stack_id, traversal_id):
    services.traversal_fail(stack_id, traversal_id, "Timed out")
