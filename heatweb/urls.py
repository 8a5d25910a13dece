from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from heatweb import health

urlpatterns = [
    path("healthz", health.healthz),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("admin/", admin.site.urls),
    path("v1/<str:tenant_id>/", include("stacks.api.urls")),
]

handler404 = "heatweb.errors.handler404"
handler500 = "heatweb.errors.handler500"
