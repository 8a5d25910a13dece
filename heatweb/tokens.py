"""Issuing, checking and revoking API tokens, and project access rules."""
import functools
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from heatweb import written_sql
from heatweb.exceptions import Forbidden, NotAuthenticated
from heatweb.keystone import identity_project_role
from heatweb.models import ROLE_RANK, ApiToken, Membership, Project, Role


def _hash(raw):
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def token_issue(*, username, project_name, role=Role.MEMBER, ttl_hours=None):
    """Create user, project and membership when missing; return (raw token, project)."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    project, _ = Project.objects.get_or_create(name=project_name)
    membership, created = Membership.objects.get_or_create(
        user=user, project=project, defaults={"role": role})
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    raw = _new_raw_token()
    ttl = settings.HEATWEB["TOKEN_TTL_HOURS"] if ttl_hours is None else ttl_hours
    ApiToken.objects.create(
        user=user, project=project, key_hash=_hash(raw), prefix=raw[:8],
        expires_at=timezone.now() + timedelta(hours=ttl) if ttl else None)
    return raw, project


def _new_raw_token():
    """A random token that never starts with "-", so command lines never read it as an option."""
    while True:
        raw = secrets.token_urlsafe(32)
        if not raw.startswith("-"):
            return raw


def token_user(raw, *, project_id=None):
    """The active user a raw token belongs to, or NotAuthenticated.

    Every API request asks this, so the query is written out rather than
    built by the ORM: building and compiling the same lookup cost ~20 times
    the statement itself (docs/benchmarks.md, bench_api). With ``project_id``
    (the tenant of the request's path) the same statement reads the user's
    memberships there and any admin membership, which ``project_access`` then
    takes for that project instead of reading them again.
    """
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    if project_id is None:
        rows = written_sql.fetch(_token_user_sql(), [_hash(raw or ""), now])
    else:
        rows = written_sql.fetch(_token_access_sql(), [
            project_id, Role.ADMIN.value, _hash(raw or ""), now])
    if not rows:
        raise NotAuthenticated("The token is invalid, expired or revoked.")
    width = len(written_sql.concrete_fields(get_user_model()))
    user = written_sql.instance(get_user_model(), "u", rows[0][:width])
    if not user.is_active:
        raise NotAuthenticated("The token's user is disabled.")
    if project_id is not None:
        user.token_memberships = (project_id, [
            (project, row[-1]) for row in rows
            if (project := written_sql.instance(Project, "p", row[width:-1])) is not None])
    return user


@functools.cache
def _token_user_sql():
    """A live token's user: by the token's hash, not revoked, not expired."""
    token, user = ApiToken._meta, get_user_model()._meta
    return (f'SELECT {written_sql.columns(get_user_model(), "u")} FROM "{token.db_table}" t '
            f'INNER JOIN "{user.db_table}" u ON u."{user.pk.column}" = t."user_id" '
            'WHERE t."key_hash" = %s AND t."revoked_at" IS NULL '
            'AND (t."expires_at" IS NULL OR t."expires_at" > %s)')


@functools.cache
def _token_access_sql():
    """A live token's user (as ``_token_user_sql``), a row for each of their memberships in
    one project or as admin (``_project_access_sql``'s), one with NULLs when none."""
    token, user = ApiToken._meta, get_user_model()._meta
    membership, project = Membership._meta, Project._meta
    return (f'SELECT {written_sql.columns(get_user_model(), "u")}, '
            f'{written_sql.columns(Project, "p")}, m."role" FROM "{token.db_table}" t '
            f'INNER JOIN "{user.db_table}" u ON u."{user.pk.column}" = t."user_id" '
            f'LEFT OUTER JOIN "{membership.db_table}" m ON m."user_id" = u."{user.pk.column}" '
            'AND (m."project_id" = %s OR m."role" = %s) '
            f'LEFT OUTER JOIN "{project.db_table}" p ON p."{project.pk.column}" = m."project_id" '
            'WHERE t."key_hash" = %s AND t."revoked_at" IS NULL '
            'AND (t."expires_at" IS NULL OR t."expires_at" > %s)')


def token_revoke(raw):
    return ApiToken.objects.filter(key_hash=_hash(raw)).update(revoked_at=timezone.now())


def _keystone_identity(user):
    """The project-scoped Keystone identity of an API request (Keystone mode), or None."""
    identity = getattr(user, "keystone", None)
    return identity if identity is not None and identity.project_id else None


def is_cloud_admin(user):
    identity = _keystone_identity(user)
    if identity is not None:
        return identity.is_admin
    return user.is_superuser or Membership.objects.filter(user=user, role=Role.ADMIN).exists()


def project_access(user, project_id):
    """``(role, project)``: the user's role in the project, and the project.

    Cloud admins are admin everywhere. Raises Forbidden, without saying
    whether the project exists, otherwise. One query for a member (their
    membership there and any admin membership, with the project); a cloud
    admin outside their own projects takes a second one. A Keystone token's
    role is its own (``heatweb.keystone``).
    """
    identity = _keystone_identity(user)
    if identity is not None:
        role = identity_project_role(identity, project_id)
        return role, Project.objects.get(pk=project_id)
    # The user's membership here and any admin membership, each as its project
    # with the membership's role (written out: see token_user), unless the
    # token's lookup read them already.
    read, rows = getattr(user, "token_memberships", (None, None))
    if read != project_id:
        rows = [(written_sql.instance(Project, "p", row[:-1]), row[-1])
                for row in written_sql.fetch(_project_access_sql(),
                                             [user.pk, project_id, Role.ADMIN.value])]
    here, here_role = next(((p, role) for p, role in rows if p.pk == project_id), (None, None))
    if user.is_superuser or any(role == Role.ADMIN for _, role in rows):
        project = here if here else Project.objects.filter(pk=project_id).first()
        if project is None:
            raise Forbidden()
        return Role.ADMIN, project
    if here is None:
        raise Forbidden()
    return Role(here_role), here


@functools.cache
def _project_access_sql():
    """The projects of a user's memberships in one project or as admin, with the role."""
    membership, project = Membership._meta, Project._meta
    return (f'SELECT {written_sql.columns(Project, "p")}, m."role" FROM "{membership.db_table}" m '
            f'INNER JOIN "{project.db_table}" p ON p."{project.pk.column}" = m."project_id" '
            'WHERE m."user_id" = %s AND (m."project_id" = %s OR m."role" = %s)')


def project_choices(user):
    """``[(project, role)]`` of the projects a signed-in person may look at, by name.

    A cloud admin sees every project, as admin; anyone else their
    memberships' projects with their roles (a Keystone sign-in's roles are
    synced into memberships). One query, two for a cloud admin.
    """
    memberships = list(Membership.objects.select_related("project").filter(user=user)
                       .order_by("project__name"))
    if user.is_superuser or any(m.role == Role.ADMIN for m in memberships):
        return [(project, Role.ADMIN) for project in Project.objects.order_by("name")]
    return [(m.project, Role(m.role)) for m in memberships]


def require_role(role, needed):
    if ROLE_RANK[Role(role)] < ROLE_RANK[Role(needed)]:
        raise Forbidden(f"The {role} role may not perform this action.")


def projects_for_user(user):
    if is_cloud_admin(user):
        return Project.objects.order_by("name")
    return Project.objects.filter(memberships__user=user).order_by("name")
