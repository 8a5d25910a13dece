"""Stack pages: parse the request, call a service or selector, render.

Every refusal is the service's ``HeatError`` (the same the API answers):
shown as a message, or as an error page when there is nothing to show.
"""
import json

import yaml
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from heatweb.exceptions import EntityNotFound, HeatError
from heatweb.pages import page
from heatweb.projects import project_select, require_member
from stacks import selectors
from stacks.pages import selectors as page_selectors
from stacks.pages.actions import STARTED, action_states, disabled_reasons, form_args
from stacks.pages.forms import LaunchOptionsForm, LaunchSourceForm, LockForm, \
    UpdateSourceForm, constraint_notes
from stacks.hidden import hidden_values, mask, masked_environment
from stacks.pages.parameter_forms import StackParametersForm, StackUpdateForm, \
    environment_from_text
from stacks.pages.hidden_carry import carry_scope
from stacks.pages.list_views import list_return_url
from stacks.definitions import definition_cache
from stacks.resources.locking_flags import PHYSICAL_LOCK_FLAG
from stacks.services import actions as door
from stacks.services import drift, lifecycle, lock_schedule, preview
from stacks.services.lock_healing import lock_preview
from stacks.services.validation import template_validate
from stacks.topology import layout

EVENTS_PER_PAGE = 25
TABS = ("overview", "resources", "events", "template", "topology", "locks")
LOCK_RECORDS_PER_PAGE = 25
MASK = "••••"


def _stack(request, stack_id):
    return selectors.stack_get(request.project, str(stack_id))


def _detail_url(stack, tab="overview"):
    if tab == "overview":
        return reverse("pages:stack-detail", args=[stack.pk])
    return reverse("pages:stack-tab", args=[stack.pk, tab])


@require_POST
@login_required
def project_switch(request):
    try:
        project_select(request, request.POST.get("project", ""))
    except HeatError as error:
        messages.error(request, error.message)
    return redirect("pages:stack-list")


def _overview(stack):
    context = {"drift": _drift(stack)}
    try:
        params = definition_cache.get(stack).params
        shown = params.shown()
        context["parameters"] = [(n, shown[n]) for n in params.schemas]
        context["outputs"] = selectors.stack_outputs(stack)
    except HeatError as error:
        context["definition_error"] = error.message
    return context


def _drift(stack):
    report = drift.last_drift_report(stack)
    return drift.drift_report_body(report) if report is not None else None


@require_POST
@page
def stack_drift_detect(request, stack_id):
    """The overview's "Detect drift" button (through the door, as the API's action)."""
    stack = _stack(request, stack_id)
    try:
        require_member(request.role)
        door.stack_action(stack, "detect_drift", user=request.user)
    except HeatError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Drift of stack {stack.name} detected.")
    return redirect(_detail_url(stack))


def _resources(stack):
    children = page_selectors.stack_children(stack)
    rows = selectors.stack_resources(stack)
    locks = page_selectors.physical_locks(stack, rows)
    return {"resources": [(r, children.get(r.name), locks.get(r.name)) for r in rows]}


def _events(stack, request):
    events = selectors.stack_events(stack, params={"sort_dir": "desc"})
    return {"events": Paginator(events, EVENTS_PER_PAGE).get_page(request.GET.get("page"))}


def _template(stack):
    raw = stack.raw_template
    env = {k: v for k, v in (raw.environment or {}).items() if v}
    # As submitted: the text a page or client sent, else the JSON object it sent.
    text = raw.source or json.dumps(raw.template, indent=2, ensure_ascii=False)
    return {"template_text": text,
            "environment_text": yaml.safe_dump(masked_environment(stack, env), sort_keys=False)
            if env else ""}


def _topology(stack):
    rows = selectors.stack_resources(stack)
    return {"graph": layout(rows, selectors.dependency_names(stack, rows))}


def _locks(stack, request):
    records = stack.lock_records.order_by("-id")
    return {"lock_records": Paginator(records, LOCK_RECORDS_PER_PAGE).get_page(
        request.GET.get("page")), "lock_windows": lock_schedule.window_list(stack)}


@require_POST
@page
def stack_lock_window_create(request, stack_id):
    """The Locks tab's "Schedule a window" form (times in UTC)."""
    stack = _stack(request, stack_id)
    try:
        require_member(request.role)
        window = lock_schedule.window_create(
            stack, user=request.user, starts_at=request.POST.get("starts_at", ""),
            ends_at=request.POST.get("ends_at", ""), level=request.POST.get("level") or None,
            reason=request.POST.get("reason", "").strip())
    except HeatError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Window {window.pk} of stack {stack.name} scheduled.")
    return redirect(_detail_url(stack, "locks"))


@require_POST
@page
def stack_lock_window_cancel(request, stack_id, window_id):
    stack = _stack(request, stack_id)
    try:
        require_member(request.role)
        lock_schedule.window_cancel(lock_schedule.window_get(stack, window_id),
                                    user=request.user)
    except HeatError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Window {window_id} of stack {stack.name} cancelled.")
    return redirect(_detail_url(stack, "locks"))


