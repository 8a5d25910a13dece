"""The stack list page: its rows (polled while in progress), each row's action menu, and
the bulk actions on the checked rows.

Every action goes through the door (``stacks.services.actions.stack_action``),
one stack at a time, so each answers for itself: the API's refusal, shown as a
message.
"""
import uuid
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from heatweb.exceptions import HeatError
from heatweb.models import ROLE_RANK, Role
from heatweb.pages import page
from heatweb.projects import require_member
from stacks import selectors
from stacks.pages import selectors as page_selectors
from stacks.pages.actions import STARTED, action_states, form_args
from stacks.services.fleet import LIST_ACTIONS, fleet_action

STACKS_PER_PAGE = 20


def _live_rows_src(stacks):
    ids = [("id", str(s.pk)) for s in stacks if s.status == "IN_PROGRESS"]
    return reverse("pages:stack-rows") + "?" + urlencode(ids) if ids else ""


@page
def stack_list(request):
    name = request.GET.get("name", "").strip()
    status = request.GET.get("status", "")
    stacks = Paginator(page_selectors.stack_page_list(request.project, name=name, status=status),
                       STACKS_PER_PAGE).get_page(request.GET.get("page"))
    query = urlencode({k: v for k, v in (("name", name), ("status", status)) if v})
    return render(request, "stacks/list.html", {
        "page": stacks, "rows": _rows_with_actions(request, stacks),
        "list_url": request.get_full_path(),
        "name": name, "status": status, "query": query,
        "statuses": list(page_selectors.STATUS_FILTERS), "live_src": _live_rows_src(stacks)})


def _rows_with_actions(request, stacks):
    """``[(stack, {action: ActionState})]``: what each row's menu offers, or why not
    (None: no menu, for a deleted stack or a reader, who may only look)."""
    if ROLE_RANK[request.role] < ROLE_RANK[Role.MEMBER]:
        return [(stack, None) for stack in stacks]
    return [(stack, None if stack.deleted_at else
             action_states(stack, request.role, request.user)) for stack in stacks]


@page
def stack_rows(request):
    """The list's rows for ``?id=...``: what the list page polls while rows are in progress."""
    ids = []
    for value in request.GET.getlist("id")[:STACKS_PER_PAGE]:
        try:
            ids.append(uuid.UUID(value))
        except ValueError:
            continue
    stacks = page_selectors.stack_rows(request.project, ids)
    return render(request, "stacks/_rows.html",
                  {"rows": _rows_with_actions(request, stacks),
                   "live_src": request.get_full_path(),
                   "list_url": reverse("pages:stack-list")})


@require_POST
@page
def fleet_action_page(request):
    """The list's bulk actions on the checked stacks: lock, unlock, suspend, resume, check,
    delete (after a confirmation page). Each stack is refused or started on its own by the
    door, with one message per stack."""
    action = request.POST.get("action", "")
    chosen = request.POST.getlist("stack")[:settings.HEATWEB["MAX_FLEET_STACKS"]]
    back = list_return_url(request)
    if action not in LIST_ACTIONS:
        messages.error(request, "Choose what to do with the selected stacks.")
        return redirect(back)
    if not chosen:
        messages.error(request, "Select at least one stack.")
        return redirect(back)
    if action == "delete" and request.POST.get("confirm") != "yes":
        return _fleet_delete_confirm(request, chosen, back)
    args = form_args(action, request.POST) if action == "lock" else {}
    try:
        require_member(request.role)
        results = fleet_action(request.project, action, user=request.user, stacks=chosen,
                               **args)
    except HeatError as error:
        messages.error(request, error.message)
        return redirect(back)
    for result in results:
        if result["outcome"] == "started":
            messages.success(request, f"{STARTED[action]} of stack {result['stack_name']} "
                                      f"started.")
        else:
            messages.error(request, f"{result['stack_name'] or result['asked']}: "
                                    f"{result['error']['message']}")
    return redirect(back)


def _fleet_delete_confirm(request, chosen, back):
    """The checked stacks, each with whether the door would delete it now."""
    rows = []
    for asked in chosen:
        try:
            stack = selectors.stack_get(request.project, asked)
        except HeatError as error:
            rows.append((asked, None, error.message))
            continue
        state = action_states(stack, request.role, request.user)["delete"]
        rows.append((asked, stack, "" if state.enabled else state.reason))
    return render(request, "stacks/fleet_delete.html", {
        "rows": rows, "deletable": sum(1 for _, stack, why in rows if stack and not why),
        "back": back})


def list_return_url(request):
    """Where a list action goes back to: the list page as it was (filters, page), else the list."""
    target = request.POST.get("next", "")
    home = reverse("pages:stack-list")
    if target.startswith(home) and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return home
