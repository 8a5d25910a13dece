"""Writes and reads of software configs and deployments (API, resources, pages).

Every create, delete and change of config of a deployment, whoever makes it (an
``OS::Heat::SoftwareDeployment`` resource or the API), posts the metadata of its server to
the server's Zaqar queue if it has one (``ZAQAR_MESSAGE``: Heat's
``_push_metadata_software_deployments``).
"""
import logging

from django.db import transaction
from django.db.models import ProtectedError, Q
from django.utils import timezone

from convergence.waiting import wait_poke
from heatweb.api import as_uuid, page_limit
from heatweb.exceptions import BadRequest, Conflict, EntityNotFound, StackValidationFailed
from softwareconfig.components import check_io, signal_outcome
from softwareconfig.models import DEPLOYMENT_STATUSES, SoftwareConfig, SoftwareDeployment
from stacks.cloud import cloud_for_stack
from stacks.models import Resource
from stacks.ownership import change_refusal, config_delete_refusal
from stacks.resources.base import ResourceFailure
from stacks.resources.compute import push_metadata
from stacks.selectors import metadata_queue_server, resource_metadata_shown

log = logging.getLogger(__name__)


class InvalidRestrictedAction(Conflict):
    """A config still used by a deployment cannot be deleted."""


# Configs --------------------------------------------------------------------------------

def config_create(*, project, name="", group=None, config=None, inputs=None, outputs=None,
                  options=None):
    try:
        check_io(inputs, outputs, where="software_config")
    except StackValidationFailed as error:
        raise BadRequest(error.message) from None
    if options is not None and not isinstance(options, dict):
        raise BadRequest("software_config.options: must be a mapping")
    if name is not None and not isinstance(name, str):
        raise BadRequest("software_config.name: must be a string")
    return SoftwareConfig.objects.create(
        project=project, name=name or "", group=group or "Heat::Ungrouped", config=config,
        inputs=inputs or [], outputs=outputs or [], options=options or {})


def config_get(project, config_id):
    row = SoftwareConfig.objects.filter(
        project=project, pk=as_uuid(config_id)).first()
    if row is None:
        raise EntityNotFound(entity="Software config", name=config_id)
    return row


def config_text(project_id, config_id):
    """The ``config`` text of the project's software config ``config_id`` (a server's
    ``user_data`` naming one, as Heat's ``get_software_config``), or None: no such config,
    or one whose config is not a text."""
    key = as_uuid(config_id)
    if key is None:
        return None
    config = SoftwareConfig.objects.filter(project_id=project_id, pk=key) \
        .values_list("config", flat=True).first()
    return config if isinstance(config, str) else None


def config_list(project, *, limit=None, marker=None):
    """The project's configs, oldest first, after the ``marker`` config; paged as stack lists."""
    rows = SoftwareConfig.objects.filter(project=project).order_by("created_at", "id")
    if marker:
        start = SoftwareConfig.objects.filter(project=project, pk=as_uuid(marker)).first()
        if start is None:
            raise BadRequest(f"Marker {marker} not found.")
        rows = rows.filter(Q(created_at__gt=start.created_at)
                           | Q(created_at=start.created_at, id__gt=start.pk))
    return list(rows[:page_limit(limit)])


def config_delete(project, config_id, *, user=None):
    """Delete a config: refused while a deployment uses it (Heat's rule) or a resource of a
    locked stack holds it (at any lock level: it is part of that stack's definition)."""
    row = config_get(project, config_id)
    refused = config_delete_refusal(row.pk, project_id=project.pk, user=user)
    if refused is not None:
        raise refused
    try:
        row.delete()
    except ProtectedError:
        raise InvalidRestrictedAction(
            f"Software config with id {config_id} can not be deleted as it is referenced.") \
            from None


# Deployments ----------------------------------------------------------------------------

def _check_status(status):
    if status is not None and status not in DEPLOYMENT_STATUSES:
        raise BadRequest(f'Invalid status "{status}": use one of {list(DEPLOYMENT_STATUSES)}.')


