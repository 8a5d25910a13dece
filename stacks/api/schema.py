"""OpenAPI documentation of the Heat v1 API (drf-spectacular), kept out of the views.

The views are plain APIViews answering Heat's JSON shapes; this module
describes their bodies and answers, including the lock/unlock actions and
Heat's error body, and is applied to the view classes by ``document()``.
"""
import copy

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, \
    extend_schema_view, inline_serializer
from rest_framework import serializers as s

from heatweb.openapi import HEAT_ERROR
from softwareconfig.api import views as sw
from stacks.api import lock_views as locks
from stacks.api import meta_views as meta
from stacks.api import snapshot_views as snaps
from stacks.api import views as v
from stacks.api import webhooks

JSON = s.JSONField

STACK_BODY = {
    "template": JSON(help_text="HOT template: an object, or YAML/JSON text"),
    "parameters": s.DictField(required=False),
    "environment": JSON(required=False),
    "files": s.DictField(child=s.CharField(), required=False),
    "timeout_mins": s.IntegerField(required=False, min_value=1),
    "disable_rollback": s.BooleanField(required=False, default=True),
    "tags": JSON(required=False),
}
STACK_CREATE = inline_serializer("StackCreate", {
    "stack_name": s.CharField(), **STACK_BODY,
    "adopt_stack_data": JSON(required=False, help_text=(
        "An abandon's answer (object or JSON/YAML text): adopt its resources instead of "
        "creating them; template, environment and files default to its own"))})
STACK_UPDATE = inline_serializer("StackUpdate", {
    **STACK_BODY, "template": JSON(required=False),
    "clear_parameters": s.ListField(child=s.CharField(), required=False,
                                    help_text="PATCH: parameters to return to defaults")})
STACK_CREATED = inline_serializer("StackCreated", {"stack": inline_serializer(
    "StackRef", {"id": s.UUIDField(), "links": JSON()})})


def _obj(name, fields, **kwargs):
    # A copy with fresh field instances: DRF's metaclass pops the fields out of the
    # mapping it is given, and a field instance belongs to one serializer only.
    return inline_serializer(name, {k: copy.deepcopy(f) for k, f in fields.items()}, **kwargs)


def _text(**kwargs):
    return s.CharField(allow_null=True, allow_blank=True, **kwargs)


LINKS = s.ListField(child=_obj("Link", {"href": s.CharField(), "rel": s.CharField()}))
TIME = _text(help_text="ISO 8601 UTC, e.g. 2026-11-23T16:00:00Z")
STACK_SUMMARY_FIELDS = {
    "id": s.UUIDField(), "stack_name": s.CharField(), "links": LINKS,
    "description": JSON(allow_null=True), "stack_status": s.CharField(),
    "stack_status_reason": _text(), "creation_time": TIME, "updated_time": TIME,
    "deletion_time": TIME, "stack_owner": _text(), "parent": _text(),
    "stack_user_project_id": s.CharField(), "project": s.CharField(),
    "tags": s.ListField(child=s.CharField(), allow_null=True),
    "locked": s.BooleanField(), "lock_level": _text(), "lock_reason": _text(),
    "lock_allow": s.ListField(child=s.CharField(), help_text=(
        "what the lock lets through: signal, suspend_resume, check")),
    "locked_by": _text(), "locked_at": TIME, "lock_expires_at": TIME,
    "suspended": s.BooleanField(help_text="suspended, also under a lock or after an unlock")}
STACK_SUMMARY = _obj("StackSummary", STACK_SUMMARY_FIELDS)
OUTPUT = _obj("StackOutput", {
    "output_key": s.CharField(), "description": _text(), "output_value": JSON(allow_null=True),
    "output_error": s.CharField(required=False)})
STACK_DETAIL = _obj("StackDetail", {
    **STACK_SUMMARY_FIELDS, "template_description": JSON(allow_null=True),
    "disable_rollback": s.BooleanField(), "timeout_mins": s.IntegerField(allow_null=True),
    "capabilities": s.ListField(child=JSON()), "notification_topics": s.ListField(child=JSON()),
    "parameters": s.DictField(child=s.CharField(allow_blank=True)),
    "outputs": s.ListField(child=OUTPUT)})
