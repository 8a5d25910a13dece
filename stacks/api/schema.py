"""OpenAPI documentation of the Heat v1 API (drf-spectacular), kept out of the views.

The views are plain APIViews answering Heat's JSON shapes; this module
describes their bodies and answers, including the lock/unlock actions and
Heat's error body, and is applied to the view classes by ``document()``.
"""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, \
    extend_schema_view, inline_serializer
from rest_framework import serializers as s

from heatweb.openapi import HEAT_ERROR
from stacks.api import meta_views as meta
from stacks.api import views as v
from stacks.api import webhooks

JSON = s.JSONField

STACK_BODY = {
    "template": JSON(help_text="HOT template: an object, or YAML/JSON text"),
    "parameters": s.DictField(required=False),
    "environment": JSON(required=False),
    "files": s.DictField(child=s.CharField(), required=False),
    "timeout_mins": s.FloatField(required=False),
    "disable_rollback": s.BooleanField(required=False, default=True),
    "tags": JSON(required=False),
}
STACK_CREATE = inline_serializer("StackCreate", {"stack_name": s.CharField(), **STACK_BODY})
STACK_UPDATE = inline_serializer("StackUpdate", {
    **STACK_BODY, "template": JSON(required=False),
    "clear_parameters": s.ListField(child=s.CharField(), required=False,
                                    help_text="PATCH: parameters to return to defaults")})
STACK_CREATED = inline_serializer("StackCreated", {"stack": inline_serializer(
    "StackRef", {"id": s.UUIDField(), "links": JSON()})})
STACK = inline_serializer("StackShow", {"stack": JSON(help_text=(
    "Heat's stack: id, stack_name, stack_status, stack_status_reason, parameters, outputs, "
    "links, creation_time, updated_time, and locked, lock_level, lock_reason, locked_by, "
    "locked_at"))})
LOCK = inline_serializer("LockOptions", {
    "level": s.ChoiceField(choices=["all", "stacks"], default="all", required=False)})
ACTION = inline_serializer("StackAction", {
    "suspend": JSON(required=False, allow_null=True), "resume": JSON(required=False,
                                                                     allow_null=True),
    "check": JSON(required=False, allow_null=True),
    "cancel_update": JSON(required=False, allow_null=True),
    "cancel_without_rollback": JSON(required=False, allow_null=True),
    "lock": LOCK, "unlock": JSON(required=False, allow_null=True),
    "reason": s.CharField(required=False, help_text="Why the stack is locked (lock only)")})
VALIDATE = inline_serializer("Validate", {"template": JSON(), "parameters": s.DictField(
    required=False), "environment": JSON(required=False), "files": s.DictField(required=False)})
OBJECT = inline_serializer("HeatObject", {"*": JSON(help_text="Heat's JSON answer")})

ERRORS = {code: OpenApiResponse(HEAT_ERROR, description=text) for code, text in (
    (400, "Bad request (e.g. InvalidTemplate, StackValidationFailed, "
          "ImmutableParameterModified)"),
    (401, "No or bad X-Auth-Token"), (403, "Not a project of the token's user, or role"),
    (404, "Not found"),
    (409, "Conflict: ActionInProgress, StackExists, StackLocked, InvalidStackState"),
    (413, "Request limit exceeded"))}


def _op(summary, *, request=None, ok=200, answer=OBJECT, description=None, parameters=()):
    operation_id = "_".join(summary.lower().replace("'", "").split()[:6])
    return extend_schema(summary=summary, description=description, request=request,
                         operation_id=operation_id,
                         parameters=list(parameters),
                         responses={ok: answer if answer is not None else
                                    OpenApiResponse(description="No content"), **ERRORS})


LIST_PARAMS = [OpenApiParameter(n, str, description=d) for n, d in (
    ("limit", "Page size"), ("marker", "Id of the last item of the previous page"),
    ("sort_keys", "Sort key"), ("sort_dir", "asc or desc"),
    ("show_nested", "Include nested stacks"), ("show_deleted", "Include deleted stacks"),
    ("name", "Filter"), ("status", "Filter"), ("id", "Filter"))]