def deployment_create(*, project, config_id, server_id, input_values=None, action="INIT",
                      status="COMPLETE", status_reason="", stack_user_project_id="", user=None):
    """A deployment made through the API; refused (StackLocked) to a server a stack locked
    at level ``all`` holds: the server's agent would run it."""
    if not server_id:
        raise BadRequest("server_id is required.")
    refused = change_refusal([("server", str(server_id))], project_id=project.pk, user=user)
    if refused is not None:
        raise refused
    if input_values is not None and not isinstance(input_values, dict):
        raise BadRequest("input_values must be a mapping.")
    _check_status(status)
    config = config_get(project, config_id) if config_id else None
    row = SoftwareDeployment.objects.create(
        project=project, config=config, server_id=str(server_id),
        input_values=input_values or {}, action=action or "INIT", status=status or "COMPLETE",
        status_reason=status_reason or "", stack_user_project_id=stack_user_project_id or "")
    _push_server_metadata(row)
    return row


def deployment_get(project, deployment_id):
    row = SoftwareDeployment.objects.filter(
        project=project, pk=as_uuid(deployment_id)) \
        .select_related("config").first()
    if row is None:
        raise EntityNotFound(entity="Software deployment", name=deployment_id)
    return row


def deployment_list(project, *, server_id=None):
    rows = SoftwareDeployment.objects.filter(project=project).select_related("config")
    if server_id:
        rows = rows.filter(server_id=server_id)
    return list(rows)


@transaction.atomic
def deployment_update(deployment, *, config_id=None, input_values=None, output_values=None,
                      action=None, status=None, status_reason=None):
    """What an API client (or an agent using PUT) reports.

    Output values without a status are judged by Heat's signal rules.
    """
    _check_status(status)
    row = SoftwareDeployment.objects.select_for_update().get(pk=deployment.pk)
    if config_id is not None:
        row.config = config_get(row.project, config_id)
    if input_values is not None:
        if not isinstance(input_values, dict):
            raise BadRequest("input_values must be a mapping.")
        row.input_values = input_values
    if output_values is not None:
        if not isinstance(output_values, dict):
            raise BadRequest("output_values must be a mapping.")
        if status is None and row.status == "IN_PROGRESS":
            outputs = row.config.outputs if row.config else []
            status, reason, _ = signal_outcome(outputs, output_values)
            status_reason = reason if status_reason is None else status_reason
        row.output_values = output_values
    if action is not None:
        row.action = action
    if status is not None:
        row.status = status
    if status_reason is not None:
        row.status_reason = status_reason
    row.updated_at = timezone.now()
    row.save()
    if row.status in ("COMPLETE", "FAILED"):
        _poke_waiting_resource(row)
    if config_id is not None:  # Heat's: the metadata is the configs, only they change it
        _push_server_metadata(row)
    return row


def deployment_signal(deployment_id, details):
    """An agent's signal for a deployment that waits: outputs in, status decided.

    A deployment that is not waiting keeps its state (a late or repeated
    signal changes nothing). Returns the event reason.
    """
    ignored = "Signal: ignored, the deployment is not waiting for one"
    row = SoftwareDeployment.objects.select_related("config").filter(pk=deployment_id).first()
    if row is None or row.status != "IN_PROGRESS":
        return ignored
    status, reason, values = signal_outcome(row.config.outputs if row.config else [], details)
    # Claim the wait with one conditional UPDATE: of two racing signals (or a
    # signal racing a new action's config) only one changes the row.
    claimed = SoftwareDeployment.objects.filter(
        pk=row.pk, status="IN_PROGRESS", config_id=row.config_id,
    ).update(status=status, status_reason=reason, output_values=values,
             updated_at=timezone.now())
    if claimed:
        _poke_waiting_resource(row)
    return f"Signal: deployment {status.lower()}: {reason}" if claimed else ignored


def _drop_if_unused(config):
    """A derived config no deployment points at any more goes (it was made for one)."""
    if config is not None and config.derived and not config.deployments.exists():
        config.delete()


