"""Mistral's types as Heat 27 has them: ``OS::Mistral::Workflow``,
``OS::Mistral::CronTrigger`` and ``OS::Mistral::ExternalResource`` (and Zaqar's
``OS::Zaqar::MistralTrigger``, in ``zaqar``).

A workflow is one ``workflow`` object of the workflow service (``workflowv2`` in the
catalog), made from the DSL v2 definition Heat's ``prepare_properties`` writes from
its properties (the ``policies`` of a task merged into it, ``-`` for ``_`` in its
keys) and known by its name (its physical id, as Heat's): a new ``name`` replaces it,
anything else is a PUT of the new definition. A signal to it starts an execution (Heat's
``handle_signal``: ``{"input": {...}, "params": {...}}``, or the whole body as input with
``use_request_body_as_input``; an input the workflow does not declare is refused); its
executions' ids are kept and deleted with it. Attributes: ``data`` (name and input),
``alarm_url`` (a signed URL that signals it, for an alarm's action) and ``executions``
(each as Mistral describes it now).

A cron trigger is one ``cron_trigger`` object, known by its name; any change replaces
it (none of Heat's properties updates in place). Its ``next_execution_time`` and
``remaining_executions`` are read from Mistral.

An external resource runs the workflow its ``actions`` name for each of its own actions
(CREATE, UPDATE, SUSPEND, RESUME, DELETE) with its ``input``, and waits for the
execution: SUCCESS completes the action (an output ``resource_id`` becomes its physical
id, else the execution's id), ERROR or CANCELLED fails it with Mistral's ``state_info``.
Later executions get the outputs so far as ``env().heat_extresource_data``. A change of an
input named in ``replace_on_change_inputs`` replaces it; another input change runs its
UPDATE workflow; a change of another property replaces it. Its ``output`` attribute is
the JSON text of the outputs merged, as Heat 27 answers it.

On a cloud whose catalog has no ``workflowv2`` service, validation answers Heat's
ResourceTypeUnavailable. The simulated cloud keeps them as generic objects, as strict
as Mistral's v2 API, and runs executions at once (``stacks/cloud/simulated/workflow.py``);
the OpenStack driver calls Mistral (``stacks/cloud/openstack/workflow.py``).
"""
import copy
import json
from dataclasses import dataclass

import yaml
from croniter import croniter

from heatweb.exceptions import StackValidationFailed
from stacks.models import Resource
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Length, Property, PropertyError
from stacks.resources.signal_urls import signal_url

MISTRAL = ("mistral", "workflowv2")
EXECUTIONS = "executions"  # plugin data: ids of the executions a signal started
OUTPUTS = "outputs"  # plugin data: an external resource's outputs so far

@dataclass(frozen=True)
class CustomConstraint:
    """A Heat custom constraint shown in the schema as Heat shows it: ``cron_expression``
    checks the value (croniter, as Heat's ``CronExpression``); ``mistral.workflow`` (a
    workflow Mistral has) is looked up in the cloud at create and update
    (``stacks.services.custom_constraints``)."""

    name: str
    description: str | None = None

    def check(self, value):
        if self.name == "cron_expression" and value and not croniter.is_valid(value):
            raise PropertyError(f"Error validating value '{value}': Invalid CRON expression: "
                                f"{value}")

    def doc(self):
        return {"custom_constraint": self.name, "description": self.description}


WORKFLOW_NAMED = (CustomConstraint("mistral.workflow"),)


