"""Request budget and page security headers."""
from django.conf import settings

from heatweb.errors import json_error_response


class RequestBudgetMiddleware:
    """A body announced larger than ``MAX_REQUEST_BYTES`` is a 413 before any of it is read.

    A NUL in the path or the query string is a 400 here too: PostgreSQL cannot
    compare text holding one, so it must never reach a lookup.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.HEATWEB["MAX_REQUEST_BYTES"]
        announced = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(announced)
        except ValueError:
            return json_error_response(400, "BadRequest", "Invalid Content-Length header.")
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            return json_error_response(400, "InvalidInput",
                                       "Invalid text in the URL: it holds a NUL character.")
        if length > limit:
            return json_error_response(
                413, "RequestLimitExceeded",
                f"Request limit exceeded: the request body ({length} bytes) is larger than "
                f"{limit} bytes.")
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Pages (HTML answers) get the ``CONTENT_SECURITY_POLICY`` header of the settings."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and response.get("Content-Type", "").startswith("text/html"):
            response.setdefault("Content-Security-Policy", policy)
        return response
