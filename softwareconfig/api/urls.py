from django.urls import path

from softwareconfig.api import views as v

urlpatterns = [
    path("software_configs", v.SoftwareConfigListApi.as_view()),
    path("software_configs/<str:config_id>", v.SoftwareConfigApi.as_view()),
    path("software_deployments", v.SoftwareDeploymentListApi.as_view()),
    path("software_deployments/metadata/<str:server_id>", v.ServerMetadataApi.as_view()),
    path("software_deployments/<str:deployment_id>", v.SoftwareDeploymentApi.as_view()),
]
