"""``openstack stack lock window create | list | set | cancel``: scheduled maintenance windows.

The engine locks the stack when a window starts and unlocks it when it ends.
"""
import logging

from osc_lib.command import command

from heatweb_osc.common import request, rows, stack_path

COLUMNS = ["id", "starts_at", "ends_at", "level", "reason", "user", "state", "note"]


def _window_fields(parser, *, required):
    parser.add_argument("--start", metavar="<time>", required=required,
                        help="When the engine locks the stack (ISO 8601, UTC if no zone)")
    parser.add_argument("--end", metavar="<time>", required=required,
                        help="When the engine unlocks it (ISO 8601, UTC if no zone)")
    parser.add_argument("--level", choices=("stacks", "all"), help="The lock's level")
    parser.add_argument("--reason", metavar="<reason>", help="Why the stack is locked")


def _body(parsed_args):
    return {k: v for k, v in (("starts_at", parsed_args.start), ("ends_at", parsed_args.end),
                              ("level", parsed_args.level), ("reason", parsed_args.reason))
            if v}


def _shown(window):
    return tuple(COLUMNS), tuple(window.get(c) for c in COLUMNS)


class _OneWindow(command.ShowOne):
    with_window_id = True

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Stack (name or ID)")
        if self.with_window_id:
            parser.add_argument("window", metavar="<window>", type=int, help="Window ID")
        return parser

    def path(self, client, parsed_args):
        path = f"/stacks/{stack_path(client, parsed_args.stack)}/lock_windows"
        return f"{path}/{parsed_args.window}" if self.with_window_id else path


class CreateLockWindow(_OneWindow):
    """Schedule a maintenance window: the stack is locked from --start to --end."""

    log = logging.getLogger(__name__ + ".CreateLockWindow")
    with_window_id = False

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _window_fields(parser, required=True)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        return _shown(request(client, "post", self.path(client, parsed_args),
                              data=_body(parsed_args))["lock_window"])


class SetLockWindow(_OneWindow):
    """Change a scheduled window (its times, level or reason)."""

    log = logging.getLogger(__name__ + ".SetLockWindow")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _window_fields(parser, required=False)
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        return _shown(request(client, "patch", self.path(client, parsed_args),
                              data=_body(parsed_args))["lock_window"])


class CancelLockWindow(_OneWindow):
    """Cancel a window (an active one unlocks the stack now)."""

    log = logging.getLogger(__name__ + ".CancelLockWindow")

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        return _shown(request(client, "delete", self.path(client, parsed_args))["lock_window"])


class ListLockWindows(command.Lister):
    """A stack's maintenance windows, scheduled, active and past."""

    log = logging.getLogger(__name__ + ".ListLockWindows")

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Stack (name or ID)")
        return parser

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        windows = request(client, "get",
                          f"/stacks/{stack_path(client, parsed_args.stack)}/lock_windows")
        return rows(windows["lock_windows"], COLUMNS)
