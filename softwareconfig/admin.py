from django.contrib import admin

from heatweb.admin import ReadOnlyAdmin
from softwareconfig.models import SoftwareConfig, SoftwareDeployment


@admin.register(SoftwareConfig)
class SoftwareConfigAdmin(ReadOnlyAdmin):
    list_display = ("id", "name", "group", "project", "derived", "created_at")
    list_filter = ("group", "derived")
    search_fields = ("id", "name")
    readonly_fields = [f.name for f in SoftwareConfig._meta.fields]


@admin.register(SoftwareDeployment)
class SoftwareDeploymentAdmin(ReadOnlyAdmin):
    list_display = ("id", "server_id", "action", "status", "project", "updated_at")
    list_filter = ("action", "status")
    search_fields = ("id", "server_id")
    readonly_fields = [f.name for f in SoftwareDeployment._meta.fields]