@page
def stack_lock_preview(request, stack_id):
    """The lock form's preview: what a lock at the chosen level touches, then confirm.

    The form posts here (a GET would put its CSRF token and reason in the URL,
    hence in the history and access logs); a bare GET previews the default level.
    """
    stack = _stack(request, stack_id)
    data = request.POST if request.method == "POST" else None
    form = LockForm(data, initial={"level": stack.lock_level or "all"})
    level = form.cleaned_data["level"] if form.is_valid() else "all"
    return render(request, "stacks/lock_preview.html", {
        "stack": stack, "preview": lock_preview(stack, level=level), "lock_form": form,
        "action": action_states(stack, request.role, request.user)["lock"]})


@page
def stack_detail(request, stack_id, tab="overview"):
    if tab not in TABS:
        raise EntityNotFound(entity="Page", name=tab)
    stack = _stack(request, stack_id)
    actions = action_states(stack, request.role, request.user)
    context = {"stack": stack, "tab": tab, "tabs": TABS, "actions": actions,
               "disabled_reasons": disabled_reasons(actions),
               # Changing a lock starts from the lock as it is (level and reason).
               "lock_form": LockForm(initial={
                   "level": stack.lock_level or "all",
                   "reason": stack.lock_reason if stack.is_locked else "",
                   "allow": stack.lock_allow if stack.is_locked else []}),
               "live": stack.status == "IN_PROGRESS", "parent": stack.parent,
               "hidden": hidden_values(stack)}
    context.update({"overview": lambda: _overview(stack),
                    "resources": lambda: _resources(stack),
                    "events": lambda: _events(stack, request),
                    "template": lambda: _template(stack),
                    "topology": lambda: _topology(stack),
                    "locks": lambda: _locks(stack, request)}[tab]())
    name = "stacks/_detail_live.html" if request.GET.get("live") else "stacks/detail.html"
    return render(request, name, context)


@page
def resource_detail(request, stack_id, resource_name):
    """One resource: its state, physical object as the cloud reports it, data and events."""
    stack = _stack(request, stack_id)
    res = selectors.stack_resource(stack, resource_name)
    rows = selectors.stack_resources(stack)
    deps = selectors.dependency_names(stack, rows)
    physical, held_before = page_selectors.physical_object(stack, res)
    events = selectors.stack_events(stack, params={"sort_dir": "desc", "limit": "50"},
                                    resource_name=res.name)
    hidden = hidden_values(stack)
    attributes = [(name, mask(value, hidden), signed) for name, value, signed in
                  page_selectors.attribute_rows(stack, res, user=request.user,
                                                role=request.role)]
    context = {"stack": stack, "res": res, "parent": stack.parent, "hidden": hidden,
               "properties": mask(res.properties_data or {}, hidden),
               "metadata": mask(selectors.resource_metadata_shown(res), hidden),
               "child": page_selectors.stack_children(stack).get(res.name),
               "depends_on": deps.get(res.name, []),
               "required_by": selectors.required_by(deps).get(res.name, []),
               "physical": physical, "held_before": held_before,
               "locked": bool((res.plugin_data or {}).get(PHYSICAL_LOCK_FLAG)),
               "events": events,
               "attributes": attributes,
               # what "Copy JSON" copies: masked values stay masked
               "attributes_copy": {k: MASK if masked else v for k, v, masked in attributes},
               "live": stack.status == "IN_PROGRESS" or res.status == "IN_PROGRESS"}
    name = "stacks/_resource_live.html" if request.GET.get("live") else "stacks/resource.html"
    return render(request, name, context)


@require_POST
@page
def stack_action(request, stack_id, action):
    stack = _stack(request, stack_id)
    try:
        require_member(request.role)
        door.stack_action(stack, action, user=request.user, **form_args(action, request.POST))
    except HeatError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"Stack {stack.name} re-authorised." if action == "reauthorise"
                         else f"{STARTED[action]} of stack {stack.name} started.")
        if action == "delete":
            return redirect(list_return_url(request))
    if request.POST.get("next"):  # a row's menu on the list page
        return redirect(list_return_url(request))
    return redirect(_detail_url(stack))


@page
def stack_delete_confirm(request, stack_id):
    stack = _stack(request, stack_id)
    return render(request, "stacks/delete.html",
                  {"stack": stack, "action": action_states(stack, request.role, request.user)["delete"]})


def _parameter_fields(form):
    return [(label, [(field, constraint_notes(form.schemas[field.name])) for field in fields])
            for label, fields in form.parameter_groups()]


def _refuse_source(source, error):
    """A template's refusal on step 1: the message, and where when the parser said."""
    source.add_error("template", error.message)
    return [f"line {line}, column {column}: {problem}"
            for line, column, problem in getattr(error, "positions", ())]


