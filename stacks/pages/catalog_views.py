"""The pages of what a template may use: resource types (with their schema) and template
versions (with their functions), as the API's ``/resource_types`` and
``/template_versions`` answer them (``stacks.catalog``)."""
from django.shortcuts import render

from heatweb.pages import page
from stacks import catalog


@page
def resource_type_list(request):
    query = (request.GET.get("name") or "").strip()
    types = [(name, catalog.resource_type_description(name).split("\n", 1)[0])
             for name in catalog.resource_types(query or None)]
    return render(request, "stacks/resource_types.html", {"types": types, "name": query})


@page
def resource_type_detail(request, type_name):
    schema = catalog.resource_type_schema(type_name)
    return render(request, "stacks/resource_type.html", {
        "schema": schema, "properties": sorted((schema.get("properties") or {}).items()),
        "attributes": sorted((schema.get("attributes") or {}).items())})


@page
def template_version_list(request):
    return render(request, "stacks/template_versions.html",
                  {"versions": catalog.template_versions()})


@page
def template_version_detail(request, version):
    functions = catalog.template_functions(version)
    names = {f["functions"] for f in functions}
    conditions = [f for f in catalog.template_functions(version, with_conditions=True)
                  if f["functions"] not in names]
    return render(request, "stacks/template_version.html", {
        "version": version, "functions": functions, "conditions": conditions})
