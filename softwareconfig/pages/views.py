"""Software pages: parse the request, call a selector, render. Anyone in the project may look."""
import json

from django.core.paginator import Paginator
from django.shortcuts import render

from softwareconfig.components import COMPONENT_GROUP
from softwareconfig.pages import selectors
from softwareconfig.pages.highlight import highlighted
from heatweb.pages import page
from stacks.hidden import hidden_values, mask

SECTIONS = ("configs", "deployments")


def _text(value):
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _entries(config):
    """A component's entries, each with its config highlighted for its tool."""
    entries = []
    for entry in (config.config or {}).get("configs", []):
        language, html = highlighted(entry.get("tool"), entry.get("config"))
        entries.append({"actions": entry.get("actions") or [], "tool": entry.get("tool"),
                        "language": language, "html": html})
    return entries


SIGNED_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL")  # deploy_signal_id is a signed URL
SIGNAL_URL_INPUT = "deploy_signal_id"


def _signed_url_input(config):
    values = {i.get("name"): i.get("value") for i in config.inputs or []}
    return SIGNAL_URL_INPUT if values.get("deploy_signal_transport") in SIGNED_TRANSPORTS \
        else None


def _inputs(config, *, masked=None, hidden=frozenset()):
    """The config's inputs; the one named ``masked`` has its value hidden, and the
    deploying stack's hidden parameter values are masked in every value."""
    return [{"name": i.get("name"), "type": i.get("type", "String"),
             "default": _text(i.get("default")),
             "value": mask(_text(i.get("value")), hidden),
             "masked": i.get("name") == masked,
             "description": i.get("description", "")} for i in config.inputs or []]


def _hidden(project, config):
    stack = selectors.deploying_stack(project, config) if config.derived else None
    return hidden_values(stack) if stack is not None else frozenset()


DERIVED_PER_PAGE = 25


@page
def config_list(request):
    """Configs and components; below them the derived configs deployments made (issue 40),
    each with the config it was derived from and the stack resource that made it."""
    derived = Paginator(selectors.derived_config_page_list(request.project),
                        DERIVED_PER_PAGE).get_page(request.GET.get("derived_page"))
    return render(request, "softwareconfig/list.html", {
        "section": "configs", "sections": SECTIONS,
        "configs": selectors.config_page_list(request.project), "derived_page": derived,
        "derived": selectors.derived_config_rows(request.project, derived)})


@page
def config_detail(request, config_id):
    config, deployments = selectors.config_page(request.project, config_id)
    signed = _signed_url_input(config) if config.derived else None
    if signed and selectors.signed_urls_visible(request.project, config, user=request.user,
                                                role=request.role):
        signed = None
    context = {"config": config, "deployments": deployments,
               "inputs": _inputs(config, masked=signed, hidden=_hidden(request.project, config)),
               "options": [(k, _text(v)) for k, v in sorted((config.options or {}).items())]}
    if config.group == COMPONENT_GROUP and isinstance(config.config, dict):
        context["entries"] = _entries(config)
    else:
        context["language"], context["html"] = highlighted(config.group, config.config)
    return render(request, "softwareconfig/config.html", context)


@page
def deployment_list(request):
    server = request.GET.get("server", "").strip()
    return render(request, "softwareconfig/deployments.html", {
        "section": "deployments", "sections": SECTIONS, "server": server,
        "servers": selectors.deployments_by_server(request.project, server_id=server),
        "server_ids": selectors.server_ids(request.project)})
