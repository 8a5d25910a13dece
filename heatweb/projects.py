"""The project a signed-in user is looking at, kept in the session, and their role in it."""
from heatweb.exceptions import Forbidden
from heatweb.models import Membership, Role
from heatweb.tokens import project_choices, projects_for_user, require_role

SESSION_KEY = "heatweb_project_id"


class NoProject(Forbidden):
    message_format = ("You are not a member of any project yet. Ask an admin for a "
                      "membership (manage.py issue_token USER --project NAME).")


def current_project(request):
    """``(project, role, projects)``: the session's project, else the first one the user
    is a member of (a cloud admin, who may look at every project, starts in their own
    rather than in whichever project sorts first), else the first one they may see.

    The session is written only when its project changes: a page view that
    only reads must not turn into a session write.
    """
    choices = project_choices(request.user)
    if not choices:
        raise NoProject()
    wanted = request.session.get(SESSION_KEY)
    project, role = next(((p, r) for p, r in choices if p.pk == wanted), (None, None))
    if project is None:
        own = set(Membership.objects.filter(user=request.user)
                  .values_list("project_id", flat=True))
        project, role = next(((p, r) for p, r in choices if p.pk in own), choices[0])
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
