"""``manage.py stack_reauthorise STACK [--user NAME]``: an imported stack's owner consents
to heatweb acting on the cloud for it (``stacks.services.consent``)."""
import uuid

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from heatweb.exceptions import HeatError
from heatweb.keystone import enabled as keystone_enabled
from stacks.models import Stack
from stacks.services.consent import stack_reauthorise


class Command(BaseCommand):
    help = "Give an imported stack its owner's consent (outside Keystone mode)."

    def add_arguments(self, parser):
        parser.add_argument("stack", help="the stack's id (or name, when unique)")
        parser.add_argument("--user", help="whom the engine acts as from now on "
                                           "(default: the stack's owner)")

    def handle(self, *args, stack, user=None, **options):
        if keystone_enabled():
            raise CommandError("In Keystone mode heatweb's trust is made from the owner's "
                               "token: POST /v1/PROJECT/stacks/NAME/ID/actions "
                               "{\"reauthorise\": null} as the owner or a project admin.")
        found = Stack.objects.filter(deleted_at__isnull=True, parent__isnull=True)
        found = found.filter(pk=stack) if _is_uuid(stack) else found.filter(name=stack)
        if found.count() != 1:
            raise CommandError(f"no single live root stack {stack}")
        as_user = None
        if user:
            as_user = get_user_model().objects.filter(username=user).first()
            if as_user is None:
                raise CommandError(f"no user {user}")
        try:
            root = stack_reauthorise(found.get(), as_user=as_user)
        except HeatError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Stack {root.name} re-authorised"
                          f"{f' (acting as {root.user.username})' if root.user_id else ''}.")


def _is_uuid(value):
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
