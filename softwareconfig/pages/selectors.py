"""Reads of the software pages, every one scoped to the request's project.

A deployment made by a stack points at a config derived for one action;
the config its template named (a component, say) is the ``config``
property of its ``OS::Heat::SoftwareDeployment`` resource. These reads
follow that link so a component shows the deployments that apply it.
"""
import json
from dataclasses import dataclass, field

from django.db.models import Q

from heatweb.api import as_uuid
from heatweb.models import Role
from softwareconfig import services
from softwareconfig.components import STATUS_CODE, STDERR, STDOUT
from softwareconfig.models import SoftwareConfig, SoftwareDeployment
from stacks.models import Resource

DEPLOYMENT_TYPE = "OS::Heat::SoftwareDeployment"
SERVER_TYPE = "OS::Nova::Server"
STREAMS = ((STDOUT, "standard output"), (STDERR, "standard error"),
           (STATUS_CODE, "exit status"))


def _sources_of_deployments(project):
    """``{deployment id: id of the config its stack resource names}``.

    While the resource's action waits (for the agent's signal), the properties
    it runs with are in its action cookie; ``properties_data`` gets them only
    when the action completes.
    """
    rows = (Resource.objects.filter(stack__project=project, type=DEPLOYMENT_TYPE)
            .exclude(physical_resource_id="").order_by("id")
            .values_list("physical_resource_id", "properties_data", "action_cookie"))
    sources = {}
    for deployment_id, properties, cookie in rows:
        running = cookie.get("props") if isinstance(cookie, dict) else None
        config_id = as_uuid((running or properties or {}).get("config"))
        if config_id is not None:
            sources[deployment_id] = config_id
    return sources


def _source_id(deployment, sources):
    return sources.get(str(deployment.pk)) or deployment.config_id


def _waiting_reasons(project, rows):
    """``{deployment id: reason}`` of deployments whose stack resource waits on them."""
    ids = [str(row.pk) for row in rows if row.status == "IN_PROGRESS"]
    if not ids:
        return {}
    return dict(Resource.objects.filter(stack__project=project, type=DEPLOYMENT_TYPE,
                                        physical_resource_id__in=ids,
                                        state__endswith="_IN_PROGRESS",
                                        status_reason__startswith="Waiting")
                .values_list("physical_resource_id", "status_reason"))


def _shown(value):
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass
class DeploymentView:
    """A deployment with the config it was asked to apply (``source``) and its outputs."""

    deployment: SoftwareDeployment
    source: SoftwareConfig | None = None
    waiting: str = ""  # what its stack resource waits for ("Waiting for the agent's signal...")

    @property
    def reason(self):
        return self.waiting or self.deployment.status_reason

    @property
    def state(self):
        return f"{self.deployment.action}_{self.deployment.status}"

    @property
    def streams(self):
        """``[(key, label, text)]`` of deploy_stdout, deploy_stderr, deploy_status_code."""
        values = self.deployment.output_values or {}
        return [(key, label, _shown(values[key])) for key, label in STREAMS
                if values.get(key) is not None]

    @property
    def outputs(self):
        """``[(name, text)]`` of the other output values."""
        streams = {key for key, _ in STREAMS}
        return [(name, _shown(value)) for name, value in (self.deployment.output_values or {})
                .items() if name not in streams]


@dataclass
class ServerDeployments:
    """The deployments of one server, and the stack resource that made the server if any."""

    server_id: str
    resource: Resource | None = None
    deployments: list = field(default_factory=list)


def config_page_list(project):
    """``[(config, number of deployments)]``: configs and components, newest first.

    Derived configs (one per deployment and action) are left out.
    """
    configs = list(SoftwareConfig.objects.filter(project=project, derived=False)
                   .order_by("-created_at", "-id"))
    sources = _sources_of_deployments(project)
    counts = {}
    for deployment in SoftwareDeployment.objects.filter(project=project).only("pk", "config_id"):
        source = _source_id(deployment, sources)
        counts[source] = counts.get(source, 0) + 1
    return [(config, counts.get(config.pk, 0)) for config in configs]


@dataclass
class DerivedConfigRow:
    """A derived config, the deployment that points at it, the config its template named
    (``source``) and the stack resource that made it (None for an API-made deployment)."""

    config: SoftwareConfig
    deployment: SoftwareDeployment | None = None
    source: SoftwareConfig | None = None
    resource: Resource | None = None


