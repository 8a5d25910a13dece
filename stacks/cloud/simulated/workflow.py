"""What Mistral's kinds do in the simulated cloud beyond storing their fields.

Like Mistral's v2 API: a workflow is made from its DSL v2 ``definition`` (YAML with
``version: '2.0'`` and one workflow, which names it); its name is unique (Mistral's
409 "Duplicate entry for WorkflowDefinition"), its ``type`` direct or reverse, its
tasks each name an action or a workflow (not both), a transition names a task of the
workflow, a reverse workflow's ``requires`` name its tasks; an update replaces the
definition (its name unchanged); a workflow a cron trigger uses is not deleted (Mistral's
400). An execution of a workflow gets exactly the workflow's inputs (Mistral's
"Invalid input [... missing=..., unexpected=...]") and runs at once, in the request:
its tasks' actions are ``std.noop`` (no result), ``std.echo`` (its ``output``),
``std.fail`` (the execution ends in ERROR) or a workflow's name (a sub-workflow, run the
same way); another action ends it in ERROR ("Failed to find action"), as Mistral's
executor does. A direct workflow starts with the tasks no transition names and follows
``on-success`` / ``on-error`` / ``on-complete``; a reverse one runs ``params.task_name``
after what it ``requires``. Expressions are only ``<% $.name %>`` (input and published
variables), ``<% task().result %>`` / ``<% task(name).result %>`` and
``<% env().key %>`` taking a whole value; anything else is kept as written (this is not
YAQL). The execution's ``output`` is the workflow's ``output`` so evaluated, or the
context (input and published variables) when it has none, as Mistral's. A cron trigger
names an existing workflow and its inputs, a valid cron ``pattern`` (croniter, as
Mistral) and/or a ``first_execution_time`` ("YYYY-MM-DD HH:MM", at least a minute
ahead); it never fires here (``next_execution_time`` says when Mistral would run it).
"""
import datetime
import json
import re
import uuid

import yaml
from croniter import croniter

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.simulated.objects import live

TRANSITIONS = ("on-success", "on-error", "on-complete")
EXPRESSION = re.compile(r"^\s*<%\s*(.*?)\s*%>\s*$")
INLINE = re.compile(r"(\w+)=(<%.*?%>|\S+)")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _bad(message):
    return CloudError(f"{message} (HTTP 400)")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)


