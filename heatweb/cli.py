"""The ``heat`` command: heatweb's verbs, with python-heatclient as the HTTP library.

Reads the usual environment: Keystone credentials (``OS_AUTH_URL``,
``OS_USERNAME``, ``OS_PASSWORD``, ``OS_PROJECT_NAME``; heatweb found in the
catalog), or ``OS_AUTH_TOKEN`` (or ``OS_TOKEN``) and
``HEAT_URL`` (the v1 endpoint, ``http://host:8004/v1/<project_id>``), or
``OS_ORCHESTRATION_URL`` + ``OS_PROJECT_ID``. Adds what python-heatclient's
own shell lacks: ``action-lock [--level] [--reason] [--expires-in|--expires-at]
[--dry-run]``, ``action-unlock``, ``lock-history``, ``lock-list``, ``lock-verify``,
``fleet-lock``, ``fleet-unlock`` and ``lock-window-create|list|update|cancel``.
"""
import argparse
import json
import os
import sys

from heatclient import client as heat_client
from heatclient import exc
from heatclient.common import template_utils, utils
from keystoneauth1 import session
from keystoneauth1.identity import v3

STACK_FIELDS = ["id", "stack_name", "stack_status", "creation_time", "updated_time"]


def _client(args):
    token = args.os_auth_token or os.environ.get("OS_AUTH_TOKEN") or os.environ.get("OS_TOKEN")
    url = args.heat_url or os.environ.get("HEAT_URL")
    if not url and os.environ.get("OS_ORCHESTRATION_URL") and os.environ.get("OS_PROJECT_ID"):
        url = f"{os.environ['OS_ORCHESTRATION_URL'].rstrip('/')}/v1/{os.environ['OS_PROJECT_ID']}"
    if not token and os.environ.get("OS_AUTH_URL") and os.environ.get("OS_PASSWORD"):
        return _keystone_client(url)
    if not token or not url:
        raise SystemExit("heat: set OS_AUTH_URL, OS_USERNAME, OS_PASSWORD and OS_PROJECT_NAME "
                         "(Keystone), or OS_AUTH_TOKEN and HEAT_URL "
                         "(http://host:8004/v1/<project>), or pass --os-auth-token and "
                         "--heat-url")
    return heat_client.Client("1", endpoint=url, token=token)


def _keystone_client(url=None):
    """A client signed in to Keystone with OS_* variables; heatweb's endpoint
    comes from the catalog (the orchestration service) unless HEAT_URL is set."""
    env = os.environ
    auth = v3.Password(auth_url=env["OS_AUTH_URL"], username=env.get("OS_USERNAME"),
                       password=env["OS_PASSWORD"], project_name=env.get("OS_PROJECT_NAME"),
                       project_id=env.get("OS_PROJECT_ID"),
                       user_domain_name=env.get("OS_USER_DOMAIN_NAME", "Default"),
                       project_domain_name=env.get("OS_PROJECT_DOMAIN_NAME", "Default"))
    options = {"session": session.Session(auth=auth), "service_type": "orchestration",
               "interface": env.get("OS_INTERFACE", "public"),
               "region_name": env.get("OS_REGION_NAME")}
    if url:
        options["endpoint_override"] = url
    return heat_client.Client("1", **options)


def _template_args(args):
    files, template = template_utils.get_template_contents(template_file=args.template_file)
    env_files, env = template_utils.process_multiple_environments_and_files(
        env_paths=args.environment_file)
    return {"template": template, "files": {**files, **env_files}, "environment": env,
            "parameters": utils.format_parameters(args.parameters)}


def _stack_list(hc, args=None):
    utils.print_list(list(hc.stacks.list()), STACK_FIELDS, sortby_index=3)


def stack_create(hc, args):
    fields = _template_args(args)
    if args.timeout:
        fields["timeout_mins"] = args.timeout
    hc.stacks.create(stack_name=args.name, disable_rollback=not args.enable_rollback, **fields)
    _stack_list(hc)


