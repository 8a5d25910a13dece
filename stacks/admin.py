"""Admin: inspect stacks, resources and events. States are read-only here:
they change only through the services' django-fsm transitions."""
from django.contrib import admin

from stacks.models import Event, RawTemplate, Resource, Stack


class ResourceInline(admin.TabularInline):
    model = Resource
    fk_name = "stack"
    fields = ("name", "type", "state", "physical_resource_id", "engine_id", "status_reason")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Stack)
class StackAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "state", "lock_level", "created_at", "updated_at",
                    "current_traversal")
    list_filter = ("state", "project")
    search_fields = ("name", "id")
    readonly_fields = [f.name for f in Stack._meta.fields]
    inlines = [ResourceInline]

    def has_add_permission(self, request):
        return False


@admin.register(Resource)
class ResourceAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "stack", "state", "engine_id", "atomic_key", "updated_at")
    list_filter = ("state", "type")
    search_fields = ("name", "physical_resource_id", "stack__name")
    readonly_fields = [f.name for f in Resource._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "stack", "resource_name", "resource_action",
                    "resource_status", "resource_status_reason")
    list_filter = ("resource_action", "resource_status")
    readonly_fields = [f.name for f in Event._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(RawTemplate)
class RawTemplateAdmin(admin.ModelAdmin):
    list_display = ("id", "created_at")
    readonly_fields = [f.name for f in RawTemplate._meta.fields]
