from django.urls import path, re_path

from stacks.api import lock_views as locks
from stacks.api import meta_views as meta
from stacks.api import snapshot_views as snaps
from stacks.api import views as v
from stacks.api.schema import document

document()

S = "stacks/<str:stack_name>/<str:stack_id>"

urlpatterns = [
    path("stacks", v.StackListApi.as_view()),
    path("stacks/preview", v.StackPreviewApi.as_view()),
    path("locks", locks.LockedStacksApi.as_view()),
    path("fleet/actions", locks.FleetActionApi.as_view()),
    re_path(r"^stacks/(?P<stack_name>[^/]+)/(?P<path>(resources|events|template|environment|"
            r"files|outputs|actions|locks|lock_windows|snapshots|abandon|export|drift)(/.*)?)$",
            v.StackLookupApi.as_view()),
    path("stacks/<str:stack_name>", v.StackLookupApi.as_view()),
    path(S, v.StackDetailApi.as_view()),
    path(f"{S}/preview", v.StackUpdatePreviewApi.as_view()),
    path(f"{S}/actions", v.StackActionApi.as_view()),
    path(f"{S}/locks", locks.StackLockHistoryApi.as_view()),
    path(f"{S}/locks/preview", locks.StackLockPreviewApi.as_view()),
    path(f"{S}/locks/verify", locks.StackLockVerifyApi.as_view()),
    path(f"{S}/lock_windows", locks.StackLockWindowListApi.as_view()),
    path(f"{S}/lock_windows/<str:window_id>", locks.StackLockWindowApi.as_view()),
    path(f"{S}/snapshots", snaps.SnapshotListApi.as_view()),
    path(f"{S}/snapshots/<str:snapshot_id>", snaps.SnapshotApi.as_view()),
    path(f"{S}/snapshots/<str:snapshot_id>/restore", snaps.SnapshotRestoreApi.as_view()),
    path(f"{S}/abandon", snaps.StackAbandonApi.as_view()),
    path(f"{S}/export", snaps.StackExportApi.as_view()),
    path(f"{S}/drift", v.StackDriftApi.as_view()),
    path(f"{S}/template", v.StackTemplateApi.as_view()),
    path(f"{S}/environment", v.StackEnvironmentApi.as_view()),
    path(f"{S}/files", v.StackFilesApi.as_view()),
    path(f"{S}/outputs", v.StackOutputListApi.as_view()),
    path(f"{S}/outputs/<str:output_key>", v.StackOutputApi.as_view()),
    path(f"{S}/resources", v.ResourceListApi.as_view()),
    path(f"{S}/resources/<str:resource_name>", v.ResourceDetailApi.as_view()),
    path(f"{S}/resources/<str:resource_name>/metadata", v.ResourceMetadataApi.as_view()),
    path(f"{S}/resources/<str:resource_name>/signal", v.ResourceSignalApi.as_view()),
    path(f"{S}/resources/<str:resource_name>/events", v.EventListApi.as_view()),
    path(f"{S}/resources/<str:resource_name>/events/<str:event_id>",
         v.EventDetailApi.as_view()),
    path(f"{S}/events", v.EventListApi.as_view()),
    path("validate", meta.ValidateApi.as_view()),
    path("template_versions", meta.TemplateVersionListApi.as_view()),
    path("template_versions/<str:template_version>/functions",
         meta.TemplateFunctionListApi.as_view()),
    path("resource_types", meta.ResourceTypeListApi.as_view()),
    path("resource_types/<str:type_name>", meta.ResourceTypeApi.as_view()),
    path("resource_types/<str:type_name>/template", meta.ResourceTypeTemplateApi.as_view()),
    path("build_info", meta.BuildInfoApi.as_view()),
    path("services", snaps.ServiceListApi.as_view()),
]
