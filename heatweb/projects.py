"""The project a signed-in user is looking at, kept in the session, and their role in it."""
from heatweb.exceptions import Forbidden
from heatweb.models import Role
from heatweb.tokens import project_choices, projects_for_user, require_role

SESSION_KEY = "heatweb_project_id"


class NoProject(Forbidden):
    message_format = ("You are not a member of any project yet. Ask an admin for a "
                      "membership (manage.py issue_token USER --project NAME).")


def current_project(request):
    """``(project, role, projects)``: the session's project, else the user's first one.

    The session is written only when its project changes: a page view that
    only reads must not turn into a session write.
    """
    choices = project_choices(request.user)
    if not choices:
        raise NoProject()
    wanted = request.session.get(SESSION_KEY)
    project, role = next(((p, r) for p, r in choices if p.pk == wanted), choices[0])
    if wanted != project.pk:
        request.session[SESSION_KEY] = project.pk
    return project, role, [p for p, _ in choices]


def project_select(request, project_id):
    """Make ``project_id`` the session's project (Forbidden unless the user may see it)."""
    if not any(p.pk == project_id for p in projects_for_user(request.user)):
        raise Forbidden()
    request.session[SESSION_KEY] = project_id


def require_member(role):
    require_role(role, Role.MEMBER)