def stack_update(hc, args):
    fields = _template_args(args) if args.template_file else {
        "parameters": utils.format_parameters(args.parameters)}
    hc.stacks.update(args.id, existing=args.existing, clear_parameters=args.clear_parameter,
                     **fields)
    _stack_list(hc)


def stack_show(hc, args):
    stack = hc.stacks.get(args.id)
    utils.print_dict(stack.to_dict(), formatters={
        k: utils.json_formatter for k in ("parameters", "outputs", "links", "tags")})


def stack_delete(hc, args):
    for ident in args.id:
        hc.stacks.delete(ident)
    _stack_list(hc)


def resource_list(hc, args):
    fields = ["resource_name", "physical_resource_id", "resource_type", "resource_status",
              "updated_time"]
    utils.print_list(list(hc.resources.list(args.id, nested_depth=args.nested_depth)), fields)


def event_list(hc, args):
    fields = ["resource_name", "id", "resource_status_reason", "resource_status", "event_time"]
    utils.print_list(list(hc.events.list(args.id, resource_name=args.resource)), fields,
                     sortby_index=None)


def output_show(hc, args):
    output = hc.stacks.output_show(args.id, args.output)["output"]
    value = output.get("output_value")
    print(value if isinstance(value, str) else json.dumps(value, indent=2))


def _action(name):
    def run(hc, args):
        getattr(hc.actions, name)(args.id)
        _stack_list(hc)
    return run


def action_lock(hc, args):
    if args.dry_run:
        return lock_preview(hc, args)
    options = {"level": args.level} if args.level else {}
    if args.expires_in:
        options["duration"] = args.expires_in
    if args.expires_at:
        options["expires_at"] = args.expires_at
    body = {"lock": options or None}
    if args.reason:
        body["reason"] = args.reason
    hc.http_client.post(f"/stacks/{_identity(hc, args.id)}/actions", data=body)
    _stack_list(hc)


def lock_preview(hc, args):
    level = args.level or "all"
    preview = hc.http_client.get(f"/stacks/{_identity(hc, args.id)}/locks/preview"
                                 f"?level={level}").json()["preview"]
    print(f"A lock at level {level} would lock these stacks:")
    utils.print_list([_Row(s) for s in preview["stacks"]],
                     ["stack_name", "id", "stack_status", "nested", "locked"], sortby_index=None)
    if level == "all":
        print("and these physical objects:")
        utils.print_list([_Row(o) for o in preview["objects"]],
                         ["stack_name", "resource_name", "object", "protected_now",
                          "held_by_lock"], sortby_index=None)
        print("It cannot lock:")
        utils.print_list([_Row(o) for o in preview["cannot_lock"]],
                         ["stack_name", "resource_name", "resource_type", "why"],
                         sortby_index=None)
    print("Nothing was locked (dry run).")


def lock_verify(hc, args):
    findings = hc.http_client.post(f"/stacks/{_identity(hc, args.id)}/locks/verify").json()
    utils.print_list([_Row(f) for f in findings["findings"]],
                     ["stack_name", "resource_name", "object", "healed", "detail"],
                     sortby_index=None)


def fleet_action(action):
    def run(hc, args):
        body = {action: None, "stacks": list(args.id)}
        if action == "lock":
            options = {k: v for k, v in (("level", args.level), ("duration", args.expires_in),
                                         ("expires_at", args.expires_at)) if v}
            body["lock"] = options or None
            if args.reason:
                body["reason"] = args.reason
        if args.tag:
            body["tag"] = args.tag
        if args.name:
            body["name"] = args.name
        results = hc.http_client.post("/fleet/actions", data=body).json()["results"]
        rows = [_Row({**r, "error": (r.get("error") or {}).get("message", "")}) for r in results]
        utils.print_list(rows, ["asked", "stack_name", "id", "outcome", "status", "error"],
                         sortby_index=None)
        return 1 if any(r["outcome"] != "started" for r in results) else 0
    return run


WINDOW_FIELDS = ["id", "starts_at", "ends_at", "level", "reason", "user", "state", "note"]