STACK = _obj("StackShow", {"stack": STACK_DETAIL})
STACK_LIST = _obj("StackList", {"stacks": s.ListField(child=STACK_SUMMARY)})
STACK_PREVIEW = _obj("StackPreviewAnswer", {"stack": JSON(help_text=(
    "The stack as it would be created, with its resources"))})
UPDATE_PREVIEW = _obj("UpdatePreviewAnswer", {"resource_changes": s.DictField(
    child=s.ListField(child=JSON()),
    help_text="added, deleted, replaced, updated, unchanged: lists of resources")})
RESOURCE_FIELDS = {
    "resource_name": s.CharField(), "logical_resource_id": s.CharField(),
    "physical_resource_id": s.CharField(allow_blank=True), "resource_type": s.CharField(),
    "resource_status": s.CharField(), "resource_status_reason": _text(),
    "creation_time": TIME, "updated_time": TIME,
    "required_by": s.ListField(child=s.CharField()), "stack_name": s.CharField(),
    "stack_identity": JSON(), "links": LINKS,
    "attributes": JSON(required=False), "description": s.CharField(required=False,
                                                                    allow_blank=True),
    "metadata": JSON(required=False, allow_null=True)}
RESOURCE = _obj("Resource", RESOURCE_FIELDS)
EVENT = _obj("Event", {
    "id": s.UUIDField(), "event_time": TIME, "resource_name": s.CharField(),
    "logical_resource_id": s.CharField(), "physical_resource_id": _text(),
    "resource_status": s.CharField(), "resource_action": s.CharField(),
    "resource_status_reason": _text(), "links": LINKS,
    "resource_type": s.CharField(required=False), "resource_properties": JSON(required=False)})
ENVIRONMENT = _obj("Environment", {
    "parameters": JSON(), "parameter_defaults": JSON(), "resource_registry": JSON(),
    "encrypted_param_names": s.ListField(child=JSON()),
    "event_sinks": s.ListField(child=JSON())})
VALIDATED = _obj("ValidateAnswer", {
    "Description": JSON(allow_null=True), "Parameters": s.DictField(child=JSON()),
    "ParameterGroups": s.ListField(child=JSON(), required=False,
                                   help_text="Only when the template has parameter_groups"),
    "NestedParameters": s.DictField(child=JSON(), required=False,
                                    help_text="With show_nested=true: per nested-stack "
                                              "resource, its template's parameters"),
    "Environment": JSON()})
MARK_UNHEALTHY = inline_serializer("MarkUnhealthy", {
    "mark_unhealthy": s.BooleanField(help_text="true: CHECK_FAILED (the next update "
                                               "replaces it); false: resets CHECK_FAILED"),
    "resource_status_reason": s.CharField(required=False, allow_blank=True)})
FREE_OBJECT = s.DictField(child=JSON(allow_null=True), help_text="Heat's JSON answer")
SOFTWARE_CONFIG_FIELDS = {"id": s.UUIDField(), "name": _text(), "group": s.CharField(),
                          "creation_time": TIME}
SOFTWARE_CONFIG_SHOWN = _obj("SoftwareConfig", {
    **SOFTWARE_CONFIG_FIELDS, "config": JSON(allow_null=True),
    "inputs": JSON(allow_null=True), "outputs": JSON(allow_null=True),
    "options": JSON(allow_null=True)})
SOFTWARE_DEPLOYMENT_SHOWN = _obj("SoftwareDeployment", {
    "id": s.UUIDField(), "config_id": _text(), "server_id": s.CharField(),
    "input_values": JSON(allow_null=True), "output_values": JSON(allow_null=True),
    "action": s.CharField(), "status": s.CharField(), "status_reason": _text(),
    "creation_time": TIME, "updated_time": TIME})
