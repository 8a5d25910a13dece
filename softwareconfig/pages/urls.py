from django.urls import path

from softwareconfig.pages import views

app_name = "software"

urlpatterns = [
    path("", views.config_list, name="config-list"),
    # str, not uuid: a malformed id gets the page-style "not found", as other projects' do.
    path("configs/<str:config_id>/", views.config_detail, name="config-detail"),
    path("deployments/", views.deployment_list, name="deployment-list"),
]
