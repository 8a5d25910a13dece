"""What heatweb's ``openstack stack ...`` commands share: the stack's path, clean errors."""
from heatclient import exc as heat_exc
from osc_lib import exceptions


def error_message(error):
    """Heat's error body as one line: ``Type: message (HTTP code)``."""
    details = getattr(error, "error", None)
    if isinstance(details, dict) and isinstance(details.get("error"), dict):
        inner = details["error"]
        return f"{inner.get('type')}: {inner.get('message')} (HTTP {error.code})"
    return str(error)


def stack_path(client, name_or_id):
    """``name/id`` of a stack given by name or id; a missing one is a CommandError."""
    try:
        stack = client.stacks.get(name_or_id)
    except heat_exc.HTTPNotFound:
        raise exceptions.CommandError(f"Stack not found: {name_or_id}") from None
    return f"{stack.stack_name}/{stack.id}"


def request(client, method, url, **kwargs):
    """The JSON answer of heatweb's API at ``url`` (under the project's endpoint); an error
    answer is a CommandError with Heat's message."""
    try:
        resp = getattr(client.http_client, method)(url, **kwargs)
    except heat_exc.HTTPException as error:
        raise exceptions.CommandError(error_message(error)) from None
    return resp.json() if resp.content else {}


def rows(items, columns):
    """``(columns, rows)`` for a Lister from a list of JSON objects."""
    return columns, [tuple(item.get(c) for c in columns) for item in items]


def window_options(parser):
    """--expires-in / --expires-at: when the engine unlocks the stack by itself."""
    window = parser.add_mutually_exclusive_group()
    window.add_argument("--expires-in", metavar="<duration>",
                        help='The engine unlocks the stack after this long ("30m", "2h", "1d")')
    window.add_argument("--expires-at", metavar="<time>",
                        help="The engine unlocks the stack then (ISO 8601, UTC if no zone)")


LOCK_MODES = ("signal", "suspend_resume", "check")


def mode_options(parser, *, interrupt=True):
    """--allow (repeatable): what stays permitted while the lock holds; --interrupt: do not
    wait for an action in progress."""
    parser.add_argument("--allow", metavar="<mode>", action="append", choices=LOCK_MODES,
                        help="Keep permitted while locked (repeat): signal (scaling alarms, "
                             "wait conditions), suspend_resume, check; default: nothing")
    if interrupt:
        parser.add_argument("--interrupt", choices=("cancel", "rollback"),
                            help="On a stack with an action in progress: cancel it where it "
                                 "is, or roll it back, and lock when it has settled")


def lock_body(parsed_args):
    """The lock action's body: {"lock": {level, duration, expires_at, allow, interrupt} or
    null, "reason"}."""
    options = {k: v for k, v in (("level", parsed_args.level),
                                 ("duration", parsed_args.expires_in),
                                 ("expires_at", parsed_args.expires_at),
                                 ("allow", getattr(parsed_args, "allow", None)),
                                 ("interrupt", getattr(parsed_args, "interrupt", None))) if v}
    body = {"lock": options or None}
    if parsed_args.reason:
        body["reason"] = parsed_args.reason
    return body
