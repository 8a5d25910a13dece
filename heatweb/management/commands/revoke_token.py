"""``manage.py revoke_token TOKEN|PREFIX``: revoke an API token.

Tokens are URL-safe base64 and may start with ``-``; such a token is taken
as the token, not as an option (``--token=VALUE`` and ``-- VALUE`` work too).
"""
import re

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from heatweb.models import ApiToken
from heatweb.tokens import token_revoke

PREFIX_LENGTH = ApiToken._meta.get_field("prefix").max_length


class Command(BaseCommand):
    help = ("Revoke an API token: give the token itself, or its first "
            f"{PREFIX_LENGTH} characters (the prefix the admin shows) when that names one "
            "token that is not revoked yet.")

    def add_arguments(self, parser):
        parser.add_argument("token", nargs="?", help="the raw token, or its prefix")
        parser.add_argument("--token", dest="token_option", metavar="TOKEN",
                            help="the same, for a token that starts with '-'")

    def run_from_argv(self, argv):
        parser = self.create_parser(argv[0], argv[1])
        options = {s for action in parser._actions for s in action.option_strings}
        fixed, rest = list(argv[:2]), list(argv[2:])
        while rest:
            arg = rest.pop(0)
            if arg == "--":
                fixed += [arg, *rest]
                break
            if (arg.startswith("-") and arg not in options
                    and not re.fullmatch(r"-v[0-3]|--[a-z-]+=.*", arg)):
                arg = "--token=" + arg
            fixed.append(arg)
        return super().run_from_argv(fixed)

    def handle(self, *args, **opts):
        given = (opts["token_option"] or opts["token"] or "").strip()
        if not given:
            raise CommandError("Give the token (or its prefix) to revoke.")
        if token_revoke(given):
            self.stdout.write("revoked")
            return
        if len(given) != PREFIX_LENGTH:
            raise CommandError("No such token.")
        matches = list(ApiToken.objects.filter(prefix=given, revoked_at__isnull=True)
                       .values_list("pk", flat=True)[:2])
        if not matches:
            raise CommandError("No such token (or it is revoked already).")
        if len(matches) > 1:
            raise CommandError("That prefix names several tokens; give the whole token.")
        ApiToken.objects.filter(pk=matches[0]).update(revoked_at=timezone.now())
        self.stdout.write("revoked")
