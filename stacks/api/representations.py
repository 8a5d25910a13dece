"""Heat's JSON shapes for stacks, resources and events."""
import json

from heatweb.exceptions import HeatError
from stacks.definitions import definition_cache
from stacks.hidden import mask
from stacks.models import states as st
from stacks.resources.stack import OUTPUT_ERRORS
from stacks.selectors import (resource_attributes, resource_metadata_shown, stack_summary_row,
                              template_description)


def heat_time(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


class Links:
    """Absolute links in Heat's form, from the request's base URL."""

    def __init__(self, request, project_id):
        self.base = request.build_absolute_uri(f"/v1/{project_id}")

    def stack(self, stack):
        return self.stack_href(stack.name, stack.pk)

    def stack_href(self, name, stack_id):
        return f"{self.base}/stacks/{name}/{stack_id}"

    def resource(self, res):
        return f"{self.stack(res.stack)}/resources/{res.name}"

    def event(self, event, stack):
        return f"{self.stack(stack)}/resources/{event.resource_name}/events/{event.uuid}"


def stack_summary(row, links):
    """Heat's summary of a stack, from its summary row (``selectors.stack_list``).

    Heat's fields, plus heatweb's lock fields and ``suspended``: a stack suspended,
    then locked and unlocked, reads UNLOCK_COMPLETE and is still suspended.
    """
    suspended = st.is_suspended(row["state"], row["pre_lock_state"])
    reason = row["status_reason"]
    if suspended and row["state"] != "SUSPEND_COMPLETE":
        reason = f"{reason} (the stack is still suspended)" if reason else \
            "The stack is still suspended."
    return {
        "id": str(row["id"]), "stack_name": row["name"],
        "links": [{"href": links.stack_href(row["name"], row["id"]), "rel": "self"}],
        "description": row["description"],
        "stack_status": row["state"], "stack_status_reason": reason,
        "creation_time": heat_time(row["created_at"]),
        "updated_time": heat_time(row["updated_at"]),
        "deletion_time": heat_time(row["deleted_at"]),
        "stack_owner": row["owner"],
        "parent": str(row["parent_id"]) if row["parent_id"] else None,
        "stack_user_project_id": row["project_id"], "project": row["project_id"],
        "tags": row["tags"] or None,
        "locked": row["state"] in st.LOCKED_STATES or bool(row["lock_pending"]),
        "lock_level": row["lock_level"] or None, "lock_allow": list(row["lock_allow"] or []),
        "lock_reason": row["lock_reason"] or None, "locked_by": row["locked_by_name"],
        "locked_at": heat_time(row["locked_at"]),
        "lock_expires_at": heat_time(row["lock_expires_at"]),
        "suspended": suspended,
    }


def stack_detail(stack, links, *, outputs):
    body = stack_summary(stack_summary_row(stack), links)
    template = stack.raw_template.template or {}
    body.update({
        "template_description": template_description(template),
        "disable_rollback": stack.disable_rollback, "timeout_mins": _minutes(stack.timeout_mins),
        "capabilities": [], "notification_topics": [],
        "parameters": stack_parameters(stack),
        "outputs": outputs,
    })
    return body


def stack_parameters(stack):
    """Parameter values as Heat shows them: strings, hidden ones masked."""
    try:
        definition = definition_cache.get(stack)
    except HeatError:
        return {}
    params = {"OS::stack_name": stack.name, "OS::stack_id": str(stack.pk),
              "OS::project_id": stack.project_id}
    if definition.template.format == "cfn":  # AWS::StackName, AWS::StackId, AWS::Region
        params = dict(definition.params.pseudo)
    for name, schema in definition.template.param_schemas.items():
        value = definition.params[name]
        if schema.hidden:
            params[name] = "******"
        elif isinstance(value, (dict, list)) and schema.type == "json":
            params[name] = json.dumps(value)
        elif isinstance(value, list):
            params[name] = ",".join(str(v) for v in value)
        elif isinstance(value, bool):
            params[name] = str(value)
        else:
            params[name] = "" if value is None else str(value)
    return params


def resource_body(res, links, *, required_by=(), with_attributes=False, nested_names=None,
                  hidden=frozenset()):
    """Heat's resource; ``nested_names`` ({nested stack id: name}) makes its nested link
    ``/stacks/<name>/<id>``, which heatclient's ``--nested-depth`` follows; ``hidden``:
    the stack's hidden parameter values, masked in what it shows."""
    body = {
        "resource_name": res.name, "logical_resource_id": res.name,
        "physical_resource_id": res.physical_resource_id or "",
        "resource_type": res.type, "resource_status": res.state,
        "resource_status_reason": mask(res.status_reason, hidden),
        "creation_time": heat_time(res.created_at), "updated_time": heat_time(res.updated_at),
        "required_by": list(required_by), "stack_name": res.stack.name,
        "stack_identity": {"stack_name": res.stack.name, "stack_id": str(res.stack_id),
                           "tenant": res.stack.project_id, "path": ""},
        "links": [{"href": links.resource(res), "rel": "self"},
                  {"href": links.stack(res.stack), "rel": "stack"}],
    }
    if res.type == "OS::Heat::Stack" or res.plugin_data.get("nested_stack_id"):
        nested = res.plugin_data.get("nested_stack_id") or res.physical_resource_id
        name = (nested_names or {}).get(str(nested))
        if nested and name:
            body["links"].append({"href": links.stack_href(name, nested), "rel": "nested"})
    if with_attributes:
        body["attributes"] = mask({k: v for k, v in resource_attributes(res).items()
                                   if k != OUTPUT_ERRORS}, hidden)
        body["description"] = ""
        body["metadata"] = mask(resource_metadata_shown(res), hidden)
    return body


def event_body(event, stack, links, *, detail=False, root=None, hidden=frozenset(),
               properties=None):
    """Heat's event; ``root`` (the stack listed, when nested events are listed too) adds
    the ``root_stack`` link by which heatclient knows the API lists nested events;
    ``properties`` are the resource's (the detail's ``resource_properties``)."""
    body = {
        "id": str(event.uuid), "event_time": heat_time(event.created_at),
        "resource_name": event.resource_name, "logical_resource_id": event.resource_name,
        "physical_resource_id": event.physical_resource_id,
        "resource_status": f"{event.resource_action}_{event.resource_status}",
        "resource_action": event.resource_action,
        "resource_status_reason": mask(event.resource_status_reason, hidden),
        "links": [{"href": links.event(event, stack), "rel": "self"},
                  {"href": f"{links.stack(stack)}/resources/{event.resource_name}",
                   "rel": "resource"},
                  {"href": links.stack(stack), "rel": "stack"}],
    }
    if root is not None:
        body["links"].append({"href": links.stack(root), "rel": "root_stack"})
    if detail:
        body["resource_type"] = event.resource_type
        body["resource_properties"] = mask(properties or {}, hidden)
    return body


def _minutes(value):
    return int(value) if value is not None and float(value).is_integer() else value
