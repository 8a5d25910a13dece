"""``openstack stack lock history | list | verify``: who locked what, and is it still locked."""
import logging

from osc_lib.command import command

from heatweb_osc.common import request, rows, stack_path

HISTORY_COLUMNS = ["time", "kind", "user", "level", "allow", "reason", "expires_at",
                   "held_seconds", "detail"]
LOCKED_COLUMNS = ["stack_name", "id", "project", "stack_status", "lock_level", "lock_allow",
                  "locked_by",
                  "locked_at", "lock_expires_at", "lock_reason"]
FINDING_COLUMNS = ["stack_name", "resource_name", "object", "healed", "detail"]


class LockHistory(command.Lister):
    """A stack's lock history: locks, relocks, unlocks, expiries, refusals (newest first)."""

    log = logging.getLogger(__name__ + ".LockHistory")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Stack (name or ID)")
        parser.add_argument("--limit", metavar="<limit>", type=int,
                            help="At most this many records")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        query = f"?limit={parsed_args.limit}" if parsed_args.limit else ""
        records = request(client, "get",
                          f"/stacks/{stack_path(client, parsed_args.stack)}/locks{query}")
        return rows(records["locks"], HISTORY_COLUMNS)


class LockList(command.Lister):
    """The stacks locked now: by whom, since and until when, why."""

    log = logging.getLogger(__name__ + ".LockList")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--all-projects", action="store_true",
                            help="Every project's locked stacks (cloud admins)")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        query = "?all_projects=true" if parsed_args.all_projects else ""
        return rows(request(client, "get", f"/locks{query}")["locked_stacks"], LOCKED_COLUMNS)


class LockVerify(command.Lister):
    """Check now that a locked stack's physical locks are in place (and put back removed ones)."""

    log = logging.getLogger(__name__ + ".LockVerify")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Stack (name or ID)")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        found = request(client, "post",
                        f"/stacks/{stack_path(client, parsed_args.stack)}/locks/verify")
        return rows(found["findings"], FINDING_COLUMNS)
