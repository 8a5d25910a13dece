"""Validate, template versions, resource types and build info."""
from rest_framework.response import Response

from heatweb.api import TenantAPIView, param_bool
from heatweb.exceptions import EntityNotFound, UserParameterMissing
from stacks import catalog
from stacks.hot import SUPPORTED_VERSIONS
from stacks.hot.parameters import TYPES
from stacks.resources import registry
from stacks.resources.unavailable import refuse_unavailable
from stacks.services.validation import template_validate

VERSION = "heatweb-1.0"


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
        conditions = request.query_params.get("with_condition_func") in ("true", "True", "1")
        return Response({"template_functions": catalog.template_functions(
            template_version, with_conditions=conditions)})


class ResourceTypeListApi(TenantAPIView):
    def get(self, request, tenant_id):
        names = catalog.resource_types(request.query_params.get("name"))
        if request.query_params.get("with_description") in ("true", "True", "1"):
            return Response({"resource_types": [
                {"resource_type": n, "description": catalog.resource_type_description(n)}
                for n in names]})
        return Response({"resource_types": names})


class ResourceTypeApi(TenantAPIView):
    def get(self, request, tenant_id, type_name):
        return Response(catalog.resource_type_schema(type_name))


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
