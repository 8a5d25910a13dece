"""Lock endpoints beyond the lock action: a stack's lock history, what is locked now."""
from rest_framework.response import Response

from heatweb.api import param_bool
from heatweb.exceptions import BadRequest, Forbidden, InvalidActionRequest
from heatweb.tokens import is_cloud_admin
from stacks.api.representations import heat_time
from stacks.api.views import StackApiBase
from stacks.lock_selectors import lock_history, locked_now
from stacks.api.views import action_args
from stacks.services.actions import stack_action
from stacks.services import lock_schedule
from stacks.services.fleet import FLEET_ACTIONS, fleet_action
from stacks.services.lock_healing import lock_preview


def lock_record_body(record):
    return {"id": record.id, "kind": record.kind, "time": heat_time(record.at),
            "user": record.username or None, "level": record.level or None,
            "reason": record.reason or None, "allow": list(record.allow or []),
            "expires_at": heat_time(record.expires_at),
            "held_seconds": None if record.held_seconds is None else round(record.held_seconds, 3),
            "detail": record.detail or None}


def locked_stack_body(stack, root):
    return {"id": str(stack.pk), "stack_name": stack.name, "project": stack.project_id,
            "stack_status": stack.state, "parent": str(stack.parent_id) if stack.parent_id
            else None, "lock_level": stack.lock_level or None,
            "lock_allow": list(stack.lock_allow or []),
            "lock_reason": stack.lock_reason or None,
            "locked_by": stack.locked_by.username if stack.locked_by_id else None,
            "locked_at": heat_time(stack.locked_at),
            "lock_expires_at": heat_time(stack.lock_expires_at),
            "links": [{"href": f"{root}{stack.project_id}/stacks/{stack.name}/{stack.pk}",
                       "rel": "self"}]}


class StackLockHistoryApi(StackApiBase):
    """``GET .../stacks/{name}/{id}/locks``: every lock, relock, unlock, expiry and refusal."""

    def get(self, request, tenant_id, stack_name, stack_id):
        stack = self.stack(stack_name, stack_id)
        records = lock_history(stack, params=request.query_params)
        return Response({"locks": [lock_record_body(r) for r in records]})


class LockedStacksApi(StackApiBase):
    """``GET /v1/{project}/locks``: the project's stacks locked now, by whom, since and until when.

    ``all_projects=true``: every project's (cloud admins only).
    """

    def get(self, request, tenant_id):
        everywhere = param_bool(request.query_params.get("all_projects"))
        if everywhere and not is_cloud_admin(request.user):
            raise Forbidden("Only a cloud admin may list the locked stacks of all projects.")
        stacks = locked_now(None if everywhere else [self.project])
        root = request.build_absolute_uri("/v1/")
        return Response({"locked_stacks": [locked_stack_body(s, root) for s in stacks]})


class StackLockPreviewApi(StackApiBase):
    """``GET .../locks/preview?level=all``: what a lock at that level would touch (a dry run)."""

    def get(self, request, tenant_id, stack_name, stack_id):
        stack = self.stack(stack_name, stack_id)
        return Response({"preview": lock_preview(stack, level=request.query_params.get("level"))})


class StackLockVerifyApi(StackApiBase):
    """``POST .../locks/verify``: check now that each physical lock is in place (and heal)."""

    def post(self, request, tenant_id, stack_name, stack_id):
        findings = stack_action(self.stack(stack_name, stack_id), "verify_lock",
                                user=request.user)
        return Response({"findings": findings})


class FleetActionApi(StackApiBase):
    """``POST /v1/{project}/fleet/actions``: lock or unlock several stacks, one answer each.

    ``{"lock": {"level": "stacks", "duration": "2h"}, "reason": "...", "stacks": [names or
    ids], "tag": "web", "name": "web-*"}`` (or ``{"unlock": null, ...}``).
    """

    def post(self, request, tenant_id):
        body = self.body()
        selection = {k: body.get(k) for k in ("tag", "name") if k in body}
        stacks = body.get("stacks", [])
        actions = {k: v for k, v in body.items()
                   if k not in ("reason", "stacks", "tag", "name")}
        if not actions:
            raise InvalidActionRequest("No action specified")
        if len(actions) > 1:
            raise InvalidActionRequest("Multiple actions specified")
        (action, arg), = actions.items()
        if action not in FLEET_ACTIONS:
            raise BadRequest(f"A fleet action is lock or unlock, not {str(action)[:40]}.")
        results = fleet_action(self.project, action, user=request.user, stacks=stacks,
                               **selection, **action_args(action, arg, body))
        return Response({"results": results})


def lock_window_body(window):
    return {"id": window.id, "starts_at": heat_time(window.starts_at),
            "ends_at": heat_time(window.ends_at), "level": window.level,
            "reason": window.reason or None, "user": window.username or None,
            "state": window.state, "note": window.note or None}


WINDOW_FIELDS = ("starts_at", "ends_at", "level", "reason")


class StackLockWindowListApi(StackApiBase):
    """``.../lock_windows``: list the stack's scheduled windows, or schedule one."""

    def get(self, request, tenant_id, stack_name, stack_id):
        windows = lock_schedule.window_list(self.stack(stack_name, stack_id))
        return Response({"lock_windows": [lock_window_body(w) for w in windows]})

    def post(self, request, tenant_id, stack_name, stack_id):
        body = self.body()
        unknown = set(body) - set(WINDOW_FIELDS)
        if unknown:
            raise BadRequest(f"Unknown window field {sorted(unknown)[0]}.")
        window = lock_schedule.window_create(self.stack(stack_name, stack_id),
                                             user=request.user, **body)
        return Response({"lock_window": lock_window_body(window)}, status=201)


class StackLockWindowApi(StackApiBase):
    """``.../lock_windows/{id}``: show, change (PATCH) or cancel (DELETE) one window."""

    def _window(self, stack_name, stack_id, window_id):
        return lock_schedule.window_get(self.stack(stack_name, stack_id), window_id)

    def get(self, request, tenant_id, stack_name, stack_id, window_id):
        return Response({"lock_window": lock_window_body(
            self._window(stack_name, stack_id, window_id))})

    def patch(self, request, tenant_id, stack_name, stack_id, window_id):
        window = lock_schedule.window_update(self._window(stack_name, stack_id, window_id),
                                             user=request.user, **self.body())
        return Response({"lock_window": lock_window_body(window)})

    def delete(self, request, tenant_id, stack_name, stack_id, window_id):
        window = lock_schedule.window_cancel(self._window(stack_name, stack_id, window_id),
                                             user=request.user)
        return Response({"lock_window": lock_window_body(window)})