def _poke_waiting_resource(deployment):
    """The signal completes the waiting resource once committed (no resource polls for it)."""
    transaction.on_commit(lambda: wait_poke(Resource.objects.filter(
        physical_resource_id=str(deployment.pk), action_cookie__isnull=False,
    ).values_list("pk", flat=True)))


def deployment_delete(deployment):
    derived = deployment.config
    deployment.delete()
    _drop_if_unused(derived)
    _push_server_metadata(deployment)


def _push_server_metadata(deployment):
    """Once committed, the deployment's server's metadata (its deployments as they now are)
    posted to the server's Zaqar queue if it has one (Heat's
    ``_push_metadata_software_deployments``). A queue that refuses is logged, as Heat logs a
    metadata PUT that fails: the deployment is made all the same."""
    project_id, server_id = deployment.project_id, deployment.server_id

    def push():
        server = metadata_queue_server(project_id, server_id)
        if server is None:
            return
        try:
            push_metadata(cloud_for_stack(server.stack), server.plugin_data,
                          resource_metadata(server, project_id))
        except ResourceFailure as error:
            log.warning("could not post the metadata of server %s to its queue: %s",
                        server_id, error)

    transaction.on_commit(push)


@transaction.atomic
def deployment_publish(*, project_id, deployment, server_id, source, action, input_values,
                       inputs, name, waits, config=None):
    """Publish ``source`` derived for ``action`` on the server's metadata (what
    ``OS::Heat::SoftwareDeployment`` does for each action it reacts to).

    Creates the deployment when ``deployment`` is None; the derived config it
    pointed at before goes when unused. ``config``: the derived config's content when
    it is not the source's (a structured deployment's, inputs substituted). Returns
    the deployment.
    """
    if deployment is None:
        deployment = SoftwareDeployment.objects.create(
            project_id=project_id, server_id=server_id, action="INIT", status="COMPLETE",
            status_reason="Created")
    if source is None:
        return deployment
    derived = SoftwareConfig.objects.create(
        project_id=project_id, derived=True, name=name, group=source.group,
        config=source.config if config is None else config, outputs=source.outputs, options=source.options, inputs=inputs)
    previous = deployment.config
    deployment = deployment_update(
        deployment, config_id=str(derived.pk), input_values=input_values, output_values={},
        action=action, status="IN_PROGRESS" if waits else "COMPLETE",
        status_reason="Deploy data available" if waits else "Not waiting for outputs signal")
    _drop_if_unused(previous)
    return deployment


# Metadata -------------------------------------------------------------------------------

def config_body(config, *, with_config=True):
    body = {"id": str(config.pk), "name": config.name, "group": config.group,
            "creation_time": config.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")}
    if with_config:
        body.update(config=config.config, inputs=config.inputs, outputs=config.outputs,
                    options=config.options)
    return body


def server_metadata(project, server_id):
    """The configs an agent on ``server_id`` applies: one per deployment, by name."""
    rows = SoftwareDeployment.objects.filter(project=project, server_id=server_id,
                                             config__isnull=False).select_related("config")
    configs = sorted((row.config for row in rows), key=lambda c: (c.name, c.created_at))
    return [config_body(c) for c in configs]


def resource_metadata(res, project):
    """A resource's metadata as Heat keeps it: a server configured by software deployments
    (``user_data_format: SOFTWARE_CONFIG``), or one deployments were made for, has
    ``deployments`` (what ``server_metadata`` lists) beside the template's metadata."""
    shown = resource_metadata_shown(res)
    server_id = res.physical_resource_id
    configured = res.type == "OS::Nova::Server" and \
        (res.properties_data or {}).get("user_data_format") == "SOFTWARE_CONFIG"
    if not server_id or not (configured or SoftwareDeployment.objects.filter(
            project=project, server_id=server_id).exists()):
        return shown
    return {**shown, "deployments": server_metadata(project, server_id)}
