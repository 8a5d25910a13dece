"""Stack endpoints of the Orchestration API v1: parse, call a service, serialize."""
from django.conf import settings
from django.http import HttpResponseRedirect
from rest_framework import status
from rest_framework.response import Response

from heatweb.api import STACK_NAME_RE, TenantAPIView, param_bool, param_int, param_minutes
from heatweb.exceptions import BadRequest, Forbidden, EntityNotFound, InvalidActionRequest, \
    RequestLimitExceeded, StackValidationFailed
from heatweb.tokens import is_cloud_admin
from softwareconfig import services as deployments
from stacks import selectors
from stacks.api.action_bodies import action_args, body_action
from stacks.definitions import request_environment
from stacks.api.representations import Links, event_body, resource_body, stack_detail, \
    stack_summary
from stacks.hidden import hidden_values, hidden_values_by_stack, masked_environment, \
    masked_files
from stacks.services import drift, lifecycle
from stacks.template_limits import limits
from stacks.hot.loader import load_text
from stacks.services.actions import stack_action
from stacks.services.snapshots import check_adopt_enabled
from stacks.services.preview import stack_preview, stack_update_preview

# The actions ``POST .../actions`` takes (the door has more: update, delete, signal).
BODY_ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback",
                "lock", "unlock", "detect_drift", "reauthorise")


MAX_TAGS = settings.HEATWEB["MAX_TAGS"]
MAX_TAG_LENGTH = 80  # Heat's stack_tag.tag column


def _tags(value):
    if value in (None, ""):
        return None
    if isinstance(value, list):
        tags = [str(v) for v in value[:MAX_TAGS + 1]]
    else:
        text = str(value)
        if text.count(",") > 2 * MAX_TAGS:  # counted before a huge list is split
            raise _too_many_tags()
        tags = [t.strip() for t in text.split(",") if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG_LENGTH for t in tags):
        raise _too_many_tags()
    return tags


def _too_many_tags():
    return RequestLimitExceeded(f"A stack has at most {MAX_TAGS} tags of at most "
                                f"{MAX_TAG_LENGTH} characters each.")


def stack_input(body, *, require_name=True, stack=None, patch=False):
    """The create/update/preview arguments from a Heat request body (``stack``: the one a
    PATCH updates, whose files and template its environment files are merged with)."""
    name = body.get("stack_name")
    if require_name:
        if not name:
            raise BadRequest("No stack name specified.")
        if not isinstance(name, str) or not STACK_NAME_RE.match(name):
            raise StackValidationFailed(
                f'Invalid stack name {name} must contain only alphanumeric or "_-." '
                f"characters, must start with alpha and must be 255 characters or less.")
    if body.get("template_url") and not body.get("template"):
        raise BadRequest("template_url is not supported here: send the template itself.")
    files = body.get("files") or {}
    if not isinstance(files, dict):
        raise BadRequest("files must be a mapping of file name to content.")
    params = body.get("parameters") or {}
    if not isinstance(params, dict):
        raise BadRequest("parameters must be a mapping.")
    environment, names = body.get("environment"), body.get("environment_files")
    if names:  # as Heat: the files merged after the parameters, the environment ignored
        old = stack.raw_template if stack is not None and patch else None
        environment = request_environment(
            None, params, environment_files=names,
            files={**old.files, **files} if old is not None else files,
            template=body.get("template") or (old.template if old is not None else None))
        params = {}
    return dict(template=body.get("template"), environment=environment,
                parameters=params, files=files,
                timeout_mins=param_minutes(body.get("timeout_mins")),
                tags=_tags(body.get("tags")))


def adopt_input(body):
    """The ``adopt_stack_data`` of a create (an abandon's answer, as JSON/YAML text or an
    object), or None for a plain create."""
    data = body.get("adopt_stack_data")
    if data is None:
        return None
    check_adopt_enabled()
    if isinstance(data, str):
        data = load_text(data, limits(), what="adopt data")
    if not isinstance(data, dict):
        raise BadRequest("Invalid adopt data: it must be a mapping.")
    if not isinstance(data.get("files") or {}, dict):
        raise BadRequest("Invalid adopt data: files must be a mapping.")
    return data


class StackApiBase(TenantAPIView):
    def links(self):
        return Links(self.request, self.project.pk)

    def stack(self, stack_name, stack_id=None):
        return selectors.stack_get(self.project, stack_name, stack_id,
                                   show_deleted=stack_id is not None)


class StackListApi(StackApiBase):
    def get(self, request, tenant_id):
        params = request.query_params
        everywhere = param_bool(params.get("global_tenant"))
        if everywhere and not is_cloud_admin(request.user):
            raise Forbidden()  # Heat's stacks:global_index, for cloud admins here
        stacks = selectors.stack_list(None if everywhere else self.project, params=params)
        links = self.links()
        return Response({"stacks": [stack_summary(s, links) for s in stacks]})

    def post(self, request, tenant_id):
        body = self.body()
        adopt = adopt_input(body)
        args = stack_input(body)
        if adopt is not None:
            args["template"] = args["template"] or adopt.get("template")
            if not args["environment"] and isinstance(adopt.get("environment"), dict):
                args["environment"] = adopt["environment"]
            args["files"] = {**(adopt.get("files") or {}), **args["files"]}
            args["adopt_resources"] = adopt.get("resources") or {}
        stack = lifecycle.stack_create(
            project=self.project, user=request.user, name=body["stack_name"],
            disable_rollback=param_bool(body.get("disable_rollback"), True), **args)
        href = self.links().stack(stack)
        return Response({"stack": {"id": str(stack.pk), "links": [
            {"href": href, "rel": "self"}]}},
            status=status.HTTP_201_CREATED, headers={"Location": href})


