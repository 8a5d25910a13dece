"""Request budget, page security headers, and the page middleware the API goes past."""
from collections import Counter
from urllib.parse import parse_qsl

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware

from heatweb.errors import json_error_response


class RequestBudgetMiddleware:
    """A body announced larger than ``MAX_REQUEST_BYTES`` is a 413 before any of it is read.

    A NUL in the path or the query string is a 400 here too: PostgreSQL cannot
    compare text holding one, so it must never reach a lookup. So is a query
    string over its budgets (``query_string_error``).
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
        query_error = query_string_error(request.META.get("QUERY_STRING", ""))
        if query_error:
            return json_error_response(400, "RequestLimitExceeded", query_error)
        if length > limit:
            return json_error_response(
                413, "RequestLimitExceeded",
                f"Request limit exceeded: the request body ({length} bytes) is larger than "
                f"{limit} bytes.")
        return self.get_response(request)


def query_string_error(query):
    """Why ``query`` is over the budgets, or None: more than ``MAX_QUERY_PARAMS``
    parameters (counted as Django counts them, before anything parses them), or one
    parameter with more than ``MAX_FILTER_VALUES`` values (repeated, or comma-separated
    as in ``tags=a,b``)."""
    if not query:
        return None
    most = settings.HEATWEB["MAX_QUERY_PARAMS"]
    if query.count("&") + 1 > most:
        return (f"Request limit exceeded: the query string has {query.count('&') + 1} "
                f"parameters, more than {most}.")
    values = Counter()
    for key, value in parse_qsl(query, keep_blank_values=True):
        values[key] += value.count(",") + 1 if value else 0
    key, count = max(values.items(), key=lambda item: item[1], default=("", 0))
    most = settings.HEATWEB["MAX_FILTER_VALUES"]
    if count > most:
        return (f"Request limit exceeded: the query parameter {key[:40]!r} has {count} "
                f"values, more than {most}.")
    return None


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


# The API's paths (Heat's ``/v1/{tenant}/...`` and the CFN API's ``/v1/``): a token's
# requests, answered by DRF views, which never read a session, Django's signed-in user
# or messages.
API_PREFIX = "/v1/"


class _PagesOnly:
    """A page middleware that the API's requests go straight past.

    Sessions, the signed-in user and messages are the pages'; on an API
    request they only set themselves up (a session store, a lazy user, a
    message storage with its cookie signer: ~10% of a stack show's
    instructions, docs/benchmarks.md) and change nothing in the answer.
    """

    def __call__(self, request):
        if request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        return super().__call__(request)


class PageSessionMiddleware(_PagesOnly, SessionMiddleware):
    pass


class PageAuthenticationMiddleware(_PagesOnly, AuthenticationMiddleware):
    pass


class PageMessageMiddleware(_PagesOnly, MessageMiddleware):
    pass