def lock_window_create(hc, args):
    body = {"starts_at": args.start, "ends_at": args.end}
    if args.level:
        body["level"] = args.level
    if args.reason:
        body["reason"] = args.reason
    window = hc.http_client.post(f"/stacks/{_identity(hc, args.id)}/lock_windows",
                                 data=body).json()["lock_window"]
    utils.print_dict(window)


def lock_window_list(hc, args):
    windows = hc.http_client.get(f"/stacks/{_identity(hc, args.id)}/lock_windows").json()
    utils.print_list([_Row(w) for w in windows["lock_windows"]], WINDOW_FIELDS,
                     sortby_index=None)


def lock_window_update(hc, args):
    body = {k: v for k, v in (("starts_at", args.start), ("ends_at", args.end),
                              ("level", args.level), ("reason", args.reason)) if v}
    window = hc.http_client.patch(f"/stacks/{_identity(hc, args.id)}/lock_windows/"
                                  f"{args.window}", data=body).json()["lock_window"]
    utils.print_dict(window)


def lock_window_cancel(hc, args):
    resp = hc.http_client.json_request(
        "DELETE", f"/stacks/{_identity(hc, args.id)}/lock_windows/{args.window}")[0]
    utils.print_dict(resp.json()["lock_window"])


def lock_history(hc, args):
    query = f"?limit={args.limit}" if args.limit else ""
    records = hc.http_client.get(f"/stacks/{_identity(hc, args.id)}/locks{query}").json()
    fields = ["time", "kind", "user", "level", "reason", "expires_at", "held_seconds", "detail"]
    utils.print_list([_Row(r) for r in records["locks"]], fields, sortby_index=None)


def lock_list(hc, args):
    query = "?all_projects=true" if args.all_projects else ""
    stacks = hc.http_client.get(f"/locks{query}").json()["locked_stacks"]
    fields = ["stack_name", "id", "project", "stack_status", "lock_level", "locked_by",
              "locked_at", "lock_expires_at", "lock_reason"]
    utils.print_list([_Row(s) for s in stacks], fields, sortby_index=None)


class _Row:
    """A JSON object as the attributes ``utils.print_list`` reads."""

    def __init__(self, values):
        self.__dict__.update(values)


def action_unlock(hc, args):
    hc.http_client.post(f"/stacks/{_identity(hc, args.id)}/actions", data={"unlock": None})
    _stack_list(hc)


def _identity(hc, name_or_id):
    stack = hc.stacks.get(name_or_id)
    return f"{stack.stack_name}/{stack.id}"


