from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from heatweb import health

urlpatterns = [
    path("healthz", health.healthz),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("admin/", admin.site.urls),
    path("", include("softwareconfig.api.cfn_urls")),
    path("v1/<str:tenant_id>/", include("stacks.api.urls")),
    path("v1/<str:tenant_id>/", include("softwareconfig.api.urls")),
    path("", include("stacks.api.webhook_urls")),
    path("software/", include("softwareconfig.pages.urls")),
    path("", include("stacks.pages.urls")),
]

handler400 = "heatweb.errors.handler400"
handler404 = "heatweb.errors.handler404"
handler500 = "heatweb.errors.handler500"