ANSWERS = {
    "outputs": _obj("OutputList", {"outputs": s.ListField(child=_obj("OutputKey", {
        "output_key": s.CharField(), "description": _text()}))}),
    "output": _obj("OutputShow", {"output": OUTPUT}),
    "resources": _obj("ResourceList", {"resources": s.ListField(child=RESOURCE)}),
    "resource": _obj("ResourceShow", {"resource": RESOURCE}),
    "metadata": _obj("ResourceMetadata", {"metadata": JSON(allow_null=True)}),
    "events": _obj("EventList", {"events": s.ListField(child=EVENT)}),
    "event": _obj("EventShow", {"event": EVENT}),
    "versions": _obj("TemplateVersions", {"template_versions": s.ListField(child=_obj(
        "TemplateVersion", {"version": s.CharField(), "type": s.CharField(),
                            "aliases": s.ListField(child=s.CharField(), required=False)}))}),
    "functions": _obj("TemplateFunctions", {"template_functions": s.ListField(child=_obj(
        "TemplateFunction", {"functions": s.CharField(), "description": s.CharField()}))}),
    "types": _obj("ResourceTypes", {"resource_types": s.ListField(child=JSON())}),
    "type": _obj("ResourceTypeSchema", {
        "resource_type": s.CharField(), "properties": JSON(), "attributes": JSON(),
        "support_status": JSON(required=False)}),
    "build": _obj("BuildInfo", {"api": JSON(), "engine": JSON()}),
    "configs": _obj("SoftwareConfigList", {"software_configs": s.ListField(child=_obj(
        "SoftwareConfigSummary", SOFTWARE_CONFIG_FIELDS))}),
    "config": _obj("SoftwareConfigShow", {"software_config": SOFTWARE_CONFIG_SHOWN}),
    "deployments": _obj("SoftwareDeploymentList", {
        "software_deployments": s.ListField(child=SOFTWARE_DEPLOYMENT_SHOWN)}),
    "deployment": _obj("SoftwareDeploymentShow",
                       {"software_deployment": SOFTWARE_DEPLOYMENT_SHOWN}),
    "server_metadata": _obj("ServerMetadata", {"metadata": s.ListField(child=JSON())}),
}
LOCK_OPTIONS = {
    "level": s.ChoiceField(choices=["all", "stacks"], default="all", required=False),
    "expires_at": s.CharField(required=False, help_text=(
        "ISO 8601: the engine unlocks the stack then (the lock window closes)")),
    "duration": s.CharField(required=False, help_text=(
        'How long the lock lasts: "90s", "30m", "2h", "1d12h" (not with expires_at)'))}
LOCK = inline_serializer("LockOptions", copy.deepcopy(LOCK_OPTIONS))
LOCK_OPTIONS_FLEET = inline_serializer("FleetLockOptions", copy.deepcopy(LOCK_OPTIONS),
                                       required=False)
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
SIGNAL = s.DictField(child=JSON(allow_null=True), required=False,
                     help_text="Signal details (any JSON object)")

LOCK_RECORD = _obj("LockRecord", {
    "id": s.IntegerField(), "kind": s.ChoiceField(choices=[
        "lock", "relock", "unlock", "expiry", "refusal", "heal", "interrupt", "resume"]),
    "time": TIME, "user": _text(), "level": _text(), "reason": _text(),
    "allow": s.ListField(child=s.CharField()),
    "expires_at": TIME, "held_seconds": s.FloatField(allow_null=True), "detail": _text()})
LOCKED_STACK = _obj("LockedStack", {
    "id": s.UUIDField(), "stack_name": s.CharField(), "project": s.CharField(),
    "stack_status": s.CharField(), "parent": _text(), "lock_level": _text(),
    "lock_allow": s.ListField(child=s.CharField()),
    "lock_reason": _text(), "locked_by": _text(), "locked_at": TIME, "lock_expires_at": TIME,
    "links": LINKS})
PREVIEW_STACK = _obj("LockPreviewStack", {
    "id": s.UUIDField(), "stack_name": s.CharField(), "stack_status": s.CharField(),
    "nested": s.BooleanField(), "locked": s.BooleanField(), "lock_level": _text()})