def _parser():
    parser = argparse.ArgumentParser(prog="heat", description=__doc__.splitlines()[0])
    parser.add_argument("--os-auth-token", default=None)
    parser.add_argument("--heat-url", default=None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="<command>")

    def add(name, func, help_text):
        cmd = sub.add_parser(name, help=help_text)
        cmd.set_defaults(func=func)
        return cmd

    def template_options(cmd):
        cmd.add_argument("-f", "--template-file")
        cmd.add_argument("-e", "--environment-file", action="append", default=[])
        cmd.add_argument("-P", "--parameters", action="append", default=[],
                         help="KEY1=VALUE1;KEY2=VALUE2...")

    add("stack-list", _stack_list, "List stacks.")
    cmd = add("stack-create", stack_create, "Create a stack.")
    template_options(cmd)
    cmd.add_argument("-t", "--timeout", type=int)
    cmd.add_argument("-r", "--enable-rollback", action="store_true")
    cmd.add_argument("name")
    cmd = add("stack-update", stack_update, "Update a stack.")
    template_options(cmd)
    cmd.add_argument("-x", "--existing", action="store_true", help="PATCH: keep parameters")
    cmd.add_argument("-c", "--clear-parameter", action="append", default=[])
    cmd.add_argument("id")
    add("stack-show", stack_show, "Describe a stack.").add_argument("id")
    cmd = add("stack-delete", stack_delete, "Delete stacks.")
    cmd.add_argument("-y", "--yes", action="store_true",
                     help="accepted as heat's stack-delete does; this command never asks")
    cmd.add_argument("id", nargs="+")
    cmd = add("resource-list", resource_list, "List a stack's resources.")
    cmd.add_argument("-n", "--nested-depth", type=int, default=0)
    cmd.add_argument("id")
    cmd = add("event-list", event_list, "List a stack's events.")
    cmd.add_argument("-r", "--resource")
    cmd.add_argument("id")
    cmd = add("output-show", output_show, "Show one output.")
    cmd.add_argument("id")
    cmd.add_argument("output")
    for verb in ("suspend", "resume", "check"):
        add(f"action-{verb}", _action(verb), f"{verb.capitalize()} a stack.").add_argument("id")
    cmd = add("action-lock", action_lock, "Lock a stack (maintenance mode).")
    cmd.add_argument("--level", choices=("stacks", "all"))
    cmd.add_argument("--reason")
    window = cmd.add_mutually_exclusive_group()
    window.add_argument("--expires-in", metavar="DURATION",
                        help='the engine unlocks the stack after this long: "30m", "2h", "1d"')
    window.add_argument("--expires-at", metavar="TIME",
                        help="the engine unlocks the stack then (ISO 8601, UTC if no zone)")
    cmd.add_argument("--dry-run", action="store_true",
                     help="show what the lock would touch, and lock nothing")
    cmd.add_argument("id")
    add("action-unlock", action_unlock, "Unlock a stack.").add_argument("id")
    add("lock-verify", lock_verify, "Check now that a locked stack's physical locks are in "
                                    "place (and put back those removed).").add_argument("id")
    for verb in ("lock", "unlock"):
        cmd = add(f"fleet-{verb}", fleet_action(verb),
                  f"{verb.capitalize()} several stacks at once; each answers for itself "
                  f"(exit 1 if any was refused).")
        cmd.add_argument("--tag", help="every top-level stack with this tag")
        cmd.add_argument("--name", help="every top-level stack whose name matches (web-*)")
        if verb == "lock":
            cmd.add_argument("--level", choices=("stacks", "all"))
            cmd.add_argument("--reason")
            window = cmd.add_mutually_exclusive_group()
            window.add_argument("--expires-in", metavar="DURATION")
            window.add_argument("--expires-at", metavar="TIME")
        cmd.add_argument("id", nargs="*", help="stack names or ids")
    cmd = add("lock-window-create", lock_window_create,
              "Schedule a maintenance window: the engine locks the stack at --start and "
              "unlocks it at --end.")
    cmd.add_argument("--start", required=True, help="ISO 8601 (UTC if no zone)")
    cmd.add_argument("--end", required=True, help="ISO 8601 (UTC if no zone)")
    cmd.add_argument("--level", choices=("stacks", "all"))
    cmd.add_argument("--reason")
    cmd.add_argument("id")
    add("lock-window-list", lock_window_list, "A stack's maintenance windows.").add_argument(
        "id")
    cmd = add("lock-window-update", lock_window_update, "Change a scheduled window.")
    cmd.add_argument("--start")
    cmd.add_argument("--end")
    cmd.add_argument("--level", choices=("stacks", "all"))
    cmd.add_argument("--reason")
    cmd.add_argument("id")
    cmd.add_argument("window", type=int)
    cmd = add("lock-window-cancel", lock_window_cancel,
              "Cancel a window (an active one unlocks the stack now).")
    cmd.add_argument("id")
    cmd.add_argument("window", type=int)
    cmd = add("lock-history", lock_history,
              "A stack's lock history: locks, relocks, unlocks, expiries, refusals.")
    cmd.add_argument("--limit", type=int)
    cmd.add_argument("id")
    cmd = add("lock-list", lock_list, "The stacks locked now, by whom, since and until when.")
    cmd.add_argument("--all-projects", action="store_true", help="every project (cloud admins)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.func(_client(args), args) or 0
    except exc.HTTPException as error:
        print(f"ERROR: {_message(error)}", file=sys.stderr)
        return 1


def _message(error):
    details = getattr(error, "error", None)
    if isinstance(details, dict) and isinstance(details.get("error"), dict):
        inner = details["error"]
        return f"{inner.get('type')}: {inner.get('message')} (HTTP {error.code})"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
