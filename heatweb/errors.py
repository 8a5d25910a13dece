"""Heat's JSON error body for every API failure.

``{"code", "title", "explanation", "error": {"type", "message", "traceback"}}``
"""
import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django_fsm import TransitionNotAllowed
from rest_framework import exceptions as drf
from rest_framework.response import Response

from heatweb.exceptions import HeatError

log = logging.getLogger(__name__)

TITLES = {
    400: ("Bad Request", "The server could not comply with the request since it is "
                         "either malformed or otherwise incorrect."),
    401: ("Unauthorized", "This server could not verify that you are authorized to "
                          "access the document you requested."),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    406: ("Not Acceptable", "The resource could not be represented as requested."),
    408: ("Request Timeout", "The server timed out waiting for the request."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this server."),
    415: ("Unsupported Media Type", "The request media type is not supported."),
    500: ("Internal Server Error", "The server has either erred or is incapable of "
                                   "performing the requested operation."),
}

DRF_TYPES = {
    drf.ParseError: "InvalidContentType",
    drf.NotAuthenticated: "NotAuthenticated",
    drf.AuthenticationFailed: "NotAuthenticated",
    drf.PermissionDenied: "Forbidden",
    drf.NotFound: "EntityNotFound",
    drf.MethodNotAllowed: "HTTPMethodNotAllowed",
    drf.UnsupportedMediaType: "InvalidContentType",
    drf.ValidationError: "BadRequest",
}


def error_body(status, error_type, message):
    title, explanation = TITLES.get(status, TITLES[500])
    return {"code": status, "title": title, "explanation": explanation,
            "error": {"type": error_type, "message": message, "traceback": None}}


def describe(exc):
    """(status, type, message) for any exception; unknown ones are a bare 500."""
    if isinstance(exc, HeatError):
        return exc.status, exc.error_type, exc.message
    if isinstance(exc, TransitionNotAllowed):
        return 409, "InvalidStackState", str(exc)
    if isinstance(exc, Http404):
        return 404, "EntityNotFound", str(exc) or "Not found"
    if isinstance(exc, PermissionDenied):
        return 403, "Forbidden", str(exc) or TITLES[403][1]
    if isinstance(exc, drf.APIException):
        error_type = next((name for cls, name in DRF_TYPES.items() if isinstance(exc, cls)),
                          type(exc).__name__)
        status = exc.status_code
        if isinstance(exc, drf.NotAuthenticated):
            status = 401
        return status, error_type, _flatten(exc.detail)
    log.exception("Unhandled API error", exc_info=exc)
    return 500, "InternalServerError", "An unexpected error occurred."


def _flatten(detail):
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(v) for v in detail)
    return str(detail)


def api_exception_handler(exc, context):
    status, error_type, message = describe(exc)
    headers = {}
    if status == 401:
        # The authenticator's own challenge (heatweb's tokens or Keystone's).
        view, request = context.get("view"), context.get("request")
        challenge = view.get_authenticate_header(request) if view and request else None
        headers["WWW-Authenticate"] = challenge or 'Token realm="heatweb"'
    return Response(error_body(status, error_type, message), status=status, headers=headers)


def json_error_response(status, error_type, message):
    return JsonResponse(error_body(status, error_type, message), status=status)


def handler404(request, exception=None):
    return json_error_response(404, "EntityNotFound", f"The resource {request.path} could not be found.")


def handler500(request):
    return json_error_response(500, "InternalServerError", "An unexpected error occurred.")


def handler400(request, exception=None):
    # Django's own 400s (an untrusted Host header, a bad upload) in Heat's format;
    # the message never echoes the request.
    return json_error_response(400, "BadRequest", "The request could not be accepted.")
