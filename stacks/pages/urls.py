from django.urls import path, re_path

from stacks.pages import catalog_views, list_views, views

app_name = "pages"

urlpatterns = [
    path("", list_views.stack_list, name="stack-list"),
    path("project", views.project_switch, name="project-switch"),
    path("stacks/rows", list_views.stack_rows, name="stack-rows"),
    path("stacks/launch", views.stack_launch, name="stack-launch"),
    path("stacks/fleet", list_views.fleet_action_page, name="fleet-action"),
    path("stacks/<uuid:stack_id>/", views.stack_detail, name="stack-detail"),
    path("stacks/<uuid:stack_id>/update", views.stack_update, name="stack-update"),
    path("stacks/<uuid:stack_id>/delete", views.stack_delete_confirm, name="stack-delete"),
    path("stacks/<uuid:stack_id>/lock-preview", views.stack_lock_preview,
         name="stack-lock-preview"),
    path("stacks/<uuid:stack_id>/lock-windows", views.stack_lock_window_create,
         name="stack-lock-windows"),
    path("stacks/<uuid:stack_id>/lock-windows/<int:window_id>/cancel",
         views.stack_lock_window_cancel, name="stack-lock-window-cancel"),
    re_path(r"^stacks/(?P<stack_id>[0-9a-f-]{36})/actions/"
            r"(?P<action>lock|unlock|suspend|resume|check|delete|reauthorise)$",
            views.stack_action, name="stack-action"),
    path("stacks/<uuid:stack_id>/drift", views.stack_drift_detect, name="stack-drift"),
    path("stacks/<uuid:stack_id>/resources/<str:resource_name>", views.resource_detail,
         name="resource-detail"),
    path("stacks/<uuid:stack_id>/<slug:tab>", views.stack_detail, name="stack-tab"),
    path("resource-types/", catalog_views.resource_type_list, name="resource-type-list"),
    path("resource-types/<str:type_name>", catalog_views.resource_type_detail,
         name="resource-type-detail"),
    path("template-versions/", catalog_views.template_version_list,
         name="template-version-list"),
    path("template-versions/<str:version>", catalog_views.template_version_detail,
         name="template-version-detail"),
]
