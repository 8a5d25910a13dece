"""Projects (Heat's tenants), memberships with a role, and API tokens."""
import uuid

from django.conf import settings
from django.db import models


def _hex_id():
    return uuid.uuid4().hex


class Role(models.TextChoices):
    READER = "reader", "Reader (look only)"
    MEMBER = "member", "Member (all stack operations)"
    ADMIN = "admin", "Admin (cloud admin: every project)"


ROLE_RANK = {Role.READER: 1, Role.MEMBER: 2, Role.ADMIN: 3}


class Project(models.Model):
    """A tenant: owns stacks; its hex id is the ``{tenant_id}`` of API paths."""

    id = models.CharField(primary_key=True, max_length=32, default=_hex_id, editable=False)
    name = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="uniq_membership")]

    def __str__(self):
        return f"{self.user} in {self.project} as {self.role}"


class ApiToken(models.Model):
    """A bearer token (sent as X-Auth-Token); only its SHA-256 is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.prefix}… ({self.user})"


# Keystone mode's models live in their own module; importing them here is how
# Django finds them in the heatweb app.
from heatweb.keystone_models import KeystoneAccount, StackTrust  # noqa: E402,F401
