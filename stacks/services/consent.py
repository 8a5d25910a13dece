"""The owner's consent an imported stack waits for before heatweb acts on the cloud for it.

A stack imported from Heat (``stacks.services.heat_import``) keeps its
objects but not the Keystone trust Heat acted through: heatweb cannot read
it back. Its root stack has a ``StackConsent`` row with ``given_at`` empty;
while it is, the door (``stacks.services.actions``) lets through only what
needs no credentials on the cloud: reads, a lock or unlock at level
``stacks``, an abandon, a deployment's report. ``stack_reauthorise`` (the
``reauthorise`` action: ``POST .../actions {"reauthorise": null}``, or
``manage.py stack_reauthorise``) gives the consent: it makes heatweb's own
trust from the caller's token in Keystone mode, as a create does.
"""
from django.db import transaction
from django.utils import timezone

from heatweb.exceptions import Forbidden
from heatweb.keystone import stack_trust_create
from heatweb.models import Role
from heatweb.tokens import project_access
from stacks.models import Stack, StackConsent

# What the door lets through without consent: none of these acts on the cloud for the
# stack. A lock too, at level ``stacks`` (see ``consent_refusal``).
WITHOUT_CONSENT = ("unlock", "abandon", "reauthorise", "deployment_update",
                   "deployment_delete")


class ConsentNeeded(Forbidden):
    """The stack was imported and its owner has not re-authorised it yet."""


def root_of(stack):
    while stack.parent_id:
        stack = stack.parent
    return stack


def tree_ids(root):
    """Ids of ``root`` and every stack nested under it."""
    ids, level = [root.pk], [root.pk]
    while level:
        level = list(Stack.objects.filter(parent_id__in=level).values_list("pk", flat=True))
        ids += level
    return ids


def consent_pending(stack):
    """The root's ``StackConsent`` still waiting for consent, or None."""
    return StackConsent.objects.filter(stack_id=root_of(stack).pk, given_at__isnull=True) \
        .select_related("stack__project").first()


def consent_refusal(stack, action, /, *, level=None, cascade_from=None, resume=False, **_):
    """``ConsentNeeded`` when ``action`` would act on the cloud for a stack waiting for its
    owner's consent, else None. A lock is let through at level ``stacks`` only. The door's
    arguments come as keywords (a deployment's own ``action`` among them)."""
    if action in WITHOUT_CONSENT:
        return None
    if action == "lock" and (resume or cascade_from is not None or level == "stacks"):
        return None
    if not stack.needs_consent:  # no query for every other stack
        return None
    pending = consent_pending(stack)
    if pending is None:
        return None
    root = pending.stack
    source = pending.source.capitalize()
    what = "lock at level all" if action == "lock" else action.replace("_", " ")
    return ConsentNeeded(
        f"Stack {stack.name} was imported from {source} and waits for its owner's consent "
        f"before heatweb acts on the cloud for it ({what} refused): heatweb cannot use the "
        f"trust {source} acted through. Its owner or an admin of project "
        f"{root.project.name} re-authorises it with POST .../stacks/{root.name}/{root.pk}/"
        f'actions {{"reauthorise": null}} (or manage.py stack_reauthorise {root.pk} --user '
        f"NAME); until then it can be read, and locked or unlocked at level stacks.")


def may_consent(stack, user):
    """Whether ``user`` may re-authorise ``stack``: its owner, or an admin of its project."""
    if user is None:
        return True  # the operator's command, run on the server
    if stack.user_id and stack.user_id == user.pk:
        return True
    try:
        role, _ = project_access(user, stack.project_id)
    except Forbidden:
        return False
    return role == Role.ADMIN


def stack_reauthorise(stack, *, user=None, as_user=None):
    """Give an imported stack its owner's consent (nothing to do for any other stack).

    ``user``: who asks (None: the operator's command); ``as_user``: whom the
    engine acts as from now on (default ``user``, else the stack's owner). In
    Keystone mode a trust is made from the caller's token, as a create does.
    """
    root = root_of(stack)
    if not may_consent(root, user):
        raise Forbidden(f"Only the owner of stack {root.name} or an admin of its project "
                        f"can re-authorise it.")
    owner = as_user or user or root.user
    with transaction.atomic():
        consent = StackConsent.objects.select_for_update().filter(stack_id=root.pk).first()
        if consent is None or not consent.needed:
            return root
        if owner is not None and owner.pk != root.user_id:
            Stack.objects.filter(pk=root.pk).update(user=owner)
            root.user = owner
        if user is not None:
            stack_trust_create(root, user=user)
        Stack.objects.filter(pk__in=tree_ids(root)).update(needs_consent=False)
        root.needs_consent = False
        consent.given_at = timezone.now()
        consent.given_by = user or as_user
        consent.save(update_fields=["given_at", "given_by"])
    return root


__all__ = ["ConsentNeeded", "WITHOUT_CONSENT", "consent_pending", "consent_refusal",
           "may_consent", "stack_reauthorise"]