@page
def stack_launch(request):
    """Step 1: the template (and environment), validated as the API's validate does;
    step 2: its parameters and options, then a preview or the create."""
    if request.method != "POST":
        return render(request, "stacks/launch.html", {"source": LaunchSourceForm()})
    source = LaunchSourceForm(request.POST, request.FILES)
    step = request.POST.get("step")
    launching = step in ("launch", "preview")
    context = {"source": source}
    if step == "edit" or not source.is_valid():
        return render(request, "stacks/launch.html", context)
    data = source.cleaned_data
    try:
        env = environment_from_text(data["environment"])
        if not launching:
            template_validate({"template": data["template"], "environment": env},
                              project=request.project, user=request.user)
        params = StackParametersForm(request.POST if launching else None, prefix="p",
                                     template=data["template"],
                                     initial_values=env.get("parameters"),
                                     carry_scope=carry_scope(user=request.user))
    except HeatError as error:
        context["positions"] = _refuse_source(source, error)
        return render(request, "stacks/launch.html", context)
    options = LaunchOptionsForm(request.POST if launching else None, prefix="o")
    context.update(params=params, groups=_parameter_fields(params), options=options)
    if not launching or not params.is_valid() or not options.is_valid():
        return render(request, "stacks/launch.html", context)
    args = dict(project=request.project, name=data["stack_name"], template=data["template"],
                environment=data["environment"],
                parameters={n: v for n, v in params.cleaned_data.items() if n in params.schemas},
                timeout_mins=options.cleaned_data["timeout_mins"])
    try:
        if step == "preview":
            context["preview"] = preview.stack_preview(**args)
            context["preview"]["resources"] = list(  # nested stacks' resources: lists
                preview.flat_resources(context["preview"]["resources"]))
            return render(request, "stacks/launch.html", context)
        require_member(request.role)
        stack = lifecycle.stack_create(user=request.user,
                                       disable_rollback=not options.cleaned_data["rollback"],
                                       **args)
    except HeatError as error:
        messages.error(request, error.message)
        return render(request, "stacks/launch.html", context)
    messages.success(request, f"Launch of stack {stack.name} started.")
    return redirect("pages:stack-list")


def _show_current_immutable_values(form):
    """A refused immutable field shows its current value again (it is read-only)."""
    data = form.data.copy()
    for name, schema in form.schemas.items():
        if schema.immutable and name in form.errors:
            data[form.add_prefix(name)] = form.fields[name].initial
    form.data = data


def _update_forms(request, stack):
    """The update page's source form (new template, environment) and parameter form.

    ``step``: ``template`` loads a new template's parameters (unbound),
    ``preview`` and ``update`` check the posted values.
    """
    post = request.method == "POST"
    step = request.POST.get("step", "update") if post else ""
    source = UpdateSourceForm(request.POST if post else None)
    template = environment = None
    if post and source.is_valid():
        template, environment = source.cleaned_data["template"], \
            source.cleaned_data["environment"]
    bound = request.POST if post and step != "template" else None
    try:
        form = StackUpdateForm(bound, prefix="p", stack=stack, template=template,
                               environment=environment,
                               carry_scope=carry_scope(user=request.user, stack=stack))
        if environment is not None:
            environment_from_text(environment)
    except HeatError as error:
        source.add_error("environment" if template is None else "template", error.message)
        form = StackUpdateForm(None, prefix="p", stack=stack)
        step = "template"
    return source, form, step


@page
def stack_update(request, stack_id):
    """New template and environment (optional), the parameters, a preview, then update.

    Immutable parameters are read-only; a tampered one is refused at its field.
    """
    stack = _stack(request, stack_id)
    source, form, step = _update_forms(request, stack)
    context = {"stack": stack, "form": form, "source": source,
               "groups": _parameter_fields(form),
               "new_template": bool(source.is_bound and source.is_valid()
                                    and source.cleaned_data["template"]),
               "action": action_states(stack, request.role, request.user)["update"]}
    if request.method != "POST" or step == "template" or not source.is_valid():
        return render(request, "stacks/update.html", context)
    if not form.is_valid():
        _show_current_immutable_values(form)
        return render(request, "stacks/update.html", context)
    args = dict(template=source.cleaned_data["template"] or stack.raw_template.template,
                environment=source.cleaned_data["environment"], patch=True,
                parameters={n: v for n, v in form.cleaned_data.items() if n in form.schemas})
    if step == "preview":
        try:
            context["preview"] = preview.stack_update_preview(
                stack, files=None, clear_parameters=(), **args)
        except HeatError as error:
            messages.error(request, error.message)
        return render(request, "stacks/update.html", context)
    try:
        require_member(request.role)
        # PATCH keeps the stored environment (resource_registry, ...) and files; a
        # new template replaces the old, a given environment is laid over it.
        door.stack_action(stack, "update", user=request.user,
                          converge=source.cleaned_data["converge"], **args)
    except HeatError as error:
        messages.error(request, error.message)
        return render(request, "stacks/update.html", context)
    messages.success(request, f"Update of stack {stack.name} started.")
    return redirect(_detail_url(stack))