_TRANSITION_DOCS = {
    "on_success": "List of tasks which will run after the task has completed "
                  "successfully.",
    "on_error": "List of tasks which will run after the task has completed with an "
                "error.",
    "on_complete": "List of tasks which will run after the task has completed regardless "
                   "of whether it is successful or not.",
}
_COMMON_TASK = {
    **{key: prop("List", doc) for key, doc in _TRANSITION_DOCS.items()},
    "requires": prop("List", "List of tasks which should be executed before this task. "
                             "Used only in reverse workflows."),
    "retry": prop("Map", "Defines a pattern how task should be repeated in case of an "
                         "error."),
    "wait_before": prop("Integer", "Defines a delay in seconds that Mistral Engine should "
                                   "wait before starting a task."),
    "wait_after": prop("Integer", "Defines a delay in seconds that Mistral Engine should "
                                  "wait after a task has completed before starting next "
                                  "tasks defined in on-success, on-error or on-complete."),
    "pause_before": prop("Boolean", "Defines whether Mistral Engine should put the workflow "
                                    "on hold or not before starting a task."),
    "timeout": prop("Integer", "Defines a period of time in seconds after which a task "
                               "will be failed automatically by engine if hasn't "
                               "completed."),
    "concurrency": prop("Integer", "Defines a max number of actions running simultaneously "
                                   "in a task. Applicable only for tasks that have "
                                   "with-items."),
}
TASK = Property("Map", schema={
    "name": prop("String", "Task name.", required=True),
    "description": prop("String", "Task description."),
    "input": prop("Map", "Actual input parameter values of the task."),
    "action": prop("String", "Name of the action associated with the task. Either action "
                             "or workflow may be defined in the task."),
    "workflow": prop("String", "Name of the workflow associated with the task. Can be "
                               "defined by intrinsic function get_resource or by name of "
                               "the referenced workflow, i.e. { workflow: wf_name } or "
                               "{ workflow: { get_resource: wf_name }}. Either action or "
                               "workflow may be defined in the task.",
                         constraints=WORKFLOW_NAMED),
    "publish": prop("Map", "Dictionary of variables to publish to the workflow context."),
    "policies": prop("Map", "Dictionary-like section defining task policies that influence "
                            "how Mistral Engine runs tasks. Must satisfy Mistral DSL v2."),
    **_COMMON_TASK,
    "with_items": prop("String", "If configured, it allows to run action or workflow "
                                 "associated with a task multiple times on a provided list "
                                 "of items."),
    "keep_result": prop("Boolean", "Allowing not to store action results after task "
                                   "completion."),
    "target": prop("String", "It defines an executor to which task action should be sent "
                             "to."),
    "join": prop("String", "Allows to synchronize multiple parallel workflow branches and "
                           "aggregate their data. Valid inputs: all - the task will run "
                           "only if all upstream tasks are completed. Any numeric value - "
                           "then the task will run once at least this number of upstream "
                           "tasks are completed and corresponding conditions have "
                           "triggered."),
})
TASK_KEYS = ("description", "on_error", "on_complete", "on_success", "action", "publish",
             "input", "requires", "retry", "wait_before", "wait_after", "pause_before",
             "timeout", "with_items", "keep_result", "target", "join", "concurrency")
POLICY_KEYS = ("pause_before", "wait_after", "wait_before", "timeout", "concurrency", "retry")


def _where(resource_name, *path):
    return ".".join(("resources", resource_name, "properties", *path))


def _signal_error(message):
    return StackValidationFailed(f"Signal data error: {message}")


