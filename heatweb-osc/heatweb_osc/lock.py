"""``openstack stack lock`` and ``openstack stack unlock``: heatweb's maintenance mode.

A locked stack refuses every action but unlock (and lock, to change the
level): ``--level stacks`` locks the stack and its nested stacks, ``all``
(heatweb's default) also locks each physical resource that supports it.
"""
import logging

from heatclient import exc as heat_exc
from heatclient.common import event_utils
from osc_lib import exceptions
from osc_lib import utils
from osc_lib.command import command

COLUMNS = ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"]


def _message(error):
    details = getattr(error, "error", None)
    if isinstance(details, dict) and isinstance(details.get("error"), dict):
        inner = details["error"]
        return f"{inner.get('type')}: {inner.get('message')} (HTTP {error.code})"
    return str(error)


class _StackLockBase(command.Lister):
    action_name = ""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", nargs="+",
                            help="Stack(s) to %s (name or ID)" % self.action_name.lower())
        parser.add_argument("--wait", action="store_true",
                            help="Wait for the %s to complete" % self.action_name.lower())
        return parser

    def body(self, parsed_args):
        raise NotImplementedError

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        rows = [self._act(client, name, parsed_args) for name in parsed_args.stack]
        return COLUMNS, rows

    def _act(self, client, name_or_id, parsed_args):
        try:
            stack = client.stacks.get(name_or_id)
            marker = None
            if parsed_args.wait:
                events = event_utils.get_events(client, stack_id=stack.id,
                                                event_args={"sort_dir": "desc"}, limit=1)
                marker = events[0].id if events else None
            client.http_client.post(f"/stacks/{stack.stack_name}/{stack.id}/actions",
                                    data=self.body(parsed_args))
            if parsed_args.wait:
                status, message = event_utils.poll_for_events(
                    client, stack.stack_name, action=self.action_name, marker=marker,
                    poll_period=1)
                if status == f"{self.action_name}_FAILED":
                    raise exceptions.CommandError(message)
            stack = client.stacks.get(stack.id)
        except heat_exc.HTTPNotFound:
            raise exceptions.CommandError(f"Stack not found: {name_or_id}") from None
        except heat_exc.HTTPException as error:
            raise exceptions.CommandError(_message(error)) from None
        return utils.get_dict_properties(stack.to_dict(), COLUMNS)


class LockStack(_StackLockBase):
    """Lock a stack (maintenance mode): every action but unlock is refused."""

    log = logging.getLogger(__name__ + ".LockStack")
    action_name = "LOCK"

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("--level", choices=("stacks", "all"),
                            help="stacks: the stack and its nested stacks; all (default): "
                                 "also lock each physical resource that supports it")
        parser.add_argument("--reason", metavar="<reason>", help="Why the stack is locked")
        window = parser.add_mutually_exclusive_group()
        window.add_argument("--expires-in", metavar="<duration>",
                            help='The engine unlocks the stack after this long ("30m", "2h")')
        window.add_argument("--expires-at", metavar="<time>",
                            help="The engine unlocks the stack then (ISO 8601)")
        return parser

    def body(self, parsed_args):
        options = {k: v for k, v in (("level", parsed_args.level),
                                     ("duration", parsed_args.expires_in),
                                     ("expires_at", parsed_args.expires_at)) if v}
        body = {"lock": options or None}
        if parsed_args.reason:
            body["reason"] = parsed_args.reason
        return body


class UnlockStack(_StackLockBase):
    """Unlock a stack, restoring each resource's protection as it was before."""

    log = logging.getLogger(__name__ + ".UnlockStack")
    action_name = "UNLOCK"

    def body(self, parsed_args):
        return {"unlock": None}
