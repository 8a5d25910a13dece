"""``openstack stack fleet lock | unlock``: several stacks at once, each answering for itself.

Stacks are named, or chosen by ``--tag`` or ``--name`` (a pattern such as
``web-*``); the command fails (exit 1) when any stack refused.
"""
import logging

from osc_lib import exceptions
from osc_lib.command import command

from heatweb_osc.common import lock_body, mode_options, request, window_options

COLUMNS = ["asked", "stack_name", "id", "outcome", "status", "error"]


class _FleetAction(command.Lister):
    action = ""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", nargs="*", help="Stacks (names or IDs)")
        parser.add_argument("--tag", metavar="<tag>", help="Every top-level stack with this tag")
        parser.add_argument("--name", metavar="<pattern>",
                            help="Every top-level stack whose name matches (web-*)")
        return parser

    def body(self, parsed_args):
        return {self.action: None}

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        body = {**self.body(parsed_args), "stacks": list(parsed_args.stack)}
        for key in ("tag", "name"):
            if getattr(parsed_args, key):
                body[key] = getattr(parsed_args, key)
        results = request(client, "post", "/fleet/actions", data=body)["results"]
        rows = [tuple(((r.get("error") or {}).get("message", "") if c == "error" else r.get(c))
                      for c in COLUMNS) for r in results]
        refused = [r for r in results if r["outcome"] != "started"]
        if refused:
            # the table first, then the failure (osc prints the message, exits 1)
            self.produce_output(parsed_args, COLUMNS, rows)
            raise exceptions.CommandError(f"{len(refused)} of {len(results)} stacks refused "
                                          f"to {self.action}")
        return COLUMNS, rows


class FleetLock(_FleetAction):
    """Lock several stacks at once."""

    log = logging.getLogger(__name__ + ".FleetLock")
    action = "lock"

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--level", choices=("stacks", "all"), help="The locks' level")
        parser.add_argument("--reason", metavar="<reason>", help="Why the stacks are locked")
        window_options(parser)
        mode_options(parser)
        return parser

    def body(self, parsed_args):
        return lock_body(parsed_args)


class FleetUnlock(_FleetAction):
    """Unlock several stacks at once."""

    log = logging.getLogger(__name__ + ".FleetUnlock")
    action = "unlock"
