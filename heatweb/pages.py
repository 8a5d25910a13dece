"""The page decorator every server-rendered page uses (stacks, software)."""
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from heatweb.exceptions import HeatError
from heatweb.projects import current_project


def page(view):
    """Signed in, with the session's project and role on the request; errors as a page."""
    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            request.project, request.role, request.projects = current_project(request)
            return view(request, *args, **kwargs)
        except HeatError as error:
            return render(request, "error.html", {"error": error}, status=error.status)
    return wrapper
