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

from heatweb_osc.common import error_message, lock_body, mode_options, request, stack_path, \
    window_options

COLUMNS = ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"]
PREVIEW_COLUMNS = ["What", "Stack Name", "Resource", "Object or type", "Detail"]


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
            raise exceptions.CommandError(error_message(error)) from None
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
        window_options(parser)
        mode_options(parser)
        parser.add_argument("--dry-run", action="store_true",
                            help="Show what the lock would touch, and lock nothing")
        return parser

    def body(self, parsed_args):
        return lock_body(parsed_args)

    def take_action(self, parsed_args):
        if not parsed_args.dry_run:
            return super().take_action(parsed_args)
        client = self.app.client_manager.heatweb
        level = parsed_args.level or "all"
        rows = []
        for name in parsed_args.stack:
            preview = request(client, "get", f"/stacks/{stack_path(client, name)}/locks/"
                                             f"preview?level={level}")["preview"]
            rows += [("stack", s["stack_name"], "", "", "locked now" if s["locked"] else
                      ("nested" if s["nested"] else "")) for s in preview["stacks"]]
            rows += [("object", o["stack_name"], o["resource_name"], o["object"],
                      ("protected now" + (" (by this lock)" if o["held_by_lock"] else ""))
                      if o["protected_now"] else "") for o in preview.get("objects", [])]
            rows += [("cannot lock", c["stack_name"], c["resource_name"], c["resource_type"],
                      c["why"]) for c in preview.get("cannot_lock", [])]
        self.app.stderr.write("Nothing was locked (dry run).\n")
        return PREVIEW_COLUMNS, rows


class UnlockStack(_StackLockBase):
    """Unlock a stack, restoring each resource's protection as it was before."""

    log = logging.getLogger(__name__ + ".UnlockStack")
    action_name = "UNLOCK"

    def body(self, parsed_args):
        return {"unlock": None}
