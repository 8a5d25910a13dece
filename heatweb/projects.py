"""The project a signed-in user is looking at, kept in the session, and their role in it."""
from heatweb.exceptions import Forbidden
from heatweb.models import Role
from heatweb.tokens import project_role, projects_for_user, require_role

SESSION_KEY = "heatweb_project_id"


class NoProject(Forbidden):
    message_format = ("You are not a member of any project yet. Ask an admin for a "
                      "membership (manage.py issue_token USER --project NAME).")


def current_project(request):
    """``(project, role, projects)``: the session's project, else the user's first one."""
    projects = list(projects_for_user(request.user))
    if not projects:
        raise NoProject()
    wanted = request.session.get(SESSION_KEY)
    project = next((p for p in projects if p.pk == wanted), projects[0])
    request.session[SESSION_KEY] = project.pk
    return project, Role(project_role(request.user, project.pk)), projects


def project_select(request, project_id):
    """Make ``project_id`` the session's project (Forbidden unless the user may see it)."""
    if not any(p.pk == project_id for p in projects_for_user(request.user)):
        raise Forbidden()
    request.session[SESSION_KEY] = project_id


def require_member(role):
    require_role(role, Role.MEMBER)
