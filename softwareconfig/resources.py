"""Resource plugins of software configuration.

``OS::Heat::SoftwareConfig``, ``OS::Heat::StructuredConfig`` and
``OS::Heat::SoftwareComponent`` store a config row (they have no behaviour
of their own; any change replaces them, so deployments see a new config
id). ``OS::Heat::SoftwareDeployment`` applies a config to a server through
the agent on it: for each lifecycle action it reacts to, it derives a
config for that action, publishes it in the server's metadata and (unless
``NO_SIGNAL``) waits for the agent's signal.
"""
import time
from datetime import datetime, timezone

from django.conf import settings

from heatweb.api import as_uuid
from heatweb.models import Project
from softwareconfig.components import ACTIONS, COMPONENT_GROUP, DEFAULT_ACTIONS, STATUS_CODE, \
    STDERR, STDOUT, check_component, check_io, component_config, derived_inputs, \
    reacting_actions
from softwareconfig.models import SoftwareConfig, SoftwareDeployment
from stacks.cloud import HEATWEB_OBJECTS
from stacks.hot.functions import contains_unresolved
from stacks.models import Resource, Stack
from stacks.resources.backends import ServiceInterface
from stacks.resources import stack_user
from stacks.resources.base import ResourceFailure, ResourcePlugin, cloud_call
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Length, Property
from stacks.resources.signal_urls import signal_url

# ``softwareconfig.services``, registered when the app is ready (SoftwareconfigConfig).
deployments = ServiceInterface("software config services")

_IO = {
    "inputs": Property("List", description="Inputs: name, description, type (String, Number, "
                       "CommaDelimitedList, Json, Boolean), default, replace_on_change."),
    "outputs": Property("List", description="Outputs: name, description, type, error_output."),
    "options": Property("Map", description="Options for the configuration tool(s)."),
}


def _in_project(model, physical_id, project_id):
    """Whether the config or deployment ``physical_id`` exists (in ``project_id``)."""
    rows = model.objects.filter(pk=as_uuid(physical_id))
    return rows.filter(project_id=project_id).exists() if project_id else rows.exists()


class ConfigResource(ResourcePlugin):
    """Stores a config row; the physical id is the config's id."""

    held_kind = "software_config"
    held_cloud = HEATWEB_OBJECTS

    @classmethod
    def held_visible(cls, physical_id, *, project_id):
        return _in_project(SoftwareConfig, physical_id, project_id)

    attributes_schema = {"config": Attribute("The config value of the software config.")}

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        inputs, outputs = props.get("inputs"), props.get("outputs")
        check_io(None if contains_unresolved(inputs) else inputs,
                 None if contains_unresolved(outputs) else outputs,
                 where=f"Property error: resources.{resource_name}.properties")
        return props

    def group_and_config(self):
        return self.properties.get("group") or "Heat::Ungrouped", self.properties.get("config")

    def handle_create(self):
        group, config = self.group_and_config()
        row = deployments.config_create(
            project=Project(pk=self.context.project_id), name=self.context.stack_name + "-" +
            self.name, group=group, config=config, inputs=self.properties.get("inputs"),
            outputs=self.properties.get("outputs"), options=self.properties.get("options"))
        self.physical_id = str(row.pk)

    def handle_delete(self):
        if self.physical_id:
            # A config still used by a deployment (made through the API) stays, as in Heat.
            rows = SoftwareConfig.objects.filter(pk=self.physical_id, deployments__isnull=True)
            rows.delete()

    def get_attribute(self, name, *path):
        if name != "config":
            return None
        return self.group_and_config()[1]


@register
class SoftwareConfigResource(ConfigResource):
    """A software config: a script (or any text) for the tool named by ``group``."""

    type_name = "OS::Heat::SoftwareConfig"
    properties_schema = {
        "group": Property("String", description="The tool (hook) that applies the config.",
                          default="Heat::Ungrouped"),
        "config": Property("String", description="The configuration script or document."),
        **_IO,
    }


@register
class StructuredConfigResource(SoftwareConfigResource):
    """A software config whose ``config`` is a map (for hooks that take structured data)."""

    type_name = "OS::Heat::StructuredConfig"
    properties_schema = {**SoftwareConfigResource.properties_schema,
                         "config": Property("Map", description="The configuration data.")}


_CONFIG_ENTRY = Property("Map", schema={
    "actions": Property("List", description="Lifecycle actions this config is applied for.",
                        default=DEFAULT_ACTIONS),
    "config": Property("String", description="The configuration to apply."),
    "tool": Property("String", description="The tool (hook) that applies it.", required=True,
                     constraints=(Length(min=1),)),
})


