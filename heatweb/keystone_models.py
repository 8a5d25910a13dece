"""What Keystone mode stores: which Django user stands for which Keystone
user, and the trust each stack's engine acts through."""
from django.conf import settings
from django.db import models


class KeystoneAccount(models.Model):
    """Links a Keystone user (by its id, which never changes) to the Django
    user that owns its stacks, memberships and page sessions."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="keystone_account")
    keystone_user_id = models.CharField(max_length=64, unique=True)
    domain_name = models.CharField(max_length=255, blank=True)

    def __str__(self):
        return f"{self.user} (Keystone {self.keystone_user_id})"


class StackTrust(models.Model):
    """The Keystone trust from the stack's creator to heatweb's service user.

    Created with the stack (only a root stack has one; nested stacks use their
    root's), deleted with it, so the engine can act in the creator's project
    after the creator's token has expired, as Heat does.
    """

    stack = models.OneToOneField("stacks.Stack", on_delete=models.CASCADE,
                                 related_name="keystone_trust")
    trust_id = models.CharField(max_length=64, unique=True)
    trustor_user_id = models.CharField(max_length=64)
    project_id = models.CharField(max_length=64)
    roles = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"trust {self.trust_id} for stack {self.stack_id}"
