"""Validate, template versions, resource types and build info."""
from rest_framework.response import Response

from heatweb.api import TenantAPIView
from heatweb.exceptions import EntityNotFound, UserParameterMissing
from stacks.hot import SUPPORTED_VERSIONS
from stacks.resources import registry
from stacks.services.validation import template_validate

VERSION = "heatweb-1.0"
FUNCTIONS = {
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "str_replace": "A function for performing string substitutions.",
    "list_join": "A function for joining strings.",
    "map_merge": "A function for merging maps.",
    "str_split": "A function for splitting strings.",
    "repeat": "A function for iterating over a list of items.",
    "map_replace": "A function for performing substitutions on maps.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "equals": "A function for comparing whether two values are equal.",
    "not": "A function acts as a NOT operator.",
    "and": "A function acts as an AND operator.",
    "or": "A function acts as an OR operator.",
}


class ValidateApi(TenantAPIView):
    write_role = "reader"

    def post(self, request, tenant_id):
        return Response(template_validate(self.body(), project=self.project))


class TemplateVersionListApi(TenantAPIView):
    def get(self, request, tenant_id):
        return Response({"template_versions": SUPPORTED_VERSIONS})


class TemplateFunctionListApi(TenantAPIView):
    def get(self, request, tenant_id, template_version):
        known = {v["version"] for v in SUPPORTED_VERSIONS}
        known |= {a for v in SUPPORTED_VERSIONS for a in v.get("aliases", [])}
        if template_version not in known:
            raise EntityNotFound(entity="Template version", name=template_version)
        return Response({"template_functions": [
            {"functions": name, "description": text} for name, text in FUNCTIONS.items()]})


class ResourceTypeListApi(TenantAPIView):
    def get(self, request, tenant_id):
        names = registry.list_types()
        query = request.query_params.get("name")
        if query:
            names = [n for n in names if query in n]
        if request.query_params.get("with_description") in ("true", "True", "1"):
            return Response({"resource_types": [
                {"resource_type": n, "description": (registry.get_plugin(n).__doc__ or "").strip()}
                for n in names]})
        return Response({"resource_types": names})


class ResourceTypeApi(TenantAPIView):
    def get(self, request, tenant_id, type_name):
        if not registry.has_type(type_name):
            raise EntityNotFound(entity="Resource Type", name=type_name)
        return Response(registry.get_plugin(type_name).schema_doc())


class ResourceTypeTemplateApi(TenantAPIView):
    def get(self, request, tenant_id, type_name):
        if not registry.has_type(type_name):
            raise EntityNotFound(entity="Resource Type", name=type_name)
        doc = registry.get_plugin(type_name).schema_doc()
        props = doc.get("properties", {})
        return Response({
            "heat_template_version": "2016-10-14",
            "description": f"Initial template of {type_name}",
            "parameters": {n: {"type": _param_type(p.get("type")),
                               "description": p.get("description", "")}
                           for n, p in props.items()},
            "resources": {type_name.split("::")[-1]: {
                "type": type_name,
                "properties": {n: {"get_param": n} for n in props}}},
            "outputs": {n: {"description": a.get("description", ""),
                            "value": {"get_attr": [type_name.split("::")[-1], n]}}
                        for n, a in doc.get("attributes", {}).items()},
        })


def _param_type(prop_type):
    return {"integer": "number", "number": "number", "boolean": "boolean",
            "list": "comma_delimited_list", "map": "json"}.get((prop_type or "").lower(), "string")


class BuildInfoApi(TenantAPIView):
    def get(self, request, tenant_id):
        return Response({"api": {"revision": VERSION}, "engine": {"revision": VERSION}})


__all__ = ["UserParameterMissing"]