def derived_config_page_list(project):
    """Derived configs of the project, newest first (a queryset, for a paginator)."""
    return SoftwareConfig.objects.filter(project=project, derived=True).order_by(
        "-created_at", "-id")


def derived_config_rows(project, configs):
    """``[DerivedConfigRow]`` of ``configs`` (a page of derived configs), in a few queries."""
    configs = list(configs)
    deployments = {d.config_id: d for d in SoftwareDeployment.objects.filter(
        project=project, config__in=[c.pk for c in configs]).order_by("created_at", "id")}
    ids = [str(d.pk) for d in deployments.values()]
    resources = {r.physical_resource_id: r for r in Resource.objects.select_related("stack")
                 .filter(stack__project=project, type=DEPLOYMENT_TYPE,
                         physical_resource_id__in=ids).order_by("id")}
    sources = {d: s for d, s in _sources_of_deployments(project).items() if d in ids}
    named = {c.pk: c for c in SoftwareConfig.objects.filter(project=project,
                                                            pk__in=set(sources.values()))}
    rows = []
    for config in configs:
        deployment = deployments.get(config.pk)
        key = str(deployment.pk) if deployment is not None else None
        rows.append(DerivedConfigRow(config, deployment, named.get(sources.get(key)),
                                     resources.get(key)))
    return rows


def config_page(project, config_id):
    """The config (EntityNotFound unless it is the project's) and its deployments."""
    config = services.config_get(project, config_id)
    sources = _sources_of_deployments(project)
    made = [pk for pk in map(as_uuid, (d for d, s in sources.items() if s == config.pk)) if pk]
    rows = (SoftwareDeployment.objects.filter(Q(config=config) | Q(pk__in=made), project=project)
            .order_by("server_id", "created_at", "id"))
    rows = list(rows)
    waiting = _waiting_reasons(project, rows)
    return config, [DeploymentView(row, config, waiting.get(str(row.pk), "")) for row in rows]


def deployments_by_server(project, *, server_id=""):
    """``[ServerDeployments]`` of the project (of one server when ``server_id`` is given)."""
    rows = services.deployment_list(project, server_id=server_id or None)
    sources = _sources_of_deployments(project)
    wanted = {_source_id(row, sources) for row in rows}
    configs = {c.pk: c for c in SoftwareConfig.objects.filter(project=project, pk__in=wanted)}
    waiting = _waiting_reasons(project, rows)
    servers = {}
    for row in sorted(rows, key=lambda r: (r.server_id, r.created_at, str(r.pk))):
        group = servers.setdefault(row.server_id, ServerDeployments(row.server_id))
        group.deployments.append(DeploymentView(row, configs.get(_source_id(row, sources)),
                                                waiting.get(str(row.pk), "")))
    made_by = (Resource.objects.select_related("stack")
               .filter(stack__project=project, type=SERVER_TYPE, stack__deleted_at__isnull=True,
                       physical_resource_id__in=list(servers))
               .exclude(state="DELETE_COMPLETE").order_by("id"))
    for resource in made_by:
        servers[resource.physical_resource_id].resource = resource
    return list(servers.values())


def deploying_stack(project, config):
    """The stack whose deployment made the derived ``config`` (None when there is none)."""
    deployments = [str(pk) for pk in SoftwareDeployment.objects.filter(
        project=project, config=config).values_list("pk", flat=True)]
    resource = (Resource.objects.select_related("stack")
                .filter(stack__project=project, type=DEPLOYMENT_TYPE,
                        physical_resource_id__in=deployments).order_by("-id").first())
    return resource.stack if resource is not None else None


def signed_urls_visible(project, config, *, user, role):
    """Whether ``user`` may see the signed signal URLs in the derived ``config``'s inputs.

    Only the owner (creator) of the stack whose deployment made it, and admins:
    a signed URL signals the deployment with no token.
    """
    if role == Role.ADMIN:
        return True
    deployments = [str(pk) for pk in SoftwareDeployment.objects.filter(
        project=project, config=config).values_list("pk", flat=True)]
    owner = (Resource.objects.filter(stack__project=project, type=DEPLOYMENT_TYPE,
                                     physical_resource_id__in=deployments)
             .order_by("-id").values_list("stack__user_id", flat=True).first())
    return owner is not None and owner == user.pk


def server_ids(project):
    """The servers the project has deployments on (for the filter)."""
    return list(SoftwareDeployment.objects.filter(project=project)
                .order_by("server_id").values_list("server_id", flat=True).distinct())
