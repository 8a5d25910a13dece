"""``openstack stack drift detect | show``: what changed behind a stack's back."""
import logging

from osc_lib.command import command

from heatweb_osc.common import request, stack_path

COLUMNS = ["resource_name", "resource_type", "physical_resource_id", "drift_status",
           "differences"]


def _rows(report):
    return COLUMNS, [tuple(_cell(r, c) for c in COLUMNS) for r in report["resources"]]


def _cell(resource, column):
    if column != "differences":
        return resource.get(column)
    return "; ".join(f"{d['property']}: expected {d['expected']!r}, actual {d['actual']!r}"
                     for d in resource.get("differences") or [])


class _DriftBase(command.Lister):
    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument("stack", metavar="<stack>", help="Stack (name or ID)")
        return parser


class DetectDrift(_DriftBase):
    """Compare each physical object of a stack with what its template set, and show it."""

    log = logging.getLogger(__name__ + ".DetectDrift")

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        path = stack_path(client, parsed_args.stack)
        request(client, "post", f"/stacks/{path}/actions", data={"detect_drift": None})
        return _rows(request(client, "get", f"/stacks/{path}/drift")["drift"])


class ShowDrift(_DriftBase):
    """Show a stack's last drift report."""

    log = logging.getLogger(__name__ + ".ShowDrift")

    def take_action(self, parsed_args):
        client = self.app.client_manager.heatweb
        path = stack_path(client, parsed_args.stack)
        return _rows(request(client, "get", f"/stacks/{path}/drift")["drift"])
