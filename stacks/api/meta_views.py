"""Validate, template versions, resource types and build info."""
from rest_framework.response import Response

from heatweb.api import TenantAPIView, param_bool
from heatweb.exceptions import EntityNotFound, UserParameterMissing
from stacks.hot import SUPPORTED_VERSIONS
from stacks.hot.parameters import TYPES
from stacks.hot.versions import functions_of
from stacks.resources import registry
from stacks.resources.unavailable import refuse_unavailable, type_available
from stacks.services.validation import template_validate

VERSION = "heatweb-1.0"
FUNCTIONS = {
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "str_replace": "A function for performing string substitutions.",
    "str_replace_strict": "A function for performing string substitutions.",
    "str_replace_vstrict": "A function for performing string substitutions.",
    "list_join": "A function for joining strings.",
    "map_merge": "A function for merging maps.",
    "str_split": "A function for splitting strings.",
    "repeat": "A function for iterating over a list of items.",
    "digest": "A function for performing digest operations.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "map_replace": "A function for performing substitutions on maps.",
    "yaql": "A function for executing a yaql expression.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "filter": "A function for filtering out values from lists.",
    "make_url": "A function for performing substitutions on maps.",
    "list_concat": "A function for extending lists.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
    "equals": "A function for comparing whether two values are equal.",
    "not": "A function acts as a NOT operator.",
    "and": "A function acts as an AND operator.",
    "or": "A function acts as an OR operator.",
    "Ref": "A function for resolving parameters or resource references.",
    "Fn::GetAZs": "A function for retrieving the availability zones.",
    "Fn::Select": "A function for selecting an item from a list or map.",
    "Fn::Join": "A function for joining strings.",
    "Fn::Split": "A function for splitting delimited strings into a list.",
    "Fn::Replace": "A function for performing string substitutions.",
    "Fn::Base64": "A placeholder function for converting to base64.",
    "Fn::MemberListToMap": "A function to convert lists with enumerated keys and values "
                           "to mapping.",
    "Fn::ResourceFacade": "A function for retrieving data in a parent provider template.",
    "Fn::FindInMap": "A function for resolving keys in the template mappings.",
    "Fn::GetAtt": "A function for resolving resource attributes.",
    "Fn::If": "A function to return corresponding value based on condition evaluation.",
    "Fn::Equals": "A function for comparing whether two values are equal.",
    "Fn::Not": "A function that acts as a NOT operator on a condition.",
    "Fn::And": "A function that acts as an AND operator on conditions.",
    "Fn::Or": "A function that acts as an OR operator on conditions.",
}


class ValidateApi(TenantAPIView):
    write_role = "reader"

    def post(self, request, tenant_id):
        params = request.query_params
        return Response(template_validate(
            self.body(), project=self.project, user=request.user,
            show_nested=param_bool(params.get("show_nested")),
            ignore_errors=params.get("ignore_errors")))


class TemplateVersionListApi(TenantAPIView):
    def get(self, request, tenant_id):
        return Response({"template_versions": SUPPORTED_VERSIONS})


class TemplateFunctionListApi(TenantAPIView):
    def get(self, request, tenant_id, template_version):
        known = {v["version"] for v in SUPPORTED_VERSIONS}
        known |= {a for v in SUPPORTED_VERSIONS for a in v.get("aliases", [])}
        if template_version not in known:
            raise EntityNotFound(entity="Template version", name=template_version)
        table = functions_of(template_version)
        names = set(table.functions)
        if request.query_params.get("with_condition_func") in ("true", "True", "1"):
            names |= table.conditions
        return Response({"template_functions": [
            {"functions": name, "description": FUNCTIONS.get(name, "")}
            for name in sorted(names)]})


class ResourceTypeListApi(TenantAPIView):
    def get(self, request, tenant_id):
        names = [n for n in registry.list_types() if type_available(n)]
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
        refuse_unavailable(type_name)
        if not registry.has_type(type_name):
            raise EntityNotFound(entity="Resource Type", name=type_name)
        return Response(registry.get_plugin(type_name).schema_doc())


class ResourceTypeTemplateApi(TenantAPIView):
    def get(self, request, tenant_id, type_name):
        refuse_unavailable(type_name)
        if not registry.has_type(type_name):
            raise EntityNotFound(entity="Resource Type", name=type_name)
        doc = registry.get_plugin(type_name).schema_doc()
        props = doc.get("properties", {})
        if request.query_params.get("template_type") == "cfn":
            return Response(_cfn_type_template(type_name, doc))
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


def _cfn_type_template(type_name, doc):
    """The type's initial template in CloudFormation's format (``template_type=cfn``)."""
    name = type_name.split("::")[-1]
    props = doc.get("properties", {})
    return {
        "HeatTemplateFormatVersion": "2012-12-12",
        "Description": f"Initial template of {name}",
        "Parameters": {n: {"Type": TYPES[_param_type(p.get("type"))],
                           "Description": p.get("description", "")}
                       for n, p in props.items()},
        "Resources": {name: {"Type": type_name, "Properties": {n: {"Ref": n} for n in props}}},
        "Outputs": {n: {"Description": a.get("description", ""),
                        "Value": {"Fn::GetAtt": [name, n]}}
                    for n, a in doc.get("attributes", {}).items()},
    }


def _param_type(prop_type):
    return {"integer": "number", "number": "number", "boolean": "boolean",
            "list": "comma_delimited_list", "map": "json"}.get((prop_type or "").lower(), "string")


class BuildInfoApi(TenantAPIView):
    def get(self, request, tenant_id):
        return Response({"api": {"revision": VERSION}, "engine": {"revision": VERSION}})


__all__ = ["UserParameterMissing"]