class StackPreviewApi(StackApiBase):
    def post(self, request, tenant_id):
        body = self.body()
        preview = stack_preview(project=self.project, name=body.get("stack_name"),
                                user=request.user,
                                disable_rollback=param_bool(body.get("disable_rollback"), True),
                                **stack_input(body))
        preview["links"] = [{"href": self.links().stack_href(preview["stack_name"], "None"),
                             "rel": "self"}]
        return Response({"stack": preview})


class StackLookupApi(StackApiBase):
    """``/stacks/{name or id}[/sub]``: 302 to the canonical ``/stacks/{name}/{id}``."""

    read_role = "reader"
    write_role = "reader"

    def dispatch_lookup(self, request, tenant_id, stack_name, path=""):
        stack = self.stack(stack_name)
        location = self.links().stack(stack) + (f"/{path}" if path else "")
        if request.META.get("QUERY_STRING"):
            location += "?" + request.META["QUERY_STRING"]
        return HttpResponseRedirect(location)

    get = put = patch = delete = post = dispatch_lookup


class StackDetailApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        stack = self.stack(stack_name, stack_id)
        outputs = selectors.stack_outputs(stack) if stack.deleted_at is None else []
        return Response({"stack": stack_detail(stack, self.links(), outputs=outputs)})

    def put(self, request, tenant_id, stack_name, stack_id):
        return self._update(stack_name, stack_id, patch=False)

    def patch(self, request, tenant_id, stack_name, stack_id):
        return self._update(stack_name, stack_id, patch=True)

    def _update(self, stack_name, stack_id, *, patch):
        body = self.body()
        stack = self.stack(stack_name, stack_id)
        args = stack_input(body, require_name=False, stack=stack, patch=patch)
        if not patch and not args["template"]:
            raise BadRequest("No template specified.")
        # As Heat: a PUT without tags clears them, a PATCH without tags keeps them.
        args["tags"] = None if patch and "tags" not in body else (args["tags"] or [])
        stack_action(
            stack, "update", user=self.request.user, patch=patch,
            clear_parameters=body.get("clear_parameters") or (),
            disable_rollback=param_bool(body["disable_rollback"]) if "disable_rollback" in body
            else None,
            converge=param_bool(body.get("converge", body.get("reconcile", False))), **args)
        return Response(status=status.HTTP_202_ACCEPTED)

    def delete(self, request, tenant_id, stack_name, stack_id):
        stack_action(self.stack(stack_name, stack_id), "delete", user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class StackUpdatePreviewApi(StackApiBase):
    def put(self, request, tenant_id, stack_name, stack_id):
        return self._preview(stack_name, stack_id, patch=False)

    def patch(self, request, tenant_id, stack_name, stack_id):
        return self._preview(stack_name, stack_id, patch=True)

    def _preview(self, stack_name, stack_id, *, patch):
        body = self.body()
        stack = self.stack(stack_name, stack_id)
        args = stack_input(body, require_name=False, stack=stack, patch=patch)
        result = stack_update_preview(stack, patch=patch,
                                      clear_parameters=body.get("clear_parameters") or (),
                                      show_nested=param_bool(
                                          self.request.query_params.get("show_nested")),
                                      **{k: args[k] for k in ("template", "environment",
                                                              "parameters", "files")})
        return Response({"resource_changes": result})


class StackActionApi(StackApiBase):
    def post(self, request, tenant_id, stack_name, stack_id):
        body = self.body()
        action, arg = body_action(body)
        if action not in BODY_ACTIONS:
            raise InvalidActionRequest(f"Invalid action {action} specified")
        stack_action(self.stack(stack_name, stack_id), action, user=request.user,
                     **action_args(action, arg, body))
        return Response(status=status.HTTP_200_OK)


class StackDriftApi(StackApiBase):
    """``GET .../drift``: the stack's last drift report (``{"detect_drift": null}`` makes one)."""

    def get(self, request, tenant_id, stack_name, stack_id):
        report = drift.last_drift_report(self.stack(stack_name, stack_id))
        if report is None:
            raise EntityNotFound(entity="Drift report", name=stack_name)
        return Response({"drift": drift.drift_report_body(report)})


class StackTemplateApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        return Response(self.stack(stack_name, stack_id).raw_template.template)


class StackEnvironmentApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        stack = self.stack(stack_name, stack_id)
        env = masked_environment(stack)
        for key in ("parameters", "parameter_defaults", "resource_registry",
                    "encrypted_param_names", "event_sinks"):
            env.setdefault(key, [] if key in ("encrypted_param_names", "event_sinks") else {})
        return Response(env)


class StackFilesApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        return Response(masked_files(self.stack(stack_name, stack_id)))


class StackOutputListApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        outputs = selectors.stack_outputs(self.stack(stack_name, stack_id))
        return Response({"outputs": [{"output_key": o["output_key"],
                                      "description": o.get("description", "")}
                                     for o in outputs]})


class StackOutputApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, output_key):
        outputs = selectors.stack_outputs(self.stack(stack_name, stack_id))
        for output in outputs:
            if output["output_key"] == output_key:
                return Response({"output": output})
        raise EntityNotFound(entity="Output", name=output_key)


class ResourceListApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id):
        params = request.query_params
        selectors.check_list_params(params, selectors.RESOURCE_LIST_PARAMS)
        stack = self.stack(stack_name, stack_id)
        depth = param_int(params.get("nested_depth"), "nested_depth", default=0)
        detail = param_bool(params.get("with_detail"))
        rows = selectors.stack_resources(
            stack, nested_depth=depth,
            fields=None if detail else selectors.RESOURCE_LIST_FIELDS)
        required_by = _required_by(rows)
        rows = selectors.filter_resources(rows, params)
        links = self.links()
        nested = selectors.nested_stack_names(rows)
        hidden = hidden_values_by_stack(rows)
        return Response({"resources": [
            resource_body(r, links, required_by=required_by.get(r.pk, ()),
                          with_attributes=detail, nested_names=nested,
                          hidden=hidden[r.stack_id]) for r in rows]})


def _required_by(rows):
    return selectors.required_by_ids(rows)


class ResourceDetailApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, resource_name):
        stack = self.stack(stack_name, stack_id)
        res = selectors.stack_resource(stack, resource_name)
        rows = selectors.stack_resources(stack)
        return Response({"resource": resource_body(
            res, self.links(), required_by=_required_by(rows).get(res.pk, ()),
            with_attributes=True, nested_names=selectors.nested_stack_names([res]),
            hidden=hidden_values(stack))})

    def patch(self, request, tenant_id, stack_name, stack_id, resource_name):
        """Heat's mark unhealthy: ``{"mark_unhealthy": bool, "resource_status_reason": ..}``."""
        body = self.body()
        unknown = set(body) - {"mark_unhealthy", "resource_status_reason"}
        if unknown:
            raise BadRequest(f"Invalid keys in resource mark unhealthy {sorted(unknown)}")
        if "mark_unhealthy" not in body:
            raise BadRequest("Missing mandatory (mark_unhealthy) key from mark unhealthy "
                             "request")
        mark = body["mark_unhealthy"]
        if not isinstance(mark, bool):
            if str(mark).lower() not in ("true", "false"):
                raise BadRequest(f"Unrecognized value \"{mark}\" for \"mark_unhealthy\", "
                                 f"acceptable values are: true, false.")
            mark = str(mark).lower() == "true"
        reason = body.get("resource_status_reason") or ""
        if not isinstance(reason, str):
            raise BadRequest("resource_status_reason must be a string.")
        stack_action(self.stack(stack_name, stack_id), "mark_unhealthy", user=request.user,
                     resource_name=resource_name, mark_unhealthy=mark, reason=reason)
        return Response(status=status.HTTP_200_OK)


class ResourceMetadataApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, resource_name):
        res = selectors.stack_resource(self.stack(stack_name, stack_id), resource_name)
        return Response({"metadata": deployments.resource_metadata(res, self.project)})


class ResourceSignalApi(StackApiBase):
    def post(self, request, tenant_id, stack_name, stack_id, resource_name):
        stack = self.stack(stack_name, stack_id)
        stack_action(stack, "signal", user=request.user, resource_name=resource_name,
                     details=request.data if request.data else None, refuse_when_locked=True)
        return Response(status=status.HTTP_200_OK)


class EventListApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, resource_name=None):
        stack = self.stack(stack_name, stack_id)
        if resource_name is not None and not stack.events.filter(
                resource_name=resource_name).exists():
            raise EntityNotFound(entity="Resource", name=resource_name)
        events = selectors.stack_events(stack, params=request.query_params,
                                        resource_name=resource_name)
        links = self.links()
        root = stack if request.query_params.get("nested_depth") not in (None, "", "0") \
            else None
        hidden = hidden_values_by_stack(events)
        return Response({"events": [event_body(e, e.stack, links, root=root,
                                               hidden=hidden[e.stack_id]) for e in events]})


class EventDetailApi(StackApiBase):
    def get(self, request, tenant_id, stack_name, stack_id, resource_name, event_id):
        stack = self.stack(stack_name, stack_id)
        event = selectors.stack_event(stack, event_id)
        if event.resource_name != resource_name:
            raise EntityNotFound(entity="Event", name=event_id)
        return Response({"event": event_body(
            event, stack, self.links(), detail=True, hidden=hidden_values(stack),
            properties=selectors.event_resource_properties(stack, event))})