@register
class SoftwareComponentResource(ConfigResource):
    """A software component: one config per lifecycle action, each with its tool.

    Stored with group ``component`` and ``config = {"configs": [...]}``; a
    deployment of it reacts to the union of its entries' actions and the
    agent picks the entry for the action being deployed. An action may
    appear in one entry only.
    """

    type_name = "OS::Heat::SoftwareComponent"
    properties_schema = {
        "configs": Property("List", description="Per-action configs: actions, config, tool.",
                            required=True, schema=_CONFIG_ENTRY, constraints=(Length(min=1),)),
        **_IO,
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        configs = props.get("configs")
        if not contains_unresolved(configs):
            check_component(configs, name=resource_name)
        return props

    def group_and_config(self):
        return COMPONENT_GROUP, component_config(self.properties.get("configs") or [])


def _clock(timestamp):
    """A time of day as the pages and events show it: ``16:20:05 UTC``."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%H:%M:%S UTC")


SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                     "ZAQAR_SIGNAL")
SIGNAL_QUEUE = "zaqar_signal_queue_id"  # plugin data of a ZAQAR_SIGNAL deployment (Heat's)
SIGNAL_QUEUE_PROJECT = "zaqar_signal_queue_project"  # its project without Keystone


@register
class SoftwareDeploymentResource(ResourcePlugin):
    """Applies a software config (or component) to a server, through the server's agent.

    For each lifecycle action it reacts to (``actions``; for a component the
    union of its entries' actions), a derived config with the deploy_*
    inputs is published in the server's metadata. With ``NO_SIGNAL`` the
    action completes at once; otherwise it waits for the agent's signal
    (``HEAT_SIGNAL``: the resource signal API with a token; ``CFN_SIGNAL``
    or ``TEMP_URL_SIGNAL``: a signed URL, no token; ``ZAQAR_SIGNAL``: a message on a
    Zaqar queue of the deployment's own, which the waiting deployment reads, as Heat's;
    in Keystone mode the queue is in the stack's user project and the inputs give a
    stack user of the deployment to post it with: ``deploy_auth_url``,
    ``deploy_username``, ``deploy_user_id``, ``deploy_password``, ``deploy_project_id``,
    ``deploy_region_name``, ``deploy_queue_id``). Outputs and deploy_stdout,
    deploy_stderr, deploy_status_code become attributes. Each change of a
    ``ZAQAR_MESSAGE`` server's deployments posts its metadata to its queue.
    """

    type_name = "OS::Heat::SoftwareDeployment"
    signal_while_deleting = True
    held_kind = "software_deployment"
    held_cloud = HEATWEB_OBJECTS
    changes_objects = {"server": "server"}

    @classmethod
    def held_visible(cls, physical_id, *, project_id):
        return _in_project(SoftwareDeployment, physical_id, project_id)
    properties_schema = {
        "config": Property("String", description="Id of the software config to apply.",
                           update_allowed=True),
        "server": Property("String", description="Id of the server to apply it to.",
                           required=True),
        "input_values": Property("Map", description="Values of the config's inputs.",
                                 default={}, update_allowed=True),
        "actions": Property("List", description="Actions the deployment runs for (ignored for "
                            "a component).", default=DEFAULT_ACTIONS, update_allowed=True,
                            schema=Property("String", constraints=(AllowedValues(ACTIONS),))),
        "signal_transport": Property("String", description="How the agent reports back.",
                                     default=settings.HEATWEB[
                                         "DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT"],
                                     constraints=(AllowedValues(SIGNAL_TRANSPORTS),)),
        "name": Property("String", description="Name of the derived configs.",
                         update_allowed=True),
    }
    attributes_schema = {
        STDOUT: Attribute("Captured stdout from the configuration execution."),
        STDERR: Attribute("Captured stderr from the configuration execution."),
        STATUS_CODE: Attribute("Returned status code from the configuration execution."),
    }

    # The deployment row ----------------------------------------------------------

    def _row(self):
        if not self.physical_id:
            return None
        return SoftwareDeployment.objects.select_related("config").filter(
            pk=self.physical_id).first()

    def _source_config(self):
        config_id = self.properties.get("config")
        if not config_id:
            return None
        row = SoftwareConfig.objects.filter(project_id=self.context.project_id,
                                            pk=as_uuid(config_id)).first()
        if row is None:
            raise ResourceFailure(f"The Software config ({config_id}) could not be found.")
        return row

    def _resource_uuid(self):
        return Resource.objects.filter(
            stack_id=self.context.stack_id, name=self.name, replaced_by__isnull=True,
        ).exclude(state="DELETE_COMPLETE").order_by("-id").values_list("uuid", flat=True).first()

    def _deploy_inputs(self, action, transport):
        return [
            ("deploy_server_id", self.properties["server"], "ID of the server being deployed to"),
            ("deploy_action", action, "Name of the current action being deployed"),
            ("deploy_stack_id", f"{self.context.stack_name}/{self.context.stack_id}",
             "ID of the stack this deployment belongs to"),
            ("deploy_resource_name", self.name,
             "Name of this deployment resource in the stack"),
            ("deploy_signal_transport", transport,
             "How the server should signal to heat with the deployment output values."),
            *self._signal_inputs(transport),
        ]

    def _signal_inputs(self, transport):
        base = settings.HEATWEB["PUBLIC_URL"].rstrip("/")
        if transport == "NO_SIGNAL":
            return []
        if transport == "ZAQAR_SIGNAL":
            return self._zaqar_signal_inputs()
        if transport == "HEAT_SIGNAL":
            url = (f"{base}/v1/{self.context.project_id}/stacks/{self.context.stack_name}/"
                   f"{self.context.stack_id}/resources/{self.name}/signal")
            return [("deploy_signal_id", url, "URL of the resource signal API (send a token)"),
                    ("deploy_signal_verb", "POST", "HTTP verb for the signal"),
                    ("deploy_auth_url", base, "Endpoint of the orchestration service"),
                    ("deploy_project_id", self.context.project_id, "Project of the stack")]
        return [("deploy_signal_id", signal_url(self._resource_uuid()),
                 "Signed URL to signal completion (no token needed)"),
                ("deploy_signal_verb", "POST", "HTTP verb for the signal")]

    def _zaqar_signal_inputs(self):
        """Heat's ``_get_heat_signal_credentials`` and ``_get_zaqar_signal_queue_id``: the
        stack user (Keystone mode) and the queue, made on first need."""
        data = stack_user.ensure_user(self)
        if not self.data.get(SIGNAL_QUEUE):
            name = stack_user.physical_name(self)
            project = data[stack_user.PROJECT] if data else self.context.project_id
            self.data[SIGNAL_QUEUE] = cloud_call(stack_user.user_cloud(self).object_create,
                                                 "queue", project_id=project, name=name,
                                                 metadata={})
            self.data[SIGNAL_QUEUE_PROJECT] = project
        queue = [("deploy_queue_id", self.data[SIGNAL_QUEUE],
                  "ID of queue to use for signaling output values")]
        if not data:  # no Keystone: the queue's project, no user to log in as
            return [("deploy_project_id", self.data[SIGNAL_QUEUE_PROJECT],
                     "ID of project for API authentication"), *queue]
        creds = stack_user.credentials(self)
        region = [("deploy_region_name", creds["region_name"],
                   "Region name for API authentication")] if creds["region_name"] else []
        return [("deploy_auth_url", creds["auth_url"], "URL for API authentication"),
                ("deploy_username", creds["username"], "Username for API authentication"),
                ("deploy_user_id", creds["user_id"], "User ID for API authentication"),
                ("deploy_password", creds["password"], "Password for API authentication"),
                ("deploy_project_id", creds["project_id"],
                 "ID of project for API authentication"), *region, *queue]

    def _service_zaqar_signal(self):
        """The messages on the deployment's queue are its signals (Heat's
        ``_refresh_zaqar_software_deployment``: popped; the first one decides, the deployment
        waits no more after it)."""
        queue = self.data.get(SIGNAL_QUEUE)
        if not queue or not self.physical_id:
            return
        for body in cloud_call(stack_user.user_cloud(self).queue_pop, queue) or []:
            deployments.deployment_signal(self.physical_id, body)

    def _start(self, action):
        """Publish the derived config for ``action``; a cookie saying whether to wait."""
        source = self._source_config()
        actions = reacting_actions(source.group, source.config,
                                   self.properties.get("actions")) if source else set()
        reacts = action in actions
        row = self._row()
        if row is not None and not reacts:
            return None
        transport = self.properties.get("signal_transport") or \
            settings.HEATWEB["DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT"]
        values = dict(self.properties.get("input_values") or {})
        waits = transport != "NO_SIGNAL"
        inputs = derived_inputs(source.inputs, values, self._deploy_inputs(action, transport)) \
            if reacts else None
        row = deployments.deployment_publish(
            project_id=self.context.project_id, deployment=row,
            server_id=self.properties["server"], source=source if reacts else None,
            action=action, input_values=values, waits=waits, inputs=inputs,
            config=self.derived_config(source, inputs) if reacts else None,
            name=self.properties.get("name") or f"{self.context.stack_name}-{self.name}")
        self.physical_id = str(row.pk)
        if not reacts:
            return None
        if not waits:
            return {"action": action, "wait": False}
        since = time.time()
        # Not "until": the engine would take that for a timed wait and look only then.
        return {"action": action, "wait": True, "waiting_since": since,
                "deadline": since + settings.HEATWEB["MINUTE_SECONDS"] * self._timeout_mins()}

    def derived_config(self, source, inputs):
        """The config the server gets for this deployment (the source's, as it is)."""
        return source.config

    def _timeout_mins(self):
        """The stack's timeout, else the default one (Heat's default stack timeout)."""
        mins = Stack.objects.filter(pk=self.context.stack_id).values_list(
            "timeout_mins", flat=True).first()
        return mins or settings.HEATWEB["DEPLOYMENT_TIMEOUT_MINS"]

    def _complete(self, cookie):
        if not cookie or not cookie.get("wait"):
            return True
        self._service_zaqar_signal()
        row = self._row()
        if row is None:
            raise ResourceFailure("The software deployment was deleted while waiting for it")
        if row.status == "FAILED":
            raise ResourceFailure(f"Deployment to server failed: {row.status_reason}")
        if row.status != "COMPLETE" and "deadline" in cookie and \
                time.time() >= cookie["deadline"]:
            self._cancel(row)
            raise ResourceFailure(
                f"Deployment to server failed: no signal from the agent since "
                f"{_clock(cookie['waiting_since'])}; gave up at {_clock(cookie['deadline'])}")
        return row.status == "COMPLETE"

    def waiting_reason(self, cookie):
        if not cookie or not cookie.get("wait") or "deadline" not in cookie:
            return None
        return (f"Waiting for the agent's signal since {_clock(cookie['waiting_since'])}, "
                f"until {_clock(cookie['deadline'])}")

    # Actions ------------------------------------------------------------------------

    def handle_create(self):
        return self._start("CREATE")

    def check_create_complete(self, cookie):
        return self._complete(cookie)

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        return self._start("UPDATE")

    def check_update_complete(self, cookie):
        return self._complete(cookie)

    def handle_suspend(self):
        return self._start("SUSPEND")

    def check_suspend_complete(self, cookie):
        return self._complete(cookie)

    def handle_resume(self):
        return self._start("RESUME")

    def check_resume_complete(self, cookie):
        return self._complete(cookie)

    def handle_delete(self):
        if self._row() is None:
            return None
        try:
            return self._start("DELETE") or {"wait": False}
        except ResourceFailure:
            return {"wait": False}  # its config is gone: nothing left to run

    def check_delete_complete(self, cookie):
        if not self._complete(cookie):
            return False
        row = self._row()
        if row is not None:
            deployments.deployment_delete(row)
        if self.data.get(SIGNAL_QUEUE):  # Heat's _delete_zaqar_signal_queue, then the user
            cloud_call(stack_user.user_cloud(self).object_delete, "queue",
                       self.data.pop(SIGNAL_QUEUE))
        stack_user.delete_user(self)
        return True

    def handle_cancel(self, action, cookie):
        """As Heat: a deployment still waiting for its signal when the stack stops
        (timed out, cancelled) is FAILED, so the agent and the API see it ended."""
        self._cancel(self._row())

    @staticmethod
    def _cancel(row):
        if row is not None and row.status == "IN_PROGRESS":
            deployments.deployment_update(row, status="FAILED",
                                       status_reason="Deployment cancelled.")

    def handle_signal(self, details):
        if not self.physical_id:
            return "Signal: ignored, nothing deployed yet"
        return deployments.deployment_signal(self.physical_id, details)

    # Attributes ------------------------------------------------------------------------

    def attributes(self):
        """Each declared output and deploy_stdout/stderr/status_code, as the agent sent them."""
        row = self._row()
        if row is None:
            return {}
        values = dict(row.output_values or {})
        declared = [o.get("name") for o in (row.config.outputs if row.config else [])
                    if o.get("name")]
        for name in (*declared, STDOUT, STDERR, STATUS_CODE):
            values.setdefault(name, None)
        return values
