"""Base view for tenant-scoped API paths ``/v1/{tenant_id}/...``."""
import math
import re
import uuid

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.views import APIView

from heatweb.exceptions import BadRequest
from heatweb.models import Role
from heatweb.tokens import project_access, require_role

_TRUE = ("true", "1", "yes", "on")


class TenantAPIView(APIView):
    """Authenticates the token, then checks the path's tenant and the role.

    Readers may only look; members may act; cloud admins act everywhere.
    Another project's tenant id is a 403 that says nothing about it.
    """

    read_role = Role.READER
    write_role = Role.MEMBER

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        tenant_id = kwargs.get("tenant_id", "")
        self.role, self.project = project_access(request.user, tenant_id)
        needed = self.read_role if request.method in SAFE_METHODS else self.write_role
        require_role(self.role, needed)

    def body(self):
        data = self.request.data
        if not isinstance(data, dict):
            raise BadRequest("The request body must be a JSON object.")
        return data


def param_bool(value, default=False):
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in _TRUE


def param_int(value, name, *, default=None):
    if value in (None, ""):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"Invalid value {value!r} for {name}: must be an integer.") from None


def param_minutes(value, name="timeout_mins"):
    """A whole, positive number of minutes up to ``MAX_TIMEOUT_MINS`` (as Heat's integer).

    ``5``, ``"5"`` and ``5.0`` are five minutes; fractions, ``inf``, ``nan``
    and ``1e308`` are refused. (Tests shorten the minute itself:
    ``HEATWEB["MINUTE_SECONDS"]``.)
    """
    if value in (None, ""):
        return None
    limit = settings.HEATWEB["MAX_TIMEOUT_MINS"]
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        minutes = float(value)
    except (TypeError, ValueError, OverflowError):
        minutes = math.nan
    if not math.isfinite(minutes) or minutes != int(minutes) or not 0 < minutes <= limit:
        raise BadRequest(f"Invalid value {str(value)[:40]!r} for {name}: must be a whole, "
                         f"positive number of minutes, at most {limit}.")
    return int(minutes)


# \Z, not $: "$" also matches before a final newline, so "abc\n" would pass.
STACK_NAME_RE = re.compile(r"\A[a-zA-Z][a-zA-Z0-9_.-]{0,254}\Z")


def as_uuid(value):
    """``value`` as a UUID, or None when it is not one (a lookup then finds nothing)."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def page_limit(value, default=1000):
    """A request's ``limit``: an integer from 0 up to ``default`` (400 otherwise)."""
    if value in (None, ""):
        return default
    try:
        limit = int(value)
    except ValueError:
        raise BadRequest(f"Invalid limit {value!r}: must be an integer.") from None
    if limit < 0:
        raise BadRequest("Limit must not be negative.")
    return min(limit, default)
