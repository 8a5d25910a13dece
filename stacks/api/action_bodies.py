"""The body of an action request, ``{action: argument}``: the one action it names, and the
door's arguments for it (``POST .../actions`` of a stack, and of a fleet of stacks)."""
from heatweb.exceptions import BadRequest, InvalidActionRequest

LOCK_OPTIONS = {"level", "reason", "expires_at", "duration", "allow", "interrupt"}


def body_action(body, *, besides=("reason",)):
    """``(action, argument)`` of the one key of ``body`` not in ``besides``; Heat's
    InvalidActionRequest when there is none, or more than one."""
    actions = {k: v for k, v in body.items() if k not in besides}
    if not actions:
        raise InvalidActionRequest("No action specified")
    if len(actions) > 1:
        raise InvalidActionRequest("Multiple actions specified")
    (action, arg), = actions.items()
    return action, arg


def action_args(action, arg, body):
    """The door's arguments for one ``{action: arg}`` of a request body."""
    if action != "lock":
        return {}
    arg = arg if arg is not None else {}
    if not isinstance(arg, dict):
        raise BadRequest('The lock action takes an object: {"lock": {"level": "all"}}.')
    unknown = set(arg) - LOCK_OPTIONS
    if unknown:
        raise BadRequest(f"Unknown lock option {sorted(unknown)[0]}.")
    return {"level": arg.get("level"), "reason": arg.get("reason", body.get("reason", "")),
            "expires_at": arg.get("expires_at"), "duration": arg.get("duration"),
            "allow": arg.get("allow"), "interrupt": arg.get("interrupt")}