PREVIEW_WHERE = {"stack_name": s.CharField(), "resource_name": s.CharField(),
                 "resource_type": s.CharField(), "physical_resource_id": _text()}
PREVIEW_OBJECT = _obj("LockPreviewObject", {
    **PREVIEW_WHERE, "object": s.CharField(), "protected_now": s.BooleanField(),
    "held_by_lock": s.BooleanField(), "detail": _text()})
PREVIEW_CANNOT = _obj("LockPreviewCannot", {**PREVIEW_WHERE, "why": s.CharField()})
ANSWERS["lock_preview"] = _obj("LockPreview", {"preview": _obj("LockPreviewBody", {
    "level": s.CharField(), "stacks": s.ListField(child=PREVIEW_STACK),
    "objects": s.ListField(child=PREVIEW_OBJECT),
    "cannot_lock": s.ListField(child=PREVIEW_CANNOT)})})
ANSWERS["lock_verify"] = _obj("LockVerify", {"findings": s.ListField(child=_obj(
    "LockFinding", {"stack_name": s.CharField(), "resource_name": s.CharField(),
                    "object": s.CharField(), "healed": s.BooleanField(),
                    "detail": s.CharField()}))})
FLEET = inline_serializer("FleetAction", {
    "lock": LOCK_OPTIONS_FLEET, "unlock": JSON(required=False, allow_null=True),
    "reason": s.CharField(required=False), "stacks": s.ListField(
        child=s.CharField(), required=False, help_text="Stack names or ids"),
    "tag": s.CharField(required=False, help_text="Every top-level stack with this tag"),
    "name": s.CharField(required=False, help_text="Every top-level stack whose name matches "
                                                  "this pattern (web-*)")})
ANSWERS["fleet"] = _obj("FleetResults", {"results": s.ListField(child=_obj("FleetResult", {
    "asked": s.CharField(), "id": _text(), "stack_name": _text(), "status": s.IntegerField(),
    "outcome": s.ChoiceField(choices=["started", "refused"]),
    "error": JSON(required=False)}))})
LOCK_WINDOW = _obj("LockWindow", {
    "id": s.IntegerField(), "starts_at": TIME, "ends_at": TIME, "level": s.CharField(),
    "reason": _text(), "user": _text(), "state": s.ChoiceField(choices=[
        "scheduled", "waiting", "active", "done", "cancelled", "failed"]), "note": _text()})
ANSWERS["lock_window"] = _obj("LockWindowShow", {"lock_window": LOCK_WINDOW})
ANSWERS["lock_windows"] = _obj("LockWindowList", {"lock_windows": s.ListField(
    child=LOCK_WINDOW)})
WINDOW_BODY = inline_serializer("LockWindowBody", {
    "starts_at": s.CharField(required=False, help_text="ISO 8601: the engine locks then"),
    "ends_at": s.CharField(required=False, help_text="ISO 8601: the lock expires then"),
    "level": s.ChoiceField(choices=["all", "stacks"], required=False),
    "reason": s.CharField(required=False)})
ANSWERS["locks"] = _obj("LockHistory", {"locks": s.ListField(child=LOCK_RECORD)})
ANSWERS["locked"] = _obj("LockedStacks", {"locked_stacks": s.ListField(child=LOCKED_STACK)})

ERRORS = {code: OpenApiResponse(HEAT_ERROR, description=text) for code, text in (
    (400, "Bad request (e.g. InvalidTemplate, StackValidationFailed, "
          "ImmutableParameterModified)"),
    (401, "No or bad X-Auth-Token"), (403, "Not a project of the token's user, or role"),
    (404, "Not found"), (405, "The path does not take this method"),
    (409, "Conflict: ActionInProgress, StackExists, StackLocked, InvalidStackState"),
    (413, "Request limit exceeded (a budget of README's Limits)"),
    (415, "The body is not application/json"))}


def _op(summary, *, request=None, ok=200, answer=FREE_OBJECT, description=None,
        parameters=()):
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

