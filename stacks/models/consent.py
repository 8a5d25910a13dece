"""A stack waiting for its owner's consent before heatweb acts on the cloud for it."""
from django.conf import settings
from django.db import models

from stacks.models.stack import Stack


class StackConsent(models.Model):
    """The consent the engine acts through for a root stack heatweb did not create.

    A stack imported from Heat (``manage.py import_heat``) acted on the cloud
    through a Keystone trust heatweb cannot read back. Until its owner (or an
    admin of its project) re-authorises it (``stacks.services.consent``), the
    stack can be read, locked and unlocked at level ``stacks``, and nothing that
    would act on the cloud for it starts. ``given_at`` set: consent given.
    """

    stack = models.OneToOneField(Stack, on_delete=models.CASCADE, related_name="consent")
    source = models.CharField(max_length=32, default="heat")
    # Who owned the stack in its source (Heat's ``username`` and trustor user id).
    source_username = models.CharField(max_length=255, blank=True, default="")
    source_user_id = models.CharField(max_length=64, blank=True, default="")
    imported_at = models.DateTimeField(auto_now_add=True)
    given_at = models.DateTimeField(null=True, blank=True)
    given_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")

    @property
    def needed(self):
        return self.given_at is None

    def __str__(self):
        return f"consent for stack {self.stack_id} ({'needed' if self.needed else 'given'})"
