from django.contrib import admin

from softwareconfig.models import SoftwareConfig, SoftwareDeployment
from softwareconfig.pages.selectors import deploying_stack
from stacks.admin_masking import HiddenMaskingAdmin


def _deploying_stacks(config):
    stack = deploying_stack(config.project, config) if config is not None else None
    return [stack] if stack is not None else []


@admin.register(SoftwareConfig)
class SoftwareConfigAdmin(HiddenMaskingAdmin):
    list_display = ("id", "name", "group", "project", "derived", "created_at")
    list_filter = ("group", "derived")
    search_fields = ("id", "name")
    readonly_fields = [f.name for f in SoftwareConfig._meta.fields]

    def hidden_stacks(self, obj):
        return _deploying_stacks(obj) if obj.derived else []


@admin.register(SoftwareDeployment)
class SoftwareDeploymentAdmin(HiddenMaskingAdmin):
    list_display = ("id", "server_id", "action", "status", "project", "updated_at")
    list_filter = ("action", "status")
    search_fields = ("id", "server_id")
    readonly_fields = [f.name for f in SoftwareDeployment._meta.fields]

    def hidden_stacks(self, obj):
        return _deploying_stacks(obj.config)