def _task_names(value):
    """Task names of a transition (a name, a list of names or of ``{name: condition}``)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            out += [str(k) for k in item]
        else:
            out.append(str(item).split(" ")[0])
    return out


def parse_definition(definition, *, expected_name=None):
    """(name, spec) of a DSL v2 definition holding one workflow; 400 as Mistral refuses."""
    try:
        doc = yaml.safe_load(definition)
    except yaml.YAMLError as error:
        raise _bad(f"Definition could not be parsed: {error}") from None
    if not isinstance(doc, dict) or str(doc.get("version")) != "2.0":
        raise _bad("Invalid DSL: version must be '2.0'")
    names = [key for key in doc if key != "version"]
    if len(names) != 1:
        raise _bad("Invalid DSL: one workflow is expected in the definition")
    name, spec = names[0], doc[names[0]]
    if expected_name is not None and name != expected_name:
        raise _bad(f"Workflow name cannot be changed. [workflow_identifier={expected_name}]")
    if not isinstance(spec, dict):
        raise _bad(f"Invalid DSL: workflow {name} must be a mapping")
    kind = spec.get("type", "direct")
    if kind not in ("direct", "reverse"):
        raise _bad(f"Invalid DSL: workflow type must be direct or reverse, got {kind}")
    tasks = spec.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise _bad(f"Invalid DSL: workflow {name} has no tasks")
    for task_name, task in tasks.items():
        task = task or {}
        if task.get("action") and task.get("workflow"):
            raise _bad(f"Invalid DSL: task {task_name} has both action and workflow")
        if kind == "direct" and task.get("requires") is not None:
            raise _bad(f"Invalid DSL: task {task_name}: 'requires' is for reverse workflows")
        for key in (*TRANSITIONS, "requires"):
            for target in _task_names(task.get(key)):
                if target not in tasks and target not in ("fail", "succeed", "pause"):
                    raise _bad(f"Task '{target}' not found.")
    return name, spec


def _input_names(spec):
    """(required, all) input names of a workflow spec (``- name`` or ``- name: default``)."""
    required, every = [], []
    for item in spec.get("input") or []:
        if isinstance(item, dict):
            every += [str(k) for k in item]
        else:
            required.append(str(item))
            every.append(str(item))
    return required, every


def check_input(name, spec, given):
    required, every = _input_names(spec)
    given = given or {}
    missing = [k for k in required if k not in given]
    unexpected = [k for k in given if k not in every]
    if missing or unexpected:
        words = f"Invalid input [name={name}, class=DirectWorkflowSpec"
        if missing:
            words += f", missing={missing}"
        if unexpected:
            words += f", unexpected={unexpected}"
        raise _bad(words + "]")


class _Failed(Exception):
    pass


class _Run:
    """One execution of a workflow spec, run at once."""

    def __init__(self, cloud, spec, context, env, depth=0):
        self.cloud, self.spec, self.env, self.depth = cloud, spec, env, depth
        self.context = dict(context)
        self.results = {}
        self.current = None

    def value(self, value):
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if not isinstance(value, str):
            return value
        found = EXPRESSION.match(value)
        if not found:
            return value
        expr = found.group(1)
        if expr.startswith("$."):
            return self.context.get(expr[2:])
        if expr == "$":
            return self.context
        task = re.match(r"^task\((\w*)\)\.result$", expr)
        if task:
            return self.results.get(task.group(1) or self.current)
        env = re.match(r"^env\(\)\.(\w+)$", expr)
        if env:
            return (self.env or {}).get(env.group(1))
        return value

    def action(self, task_name, task):
        action, _, inline = str(task.get("action") or "").partition(" ")
        given = {key: value for key, value in INLINE.findall(inline)}  # name=value, inline
        given = self.value({**given, **(task.get("input") or {})})
        if task.get("workflow"):
            workflow = live("workflow", pk=task["workflow"]).first()
            if workflow is None or self.depth > 5:
                raise _Failed(f"Workflow not found [workflow_identifier={task['workflow']}]")
            sub = _Run(self.cloud, workflow.fields["spec"], given, self.env, self.depth + 1)
            return sub.run(workflow.fields["spec"])
        if action == "std.noop":
            return None
        if action == "std.echo":
            return given.get("output")
        if action == "std.fail":
            raise _Failed(f"Failed to run action [action_ex_id=..., action_cls='std.fail', "
                          f"params='{json.dumps(given)}']: Fail action expected exception.")
        raise _Failed(f"Failed to find action [action_name={action}, namespace=]")

    def task(self, name):
        task = self.spec["tasks"][name] or {}
        self.current = name
        try:
            self.results[name] = self.action(name, task)
        except _Failed:
            if not task.get("on-error") and not task.get("on-complete"):
                raise
            return _task_names(task.get("on-error")) + _task_names(task.get("on-complete"))
        for key, expr in (task.get("publish") or {}).items():
            self.context[key] = self.value(expr)
        return _task_names(task.get("on-success")) + _task_names(task.get("on-complete"))

    def run(self, spec):
        tasks = spec["tasks"]
        if spec.get("type", "direct") == "reverse":
            order, seen = [], set()

            def visit(name):
                if name in seen:
                    return
                seen.add(name)
                for required in _task_names((tasks[name] or {}).get("requires")):
                    visit(required)
                order.append(name)
            target = self.env.get("__task_name")
            if target not in tasks:
                raise _Failed(f"Task '{target}' not found.")
            visit(target)
            for name in order:
                self.task(name)
        else:
            named = {t for task in tasks.values() for key in TRANSITIONS
                     for t in _task_names((task or {}).get(key))}
            queue, done = [n for n in tasks if n not in named], 0
            while queue:
                name = queue.pop(0)
                if name == "fail":
                    raise _Failed("Workflow failed by the 'fail' transition")
                if name in ("succeed", "pause") or name not in tasks:
                    continue
                done += 1
                if done > 100:
                    raise _Failed("Too many task runs (a loop)")
                queue += self.task(name)
        if spec.get("output") is not None:
            return self.value(spec["output"])
        return self.context


class SimulatedMistral:
    """Mixin of ``SimulatedCloud``: Mistral's workflows, executions and cron triggers."""

    @staticmethod
    def workflow_endpoint():
        return "https://workflow.simulated/v2"

    # Workflows -------------------------------------------------------------------------

    def _create_workflow(self, *, project_id, name, fields, creation_key):
        wf_name, spec = parse_definition(fields.get("definition") or "")
        if live("workflow", pk=wf_name).exists():
            raise CloudError(f"Duplicate entry for WorkflowDefinition ['name', 'namespace', "
                             f"'project_id']: {wf_name}, , {project_id} (HTTP 409)")
        input_names = _input_names(spec)[1]
        self.sim_row_create("workflow", project_id=project_id, name=wf_name, object_id=wf_name,
                            creation_key=creation_key, fields={
                                "definition": fields["definition"], "spec": spec,
                                "input": ", ".join(input_names), "tags": spec.get("tags") or [],
                                "scope": "private", "namespace": "",
                                "workflow_id": str(uuid.uuid4()),
                                "created_at": _now().strftime(TIME_FORMAT)})
        return wf_name

    def _get_workflow(self, identifier):
        """A workflow by its name or its id, as Mistral's ``GET /workflows/<identifier>``."""
        try:
            return self._described(_named_workflow(identifier))
        except CloudNotFound:
            return None

    def _update_workflow(self, row, fields):
        if "definition" not in fields:
            return fields
        _, spec = parse_definition(fields["definition"], expected_name=row.pk)
        return {"definition": fields["definition"], "spec": spec,
                "input": ", ".join(_input_names(spec)[1]), "tags": spec.get("tags") or [],
                "updated_at": _now().strftime(TIME_FORMAT)}

    def _describe_workflow(self, row, out):
        out.pop("spec", None)
        out["id"] = row.fields.get("workflow_id")
        out["name"] = row.pk

    def _in_use_workflow(self, row):
        triggers = [t.pk for t in live("cron_trigger", fields__workflow_name=row.pk)]
        if triggers:
            return (f"Can't delete workflow that has cron triggers associated. "
                    f"[workflow_identifier={row.pk}, namespace=], "
                    f"[cron_trigger_id(s)={', '.join(triggers)}] (HTTP 400)")
        return None

    # Executions ------------------------------------------------------------------------

    def _create_workflow_execution(self, *, project_id, name, fields, creation_key):
        workflow = _named_workflow(fields.get("workflow_name") or fields.get("workflow_id"))
        spec = workflow.fields["spec"]
        given = fields.get("input") or {}
        if not isinstance(given, dict):
            raise _bad("Input must be a dictionary")
        check_input(workflow.pk, spec, given)
        params = fields.get("params") or {}
        env = dict(params.get("env") or {})
        if spec.get("type") == "reverse":
            if not params.get("task_name"):
                raise _bad("Mistral execution parameters for reverse workflow must contain "
                           "'task_name'")
            env["__task_name"] = params["task_name"]
        context = {**{k: v for item in spec.get("input") or [] if isinstance(item, dict)
                      for k, v in item.items()}, **given}
        state, info, output = "SUCCESS", None, {}
        try:
            output = _Run(self, spec, context, env).run(spec)
        except _Failed as failure:
            state, info = "ERROR", str(failure)
        now = _now().strftime(TIME_FORMAT)
        object_id = str(uuid.uuid4())
        self.sim_row_create("workflow_execution", project_id=project_id, name="",
                            object_id=object_id, creation_key=creation_key, fields={
                                "workflow_name": workflow.pk,
                                "workflow_id": workflow.fields.get("workflow_id"),
                                "description": fields.get("description") or "",
                                "input": given, "params": params, "state": state,
                                "state_info": info, "output": output if state == "SUCCESS"
                                else {"result": info},
                                "created_at": now, "updated_at": now})
        return object_id

    # Cron triggers ---------------------------------------------------------------------

    def _create_cron_trigger(self, *, project_id, name, fields, creation_key):
        pattern, first = fields.get("pattern"), fields.get("first_execution_time")
        count = fields.get("remaining_executions")
        if not (first or pattern):
            raise _bad("Pattern or first_execution_time must be specified.")
        first_time = None
        if first:
            try:
                first_time = datetime.datetime.strptime(first, "%Y-%m-%d %H:%M")
            except ValueError as error:
                raise _bad(str(error)) from None
            if _now() + datetime.timedelta(seconds=60) > first_time:
                raise _bad("first_execution_time must be at least 1 minute in the future.")
            if not pattern and count and count > 1:
                raise _bad("Pattern must be provided if count is superior to 1.")
        if pattern and not croniter.is_valid(pattern):
            raise _bad(f"The specified pattern is not valid: {pattern}")
        workflow = _named_workflow(fields.get("workflow_name") or fields.get("workflow_id"))
        check_input(workflow.pk, workflow.fields["spec"], fields.get("workflow_input"))
        if live("cron_trigger", pk=name).exists():
            raise CloudError(f"Duplicate entry for cron trigger {name} (HTTP 409)")
        if first_time:
            next_time = first_time
            count = count if (pattern or count) else 1
        else:
            next_time = croniter(pattern, _now()).get_next(datetime.datetime)
        self.sim_row_create("cron_trigger", project_id=project_id, name=name, object_id=name,
                            creation_key=creation_key, fields={
                                "pattern": pattern, "workflow_name": workflow.pk,
                                "workflow_id": workflow.fields.get("workflow_id"),
                                "workflow_input": fields.get("workflow_input") or {},
                                "workflow_params": fields.get("workflow_params") or {},
                                "first_execution_time": first_time.strftime(TIME_FORMAT)
                                if first_time else None,
                                "next_execution_time": next_time.strftime(TIME_FORMAT),
                                "remaining_executions": count, "scope": "private"})
        return name

    def _update_cron_trigger(self, row, fields):
        raise _bad("Cron triggers cannot be updated: delete it and make another")


def _named_workflow(identifier):
    """The workflow an execution or a cron trigger names (its name or its id), or
    Mistral's 404."""
    workflow = live("workflow", pk=identifier).first() or \
        live("workflow", fields__workflow_id=identifier).first()
    if workflow is None:
        raise CloudNotFound(f"Workflow not found [workflow_identifier={identifier}, "
                            f"namespace=] (HTTP 404)")
    return workflow