@register
class MistralWorkflow(CloudObjectResource):
    """A Mistral workflow: its tasks run when it is signalled (or by a cron trigger)."""

    required_service = MISTRAL
    type_name = "OS::Mistral::Workflow"
    kind = "workflow"
    properties_schema = {
        "name": prop("String", "Workflow name."),
        "type": prop("String", "Workflow type.", required=True, update_allowed=True,
                     constraints=(AllowedValues(("direct", "reverse")),)),
        "use_request_body_as_input": prop(
            "Boolean", "Defines the method in which the request body for signaling a "
            "workflow would be parsed. In case this property is set to True, the body would "
            "be parsed as a simple json where each key is a workflow input, in other cases "
            "body would be parsed expecting a specific json format with two keys: \"input\" "
            "and \"params\".", update_allowed=True),
        "tags": prop("List", "List of tags to set on the workflow.", update_allowed=True),
        "description": prop("String", "Workflow description.", update_allowed=True),
        "input": prop("Map", "Dictionary which contains input for workflow.",
                      update_allowed=True),
        "output": prop("Map", "Any data structure arbitrarily containing YAQL expressions "
                              "that defines workflow output. May be nested.",
                       update_allowed=True),
        "params": prop("Map", "Workflow additional parameters. If Workflow is reverse typed, "
                              "params requires 'task_name', which defines initial task.",
                       update_allowed=True),
        "task_defaults": prop("Map", "Default settings for some of task attributes defined "
                                     "at workflow level.", update_allowed=True,
                              schema=dict(_COMMON_TASK)),
        "tasks": prop("List", "Dictionary containing workflow tasks.", required=True,
                      update_allowed=True, schema=TASK, constraints=(Length(1, None),)),
    }
    signed_url_attributes = ("alarm_url",)
    attributes_schema = {
        "data": Attribute("A dictionary which contains name and input of the workflow.",
                          type="map"),
        "alarm_url": Attribute("A signed url to create executions for workflows specified in "
                               "Workflow resource.", type="string"),
        "executions": Attribute("List of workflows' executions, each of them is a dictionary "
                                "with information about execution. Each dictionary returns "
                                "values for next keys: id, workflow_name, created_at, "
                                "updated_at, state for current execution state, input, "
                                "output.", type="list"),
        "show": Attribute("Detailed information about resource.", type="map"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        params = props.get("params")
        if props.get("type") == "reverse" and isinstance(params, dict) and \
                not params.get("task_name"):
            raise StackValidationFailed(
                f"Mistral resource validation error: {_where(resource_name, 'params')}: "
                f"'task_name' is not assigned in 'params' in case of reverse type workflow.")
        for task in props.get("tasks") or []:
            if not isinstance(task, dict):
                continue
            workflow, action = task.get("workflow"), task.get("action")
            if workflow and action:
                raise StackValidationFailed(
                    "Cannot define the following properties at the same time: workflow, "
                    "action.")
            if not workflow and not action:
                raise StackValidationFailed(
                    "At least one of the following properties must be specified: workflow, "
                    "action.")
            if task.get("requires") is not None and props.get("type") == "direct":
                raise StackValidationFailed(
                    f"Mistral resource validation error: "
                    f"{_where(resource_name, 'tasks', str(task.get('name')), 'requires')}: "
                    f"task {task.get('name')} contains property 'requires' in case of direct "
                    f"workflow. Only reverse workflows can contain property 'requires'.")
            for key in task.get("policies") or {}:
                if task.get(key) is not None:
                    raise StackValidationFailed(f"Property policies and {key} cannot be used "
                                                f"both at one time.")
            if task.get("with_items") is None and task.get("concurrency") is not None:
                raise StackValidationFailed("concurrency depends on with_items.")
        return props

    def object_name(self, props):
        if props.get("name"):
            return props["name"]
        suffix = str(self.creation_key or "")[-12:]
        return f"{self.context.stack_name}-{self.name}" + (f"-{suffix}" if suffix else "")

    def definition(self, props, name):
        """Heat's ``prepare_properties``: the DSL v2 text of the workflow."""
        body = {key: props.get(key) for key in ("type", "description", "tags", "output")
                if props.get(key) is not None}
        if props.get("input") is not None:
            body["input"] = list(props["input"])
        body["tasks"] = {}
        for task in props.get("tasks") or []:
            task = dict(task)
            if task.get("policies") is not None:  # Kilo's form: its keys into the task
                task.update(task["policies"])
            out = {"workflow": task["workflow"]} if task.get("workflow") is not None else {}
            out.update({key.replace("_", "-"): task[key] for key in TASK_KEYS
                        if task.get(key) is not None})
            body["tasks"][task["name"]] = out
        if props.get("task_defaults") is not None:
            body["task-defaults"] = {k.replace("_", "-"): v
                                     for k, v in props["task_defaults"].items() if v}
        return yaml.safe_dump({"version": "2.0", name: body})

    def cloud_fields(self, props, names=None):
        return {"definition": self.definition(props, self.object_name(props))}

    def handle_update(self, new_properties, changed):
        self.existing()
        _cloud_call(self.cloud.object_update, self.kind, self.physical_id,
                    definition=self.definition(new_properties, self.physical_id))
        self.properties = new_properties

    def handle_signal(self, details):
        props = self.properties
        if props.get("use_request_body_as_input"):
            inputs, params = details, None
        else:
            details = details if isinstance(details, dict) else {}
            inputs, params = details.get("input"), details.get("params")
        if inputs is not None:
            if not isinstance(inputs, dict):
                raise _signal_error(f"Input in signal data must be a map, find a "
                                    f"{type(inputs)}")
            for key in inputs:
                if props.get("input") is None or key not in props["input"]:
                    raise _signal_error(f"Unknown input {key}")
        if params is not None and not isinstance(params, dict):
            raise _signal_error(f"Params must be a map, find a {type(params)}")
        given = copy.deepcopy(props.get("input") or {})
        given.update(inputs or {})
        all_params = copy.deepcopy(props.get("params") or {})
        all_params.update(params or {})
        execution = _cloud_call(
            self.cloud.object_create, "workflow_execution", project_id=self.context.project_id,
            name=None, workflow_name=self.physical_id, input=given, params=all_params)
        self.data[EXECUTIONS] = [execution, *self.data.get(EXECUTIONS, [])]
        return f"Signal: execution {execution} of workflow {self.physical_id} started"

    def handle_delete(self):
        for execution in self.data.get(EXECUTIONS, []):
            _cloud_call(self.cloud.object_delete, "workflow_execution", execution)
        self.data.pop(EXECUTIONS, None)
        return super().handle_delete()

    def _execution(self, execution_id):
        found = self.cloud.object_get("workflow_execution", execution_id)
        if found is None:
            return None
        return {key: found.get(key) for key in ("id", "workflow_name", "created_at",
                                                "updated_at", "state", "input", "output")}

    def attribute_value(self, found, name):
        if name == "data":
            return {"name": self.physical_id, "input": self.properties.get("input")}
        if name == "alarm_url":
            return self._alarm_url()
        if name == "executions":
            return [e for e in map(self._execution, self.data.get(EXECUTIONS, [])) if e]
        return super().attribute_value(found, name)

    def _alarm_url(self):
        row = Resource.objects.filter(stack_id=self.context.stack_id, name=self.name,
                                      replaced_by__isnull=True).exclude(
            state="DELETE_COMPLETE").values_list("uuid", flat=True).first()
        return signal_url(row) if row else None

    def get_attribute(self, name, *path):
        if name == "alarm_url":
            return self._alarm_url() if self.physical_id else None
        return super().get_attribute(name, *path)


@register
class MistralCronTrigger(CloudObjectResource):
    """Runs a workflow on a schedule: a cron ``pattern`` and/or a ``first_time``, at most
    ``count`` times."""

    required_service = MISTRAL
    type_name = "OS::Mistral::CronTrigger"
    kind = "cron_trigger"
    properties_schema = {
        "name": prop("String", "Name of the cron trigger."),
        "pattern": prop("String", "Cron expression.",
                        constraints=(CustomConstraint("cron_expression"),)),
        "workflow": prop("Map", "Workflow to execute.", required=True, schema={
            "name": prop("String", "Name or ID of the workflow.", required=True,
                         constraints=WORKFLOW_NAMED),
            "input": prop("Map", "Input values for the workflow.")}),
        "first_time": prop("String", "Time of the first execution in format \"YYYY-MM-DD "
                                     "HH:MM\"."),
        "count": prop("Integer", "Remaining executions."),
    }
    attributes_schema = {
        "next_execution_time": Attribute("Time of the next execution in format \"YYYY-MM-DD "
                                         "HH:MM:SS\".", type="string"),
        "remaining_executions": Attribute("Number of remaining executions.", type="integer"),
        "show": Attribute("Detailed information about resource.", type="map"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        pattern = props.get("pattern")
        if not pattern and not props.get("first_time") and "pattern" not in raw and \
                "first_time" not in raw:
            raise StackValidationFailed("At least one of the following properties must be "
                                        "specified: pattern, first_time.")
        return props

    def object_name(self, props):
        if props.get("name"):
            return props["name"]
        suffix = str(self.creation_key or "")[-12:]
        return f"{self.context.stack_name}-{self.name}" + (f"-{suffix}" if suffix else "")

    def cloud_fields(self, props, names=None):
        workflow = props.get("workflow") or {}
        return {"workflow_name": workflow.get("name"),
                "workflow_input": workflow.get("input") or {},
                "pattern": props.get("pattern"), "first_execution_time": props.get("first_time"),
                "remaining_executions": props.get("count")}

    def drift_pairs(self):
        return None  # Mistral deletes a trigger once it has run out (Heat's get_live_state)


EXTERNAL_ACTION = Property("Map", description="Dictionary which defines the workflow to run "
                                            "and its params.", schema={
    "workflow": prop("String", "Workflow to execute.", required=True,
                     constraints=WORKFLOW_NAMED),
    "params": prop("Map", "Workflow additional parameters. If workflow is reverse typed, "
                          "params requires \"task_name\", which defines initial task.",
                   default={})})


@register
class MistralExternalResource(ResourcePlugin):
    """A resource heatweb does not know, managed by the Mistral workflows ``actions`` names
    for its CREATE, UPDATE, SUSPEND, RESUME and DELETE."""

    required_service = MISTRAL
    type_name = "OS::Mistral::ExternalResource"
    cloud_calls_only = True
    properties_schema = {
        "actions": prop("Map", "Resource action which triggers a workflow execution.",
                        required=True, schema={action: EXTERNAL_ACTION for action in (
                            "CREATE", "UPDATE", "SUSPEND", "RESUME", "DELETE")}),
        "input": prop("Map", "Dictionary which contains input for the workflows.",
                      update_allowed=True, default={}),
        "description": prop("String", "Workflow execution description.",
                            default="Heat managed"),
        "replace_on_change_inputs": prop("List", "A list of inputs that should cause the "
                                                 "resource to be replaced when their values "
                                                 "change.", default=[]),
        "always_update": prop("Boolean", "Triggers UPDATE action execution even if input is "
                                         "unchanged.", default=False),
    }
    attributes_schema = {
        "output": Attribute("Output from the execution.", type="map"),
        "show": Attribute("Detailed information about resource.", type="map"),
    }

    may_update_unchanged = True

    @classmethod
    def updates_unchanged(cls, properties):
        return bool(properties.get("always_update"))

    @classmethod
    def needs_replacement_for(cls, old_properties, new_properties, changed):
        old_inputs = old_properties.get("input") or {}
        new_inputs = new_properties.get("input") or {}
        if any(old_inputs.get(i) != new_inputs.get(i)
               for i in new_properties.get("replace_on_change_inputs") or []):
            return True
        return super().needs_replacement_for(old_properties, new_properties, changed)

    @property
    def cloud(self):
        return self.context.cloud

    def _start(self, action, inputs=None):
        action_data = copy.deepcopy((self.properties.get("actions") or {}).get(action))
        if not action_data:
            return None
        params = action_data.get("params") or {}
        if self.physical_id:  # the outputs so far, for the workflow's env()
            params["env"] = {**(params.get("env") or {}),
                             "heat_extresource_data": self.data.get(OUTPUTS, {})}
        execution = _cloud_call(
            self.cloud.object_create, "workflow_execution", project_id=self.context.project_id,
            name=None, workflow_name=action_data["workflow"],
            input=inputs or self.properties.get("input") or {},
            description=self.properties.get("description"), params=params)
        return {"execution": execution, "action": action}

    def _check(self, cookie):
        if not cookie:
            return True
        execution = _cloud_call(self.cloud.object_get, "workflow_execution",
                                cookie["execution"])
        if execution is None:
            raise ResourceFailure(f"Mistral execution {cookie['execution']} could not be found")
        state = execution.get("state")
        if state in ("IDLE", "RUNNING", "PAUSED"):
            return False
        if state in ("ERROR", "CANCELLED"):
            raise ResourceFailure(str(execution.get("state_info") or state))
        if state != "SUCCESS":
            raise ResourceFailure(f"Mistral execution is in unknown state. {state}")
        output = execution.get("output")
        if isinstance(output, str):
            try:
                output = json.loads(output)
            except ValueError:
                output = {}
        output = output if isinstance(output, dict) else {}
        self.data[OUTPUTS] = {**self.data.get(OUTPUTS, {}), **output}
        self.physical_id = str(output.get("resource_id") or cookie["execution"])[:255]
        return True

    def handle_create(self):
        return self._start("CREATE")

    def check_create_complete(self, cookie):
        return self._check(cookie)

    def handle_update(self, new_properties, changed):
        new_inputs = new_properties.get("input") if "input" in changed else None
        self.properties = new_properties
        return self._start("UPDATE", new_inputs)

    def check_update_complete(self, cookie):
        return self._check(cookie)

    def handle_suspend(self):
        return self._start("SUSPEND")

    def check_suspend_complete(self, cookie):
        return self._check(cookie)

    def handle_resume(self):
        return self._start("RESUME")

    def check_resume_complete(self, cookie):
        return self._check(cookie)

    def handle_delete(self):
        return self._start("DELETE")

    def check_delete_complete(self, cookie):
        return self._check(cookie)

    def get_attribute(self, name, *path):
        if name == "output" and self.physical_id:  # as Heat 27: the JSON text of the map
            return json.dumps(self.data.get(OUTPUTS) or {})
        if name == "show" and self.physical_id:  # Heat's: the execution of that id
            return self.cloud.object_get("workflow_execution", self.physical_id)
        return None

    def attributes(self):
        return {name: self.get_attribute(name) for name in self.attributes_schema}
