"""Writes to a software deployment through the stack door.

A deployment's rows know nothing of stacks or locks: a deployment that an
``OS::Heat::SoftwareDeployment`` resource made is changed through its
stack's door (``stack_action``: a locked stack refuses as for every other
action); one made through the API is refused when what its server's agent
runs would change on a server a locked stack holds. The two actions are
registered with the door at start-up (``SoftwareconfigConfig.ready``).
"""
from softwareconfig import services as deployments
from stacks.models import Resource
from stacks.ownership import change_refusal
from stacks.services.actions import action_register, refuse_if_locked, stack_action


def deployment_update(stack, *, user, deployment, **fields):
    """The door's ``deployment_update``: refused while ``stack`` is locked."""
    refuse_if_locked(stack)
    return deployments.deployment_update(deployment, **fields)


def deployment_delete(stack, *, user, deployment):
    """The door's ``deployment_delete``: refused while ``stack`` is locked."""
    refuse_if_locked(stack)
    return deployments.deployment_delete(deployment)


def register_actions():
    action_register("deployment_update", deployment_update)
    action_register("deployment_delete", deployment_delete)


def deployment_stack(deployment):
    """The stack whose ``OS::Heat::SoftwareDeployment`` resource made ``deployment``, or None."""
    row = (Resource.objects.filter(type="OS::Heat::SoftwareDeployment",
                                   physical_resource_id=str(deployment.pk))
           .exclude(state="DELETE_COMPLETE").select_related("stack").first())
    return row.stack if row is not None and row.stack.deleted_at is None else None


def deployment_action(deployment, action, /, *, user=None, **fields):
    """PUT (``update``) or DELETE (``delete``) a deployment: through its stack's door if a
    stack owns it, directly if it was made through the API."""
    stack = deployment_stack(deployment)
    if stack is not None:
        return stack_action(stack, f"deployment_{action}", user=user, deployment=deployment,
                            **fields)
    if action == "delete" or fields.get("config_id") or fields.get("input_values") is not None:
        # What the server's agent runs changes: not on a server a locked stack holds (a
        # status or outputs report from the agent is not a change of the server).
        refused = change_refusal([("server", deployment.server_id)],
                                 project_id=deployment.project_id, user=user)
        if refused is not None:
            raise refused
    if action == "update":
        return deployments.deployment_update(deployment, **fields)
    return deployments.deployment_delete(deployment)
