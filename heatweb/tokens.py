"""Issuing, checking and revoking API tokens, and project access rules."""
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

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


def token_user(raw):
    """The active user a raw token belongs to, or NotAuthenticated."""
    token = (ApiToken.objects.select_related("user")
             .filter(key_hash=_hash(raw or ""), revoked_at__isnull=True).first())
    if token is None or (token.expires_at and token.expires_at <= timezone.now()):
        raise NotAuthenticated("The token is invalid, expired or revoked.")
    if not token.user.is_active:
        raise NotAuthenticated("The token's user is disabled.")
    return token.user


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


def project_role(user, project_id):
    """The user's role in the project (cloud admins are admin everywhere).

    Raises Forbidden, without saying whether the project exists, otherwise.
    A Keystone token's role is its own (``heatweb.keystone``).
    """
    identity = _keystone_identity(user)
    if identity is not None:
        return identity_project_role(identity, project_id)
    membership = (Membership.objects.filter(user=user, project_id=project_id)
                  .values_list("role", flat=True).first())
    if is_cloud_admin(user) and Project.objects.filter(pk=project_id).exists():
        return Role.ADMIN
    if membership is None:
        raise Forbidden()
    return Role(membership)


def require_role(role, needed):
    if ROLE_RANK[Role(role)] < ROLE_RANK[Role(needed)]:
        raise Forbidden(f"The {role} role may not perform this action.")


def projects_for_user(user):
    if is_cloud_admin(user):
        return Project.objects.order_by("name")
    return Project.objects.filter(memberships__user=user).order_by("name")
