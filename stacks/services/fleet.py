"""Fleet actions: lock or unlock several stacks with one reason and one window; and, from
the stack list page, suspend, resume, check or delete the stacks checked there.

The stacks are named (names or ids) or matched by a filter (a tag, a name
pattern such as ``web-*``); each goes through the one door on its own, so
each answers for itself: a stack in progress or locked by a cloud admin is
refused alone and the others go on. A ``duration`` becomes one
``expires_at`` for the whole fleet, so every stack's window closes at the
same time.
"""
import fnmatch

from django.conf import settings

from heatweb.exceptions import BadRequest, HeatError
from stacks import selectors
from stacks.models import Stack
from stacks.services.actions import stack_action
from stacks.services.lock_windows import lock_window_end
from stacks.services.locking import check_lock_arguments

FLEET_ACTIONS = ("lock", "unlock")  # the API's ``fleet/actions``
# The stack list page's bulk actions: the fleet's, and what its rows' menus do one by one.
LIST_ACTIONS = FLEET_ACTIONS + ("suspend", "resume", "check", "delete")


def fleet_targets(project, *, stacks=(), tag=None, name=None):
    """``[(asked, stack or HeatError)]``: the named stacks, then those the filter matches."""
    limit = settings.HEATWEB["MAX_FLEET_STACKS"]
    if not isinstance(stacks, list) or not all(isinstance(s, str) for s in stacks):
        raise BadRequest("stacks must be a list of stack names or ids.")
    for value, what in ((tag, "tag"), (name, "name")):
        if value is not None and (not isinstance(value, str) or not value or len(value) > 255):
            raise BadRequest(f"The {what} filter must be a non-empty string.")
    if not stacks and tag is None and name is None:
        raise BadRequest("Name the stacks (stacks) or give a filter (tag, name).")
    targets, seen = [], set()
    for asked in stacks[:limit + 1]:
        try:
            stack = selectors.stack_get(project, asked)
        except HeatError as error:
            targets.append((asked, error))
            continue
        if stack.pk not in seen:
            seen.add(stack.pk)
            targets.append((asked, stack))
    if tag is not None or name is not None:
        qs = Stack.objects.select_related("locked_by").filter(
            project=project, deleted_at__isnull=True, parent__isnull=True).order_by("name")
        for stack in qs.iterator():
            if stack.pk in seen or (tag is not None and tag not in (stack.tags or [])) or \
                    (name is not None and not fnmatch.fnmatchcase(stack.name, name)):
                continue
            seen.add(stack.pk)
            targets.append((stack.name, stack))
            if len(targets) > limit:
                break
    if len(targets) > limit:
        raise BadRequest(f"A fleet action takes at most {limit} stacks.")
    return targets


def fleet_action(project, action, *, user, stacks=(), tag=None, name=None, **args):
    """Do ``action`` (one of ``LIST_ACTIONS``) to every target; one result per stack, in order.

    Each stack goes through the door on its own (``stack_action``), so a stack the
    door refuses (locked, in progress) is refused alone and the others go on.
    """
    if action not in LIST_ACTIONS:
        raise BadRequest(f"A fleet action is one of {', '.join(LIST_ACTIONS)}, "
                         f"not {str(action)[:40]}.")
    if action == "lock":
        check_lock_arguments(**args)
        ends = lock_window_end(expires_at=args.pop("expires_at", None),
                               duration=args.pop("duration", None))
        args["expires_at"] = ends.isoformat() if ends else None
    results = []
    for asked, target in fleet_targets(project, stacks=stacks, tag=tag, name=name):
        if isinstance(target, HeatError):
            results.append(_result(asked, None, target))
            continue
        try:
            stack_action(target, action, user=user, **args)
        except HeatError as error:
            results.append(_result(asked, target, error))
        else:
            results.append(_result(asked, target, None))
    return results


def _result(asked, stack, error):
    body = {"asked": asked, "id": str(stack.pk) if stack else None,
            "stack_name": stack.name if stack else None,
            "status": error.status if error else 200, "outcome": "refused" if error else "started"}
    if error is not None:
        body["error"] = {"type": error.error_type, "message": error.message}
    return body
