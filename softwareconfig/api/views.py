"""Software config and deployment endpoints of the Orchestration API v1 (Heat's shapes)."""
from rest_framework import status
from rest_framework.response import Response

from heatweb.api import TenantAPIView
from heatweb.exceptions import BadRequest
from softwareconfig import services
from softwareconfig.door import deployment_action
from softwareconfig.services import config_body


def deployment_body(row):
    return {"id": str(row.pk), "config_id": str(row.config_id) if row.config_id else None,
            "server_id": row.server_id, "input_values": row.input_values,
            "output_values": row.output_values, "action": row.action, "status": row.status,
            "status_reason": row.status_reason,
            "creation_time": row.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "updated_time": row.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ")
            if row.updated_at else None}


def _optional(body, name, kind, label):
    value = body.get(name)
    if value is not None and not isinstance(value, kind):
        raise BadRequest(f"{name} must be {label}.")
    return value


class SoftwareConfigListApi(TenantAPIView):
    def get(self, request, tenant_id):
        rows = services.config_list(self.project, limit=request.query_params.get("limit"),
                                    marker=request.query_params.get("marker"))
        return Response({"software_configs": [config_body(r, with_config=False) for r in rows]})

    def post(self, request, tenant_id):
        body = self.body()
        row = services.config_create(
            project=self.project, name=_optional(body, "name", str, "a string"),
            group=_optional(body, "group", str, "a string"), config=body.get("config"),
            inputs=body.get("inputs"), outputs=body.get("outputs"),
            options=body.get("options"))
        return Response({"software_config": config_body(row)})


class SoftwareConfigApi(TenantAPIView):
    def get(self, request, tenant_id, config_id):
        return Response({"software_config": config_body(
            services.config_get(self.project, config_id))})

    def delete(self, request, tenant_id, config_id):
        services.config_delete(self.project, config_id, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SoftwareDeploymentListApi(TenantAPIView):
    def get(self, request, tenant_id):
        rows = services.deployment_list(self.project,
                                        server_id=request.query_params.get("server_id"))
        return Response({"software_deployments": [deployment_body(r) for r in rows]})

    def post(self, request, tenant_id):
        body = self.body()
        row = services.deployment_create(
            project=self.project, config_id=body.get("config_id"),
            server_id=body.get("server_id"), input_values=body.get("input_values"),
            action=_optional(body, "action", str, "a string") or "INIT",
            status=_optional(body, "status", str, "a string") or "COMPLETE",
            status_reason=_optional(body, "status_reason", str, "a string") or "",
            stack_user_project_id=body.get("stack_user_project_id") or "", user=request.user)
        return Response({"software_deployment": deployment_body(row)})


class SoftwareDeploymentApi(TenantAPIView):
    def get(self, request, tenant_id, deployment_id):
        return Response({"software_deployment": deployment_body(
            services.deployment_get(self.project, deployment_id))})

    def put(self, request, tenant_id, deployment_id):
        body = self.body()
        row = deployment_action(
            services.deployment_get(self.project, deployment_id), "update", user=request.user,
            config_id=body.get("config_id"), input_values=body.get("input_values"),
            output_values=body.get("output_values"),
            action=_optional(body, "action", str, "a string"),
            status=_optional(body, "status", str, "a string"),
            status_reason=_optional(body, "status_reason", str, "a string"))
        return Response({"software_deployment": deployment_body(row)})

    def delete(self, request, tenant_id, deployment_id):
        deployment_action(services.deployment_get(self.project, deployment_id), "delete",
                          user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ServerMetadataApi(TenantAPIView):
    def get(self, request, tenant_id, server_id):
        return Response({"metadata": services.server_metadata(self.project, server_id)})