DOCS = {
    v.StackListApi: dict(get=_op("List stacks", parameters=LIST_PARAMS),
                         post=_op("Create a stack", request=STACK_CREATE, ok=201,
                                  answer=STACK_CREATED)),
    v.StackPreviewApi: dict(post=_op("Preview a stack create", request=STACK_CREATE)),
    v.StackLookupApi: dict(get=_op("Find a stack by name or id (302 to name/id)", ok=302,
                                   answer=None)),
    v.StackDetailApi: dict(
        get=_op("Show a stack", answer=STACK),
        put=_op("Update a stack (replace environment)", request=STACK_UPDATE, ok=202,
                answer=None),
        patch=_op("Update a stack keeping existing parameters", request=STACK_UPDATE, ok=202,
                  answer=None),
        delete=_op("Delete a stack", ok=204, answer=None)),
    v.StackUpdatePreviewApi: dict(put=_op("Preview an update", request=STACK_UPDATE),
                                  patch=_op("Preview a PATCH update", request=STACK_UPDATE)),
    v.StackActionApi: dict(post=_op(
        "Run a stack action", request=ACTION, answer=None, description=(
            "Exactly one key: suspend, resume, check, cancel_update, cancel_without_rollback, "
            'lock ({"lock": {"level": "all"|"stacks"}, "reason": "..."}; null or {} means '
            'level all) or unlock ({"unlock": null}). 200 when the action started; 409 '
            "StackLocked/ActionInProgress/InvalidStackState when the state table refuses."))),
    v.StackTemplateApi: dict(get=_op("The stack's template")),
    v.StackEnvironmentApi: dict(get=_op("The stack's environment")),
    v.StackFilesApi: dict(get=_op("The stack's files")),
    v.StackOutputListApi: dict(get=_op("List outputs")),
    v.StackOutputApi: dict(get=_op("Show an output")),
    v.ResourceListApi: dict(get=_op("List resources", parameters=[
        OpenApiParameter("nested_depth", int)])),
    v.ResourceDetailApi: dict(get=_op("Show a resource")),
    v.ResourceMetadataApi: dict(get=_op("A resource's metadata")),
    v.ResourceSignalApi: dict(post=_op("Signal a resource", request=OBJECT, answer=None)),
    v.EventListApi: dict(get=_op("List events", parameters=LIST_PARAMS[:4] + [
        OpenApiParameter(n, str) for n in ("resource_action", "resource_status",
                                           "resource_name", "resource_type")])),
    v.EventDetailApi: dict(get=_op("Show an event")),
    meta.ValidateApi: dict(post=_op("Validate a template", request=VALIDATE)),
    meta.TemplateVersionListApi: dict(get=_op("List template versions")),
    meta.TemplateFunctionListApi: dict(get=_op("List a version's functions")),
    meta.ResourceTypeListApi: dict(get=_op("List resource types")),
    meta.ResourceTypeApi: dict(get=_op("Show a resource type's schema")),
    meta.ResourceTypeTemplateApi: dict(get=_op("A template for a resource type")),
    meta.BuildInfoApi: dict(get=_op("Build information")),
    webhooks.SignalWebhookApi: dict(post=_op(
        "Signal through a signed URL (alarm_url); no token", request=OBJECT, answer=None)),
}

SOFTWARE_CONFIG = inline_serializer("SoftwareConfigCreate", {
    "name": s.CharField(required=False), "group": s.CharField(
        required=False, default="Heat::Ungrouped", help_text="The tool, or component"),
    "config": JSON(required=False, help_text='Script text, a map, or for group component '
                   '{"configs": [{"actions": [...], "config": ..., "tool": ...}]}'),
    "inputs": s.ListField(child=JSON(), required=False),
    "outputs": s.ListField(child=JSON(), required=False),
    "options": s.DictField(required=False)})
SOFTWARE_DEPLOYMENT = inline_serializer("SoftwareDeploymentBody", {
    "config_id": s.UUIDField(required=False), "server_id": s.CharField(required=False),
    "input_values": s.DictField(required=False), "output_values": s.DictField(required=False),
    "action": s.CharField(required=False), "status": s.ChoiceField(
        choices=["IN_PROGRESS", "COMPLETE", "FAILED"], required=False),
    "status_reason": s.CharField(required=False)})


def _software_docs():
    from softwareconfig.api import views as sw

    return {
        sw.SoftwareConfigListApi: dict(
            get=_op("List software configs", parameters=LIST_PARAMS[:2]),
            post=_op("Create a software config", request=SOFTWARE_CONFIG)),
        sw.SoftwareConfigApi: dict(get=_op("Show a software config"),
                                   delete=_op("Delete a software config", ok=204, answer=None)),
        sw.SoftwareDeploymentListApi: dict(
            get=_op("List software deployments", parameters=[
                OpenApiParameter("server_id", str, description="Only this server's")]),
            post=_op("Create a software deployment", request=SOFTWARE_DEPLOYMENT)),
        sw.SoftwareDeploymentApi: dict(
            get=_op("Show a software deployment"),
            put=_op("Update a software deployment (status, outputs)",
                    request=SOFTWARE_DEPLOYMENT),
            delete=_op("Delete a software deployment", ok=204, answer=None)),
        sw.ServerMetadataApi: dict(get=_op(
            "A server's deployment metadata (what the agent applies)")),
    }


def document():
    DOCS.update(_software_docs())
    for view, operations in DOCS.items():
        extend_schema_view(**operations)(view)