STACK_DATA = _obj("StackData", {
    "name": s.CharField(), "id": s.UUIDField(), "action": s.CharField(),
    "status": s.CharField(), "template": JSON(), "environment": JSON(), "files": JSON(),
    "resources": s.DictField(child=JSON()), "project_id": s.CharField(),
    "stack_user_project_id": s.CharField(),
    "tags": s.ListField(child=s.CharField(), allow_null=True)})
SNAPSHOT = _obj("Snapshot", {
    "id": s.UUIDField(), "name": _text(), "action": s.CharField(), "status": s.CharField(),
    "status_reason": _text(), "data": JSON(allow_null=True), "creation_time": TIME})
SNAPSHOT_BODY = inline_serializer("SnapshotCreate", {"name": s.CharField(required=False)})
ANSWERS["snapshots"] = _obj("SnapshotList", {"snapshots": s.ListField(child=SNAPSHOT)})
ANSWERS["snapshot"] = _obj("SnapshotShow", {"snapshot": SNAPSHOT})
ANSWERS["services"] = _obj("ServiceList", {"services": s.ListField(child=_obj("Service", {
    "id": s.CharField(), "binary": s.CharField(), "hostname": s.CharField(),
    "engine_id": s.CharField(), "host": s.CharField(), "topic": s.CharField(),
    "report_interval": s.FloatField(), "status": s.CharField(), "created_at": TIME,
    "updated_at": TIME, "deleted_at": TIME}))})

