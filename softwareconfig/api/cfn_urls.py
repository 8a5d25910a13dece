"""heat-api-cfn's query endpoint, outside the tenant's API root (a server reaches it
with its EC2 key pair, no token): ``/v1/``, the ``metadata_url`` of os-collect-config's
``cfn`` settings."""
from django.urls import path

from softwareconfig.api.cfn import CfnQueryApi

urlpatterns = [
    path("v1/", CfnQueryApi.as_view(), name="cfn-query"),
]