DOCS = {
    v.StackListApi: dict(get=_op("List stacks", answer=STACK_LIST, parameters=LIST_PARAMS),
                         post=_op("Create a stack", request=STACK_CREATE, ok=201,
                                  answer=STACK_CREATED)),
    v.StackPreviewApi: dict(post=_op("Preview a stack create", request=STACK_CREATE,
                                     answer=STACK_PREVIEW)),
    v.StackLookupApi: dict(get=_op("Find a stack by name or id (302 to name/id)", ok=302,
                                   answer=None)),
    v.StackDetailApi: dict(
        get=_op("Show a stack", answer=STACK),
        put=_op("Update a stack (replace environment)", request=STACK_UPDATE, ok=202,
                answer=None),
        patch=_op("Update a stack keeping existing parameters", request=STACK_UPDATE, ok=202,
                  answer=None),
        delete=_op("Delete a stack", ok=204, answer=None)),
    v.StackUpdatePreviewApi: dict(put=_op("Preview an update", request=STACK_UPDATE,
                                          answer=UPDATE_PREVIEW),
                                  patch=_op("Preview a PATCH update", request=STACK_UPDATE,
                                            answer=UPDATE_PREVIEW)),
    v.StackDriftApi: dict(get=_op(
        "Show the stack's last drift report", description=(
            'Made by the action {"detect_drift": null}: per resource IN_SYNC, MODIFIED '
            "(differences: property, expected, actual), DELETED or NOT_CHECKED."))),
    v.StackActionApi: dict(post=_op(
        "Run a stack action", request=ACTION, answer=None, description=(
            "Exactly one key: suspend, resume, check, cancel_update, cancel_without_rollback, "
            'lock ({"lock": {"level": "all"|"stacks"}, "reason": "..."}; null or {} means '
            'level all; also allow and interrupt) or unlock ({"unlock": null}) or '
            'detect_drift (null; the report is at .../drift) or reauthorise (null: the owner '
            "of a stack imported from Heat, or a project admin, consents to heatweb acting "
            "on the cloud for it; docs/migration.md). 200 when the action started; 409 "
            "StackLocked/ActionInProgress/InvalidStackState when the state table refuses; "
            "403 while an imported stack waits for its owner's consent."))),
    locks.StackLockHistoryApi: dict(get=_op(
        "A stack's lock history", answer=ANSWERS["locks"], parameters=[
            OpenApiParameter("limit", str, description="Page size"),
            OpenApiParameter("marker", str, description="id of the last record of the "
                                                        "previous page"),
            OpenApiParameter("sort_dir", str, description="desc (newest first) or asc")])),
    locks.StackLockPreviewApi: dict(get=_op(
        "Preview a lock (dry run)", answer=ANSWERS["lock_preview"], parameters=[
            OpenApiParameter("level", str, description="all (default) or stacks")])),
    locks.StackLockVerifyApi: dict(post=_op(
        "Verify a locked stack's physical locks now", answer=ANSWERS["lock_verify"],
        description="Each physical lock removed behind heatweb's back is recorded as an "
                    "event naming the object and, with LOCK_HEAL=heal, locked again. 409 "
                    "InvalidStackState unless the stack is LOCK_COMPLETE.")),
    locks.FleetActionApi: dict(post=_op(
        "Lock or unlock several stacks", request=FLEET, answer=ANSWERS["fleet"],
        description="One result per stack, in order: a stack refused (in progress, not "
                    "found, locked by a cloud admin) is refused alone; the others go on. "
                    "400 for a bad body or window, before any stack is touched.")),
    locks.StackLockWindowListApi: dict(
        get=_op("List a stack's lock windows", answer=ANSWERS["lock_windows"]),
        post=_op("Schedule a lock window", request=WINDOW_BODY, ok=201,
                 answer=ANSWERS["lock_window"], description=(
                     "starts_at and ends_at are required; 400 for bad or overlapping "
                     "times"))),
    locks.StackLockWindowApi: dict(
        get=_op("Show a lock window", answer=ANSWERS["lock_window"]),
        patch=_op("Change a scheduled lock window", request=WINDOW_BODY,
                  answer=ANSWERS["lock_window"]),
        delete=_op("Cancel a lock window (an active one unlocks the stack)",
                   answer=ANSWERS["lock_window"])),
    locks.LockedStacksApi: dict(get=_op(
        "Stacks locked now", answer=ANSWERS["locked"], parameters=[
            OpenApiParameter("all_projects", str, description="true: every project's "
                                                              "(cloud admins)")])),
    v.StackTemplateApi: dict(get=_op("The stack's template")),
    v.StackEnvironmentApi: dict(get=_op("The stack's environment", answer=ENVIRONMENT)),
    v.StackFilesApi: dict(get=_op("The stack's files", answer=s.DictField(child=s.CharField(
        allow_blank=True)))),
    v.StackOutputListApi: dict(get=_op("List outputs", answer=ANSWERS["outputs"])),
    v.StackOutputApi: dict(get=_op("Show an output", answer=ANSWERS["output"])),
    v.ResourceListApi: dict(get=_op("List resources", answer=ANSWERS["resources"], parameters=[
        OpenApiParameter("nested_depth", int), OpenApiParameter("with_detail", bool)] + [
        OpenApiParameter(n, str, description="Filter (may repeat; type: a substring)")
        for n in ("type", "name", "status", "action", "id", "physical_resource_id")],
        description="400 for any other query parameter.")),
    v.ResourceDetailApi: dict(
        get=_op("Show a resource", answer=ANSWERS["resource"]),
        patch=_op("Mark a resource unhealthy (or reset it)", request=MARK_UNHEALTHY,
                  answer=None, description="409 StackLocked when a lock holds over the "
                                           "stack, ActionInProgress while it is worked on.")),
    v.ResourceMetadataApi: dict(get=_op("A resource's metadata", answer=ANSWERS["metadata"])),
    v.ResourceSignalApi: dict(post=_op("Signal a resource", request=SIGNAL, answer=None)),
    v.EventListApi: dict(get=_op(
        "List events", answer=ANSWERS["events"], parameters=LIST_PARAMS[:4] + [
            OpenApiParameter("nested_depth", int, description="Also the events of nested "
                                                             "stacks to this depth")] + [
            OpenApiParameter(n, str) for n in ("resource_action", "resource_status",
                                               "resource_name", "resource_type")])),
    v.EventDetailApi: dict(get=_op("Show an event", answer=ANSWERS["event"])),
    meta.ValidateApi: dict(post=_op("Validate a template", request=VALIDATE,
                                    answer=VALIDATED, parameters=[
                                        OpenApiParameter("show_nested", bool),
                                        OpenApiParameter("ignore_errors", str, description=(
                                            "Comma separated error codes (99001)"))])),
    meta.TemplateVersionListApi: dict(get=_op("List template versions",
                                              answer=ANSWERS["versions"])),
    meta.TemplateFunctionListApi: dict(get=_op("List a version's functions",
                                               answer=ANSWERS["functions"])),
    meta.ResourceTypeListApi: dict(get=_op("List resource types", answer=ANSWERS["types"])),
    meta.ResourceTypeApi: dict(get=_op("Show a resource type's schema", answer=ANSWERS["type"])),
    meta.ResourceTypeTemplateApi: dict(get=_op("A template for a resource type")),
    meta.BuildInfoApi: dict(get=_op("Build information", answer=ANSWERS["build"])),
    snaps.SnapshotListApi: dict(
        get=_op("List a stack's snapshots", answer=ANSWERS["snapshots"]),
        post=_op("Snapshot a stack", request=SNAPSHOT_BODY, answer=SNAPSHOT, description=(
            "Starts a SNAPSHOT of the stack (SNAPSHOT_IN_PROGRESS); the snapshot is "
            "IN_PROGRESS until it ends. 409 when the state table refuses (locked, in "
            "progress, suspended)."))),
    snaps.SnapshotApi: dict(get=_op("Show a snapshot", answer=ANSWERS["snapshot"]),
                            delete=_op("Delete a snapshot", ok=204, answer=None)),
    snaps.SnapshotRestoreApi: dict(post=_op(
        "Restore a snapshot", ok=202, answer=None,
        description="A RESTORE of the stack to the snapshot's template, environment and "
                    "resource data (a server boots from its snapshot image).")),
    snaps.StackAbandonApi: dict(delete=_op(
        "Abandon a stack (keep its physical resources)", answer=STACK_DATA,
        description="Removes the stack from heatweb and answers its data for an adopt; "
                    "400 NotSupported when HEATWEB_ENABLE_STACK_ABANDON is off.")),
    snaps.StackExportApi: dict(get=_op("Export a stack's data", answer=STACK_DATA)),
    snaps.ServiceListApi: dict(get=_op("List the engines (cloud admins)",
                                       answer=ANSWERS["services"])),
    webhooks.SignalWebhookApi: dict(post=_op(
        "Signal through a signed URL (alarm_url); no token", request=SIGNAL, answer=None),
        put=_op("Signal as heat-cfntools' cfn-signal does (JSON body, any Content-Type); "
                "no token", request=SIGNAL, answer=None)),
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
    return {
        sw.SoftwareConfigListApi: dict(
            get=_op("List software configs", answer=ANSWERS["configs"],
                    parameters=LIST_PARAMS[:2]),
            post=_op("Create a software config", request=SOFTWARE_CONFIG,
                     answer=ANSWERS["config"])),
        sw.SoftwareConfigApi: dict(get=_op("Show a software config", answer=ANSWERS["config"]),
                                   delete=_op("Delete a software config", ok=204, answer=None)),
        sw.SoftwareDeploymentListApi: dict(
            get=_op("List software deployments", answer=ANSWERS["deployments"], parameters=[
                OpenApiParameter("server_id", str, description="Only this server's")]),
            post=_op("Create a software deployment", request=SOFTWARE_DEPLOYMENT,
                     answer=ANSWERS["deployment"])),
        sw.SoftwareDeploymentApi: dict(
            get=_op("Show a software deployment", answer=ANSWERS["deployment"]),
            put=_op("Update a software deployment (status, outputs)",
                    request=SOFTWARE_DEPLOYMENT, answer=ANSWERS["deployment"]),
            delete=_op("Delete a software deployment", ok=204, answer=None)),
        sw.ServerMetadataApi: dict(get=_op(
            "A server's deployment metadata (what the agent applies)",
            answer=ANSWERS["server_metadata"])),
    }


def document():
    DOCS.update(_software_docs())
    for view, operations in DOCS.items():
        extend_schema_view(**operations)(view)
