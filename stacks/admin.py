"""Admin: inspect stacks, resources and events. It changes nothing by itself:
no add, edit or delete of a row; the useful changes (delete a stack, unlock
it) are admin actions that go through the door every way in uses
(``stacks.services.actions.stack_action``) and show its refusal."""
from django.contrib import admin, messages

from heatweb.admin import ReadOnlyAdmin
from heatweb.exceptions import HeatError
from stacks.admin_masking import HiddenMaskingAdmin, template_hidden_values
from stacks.hidden import hidden_values, mask
from stacks.models import Event, LockRecord, RawTemplate, Resource, Stack
from stacks.services.actions import stack_action


class ResourceInline(admin.TabularInline):
    model = Resource
    fk_name = "stack"
    fields = ("name", "type", "state", "physical_resource_id", "engine_id", "reason")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="status reason")
    def reason(self, obj):
        return mask(obj.status_reason, hidden_values(obj.stack))


def _through_the_door(model_admin, request, queryset, action, started):
    for stack in queryset.select_related("parent", "locked_by"):
        try:
            stack_action(stack, action, user=request.user)
        except HeatError as error:
            model_admin.message_user(request, f"Refused for stack {stack.name}: {error.message}", messages.ERROR)
        else:
            model_admin.message_user(request, f"{started} of stack {stack.name} started.")


@admin.register(Stack)
class StackAdmin(HiddenMaskingAdmin):
    list_display = ("name", "project", "state", "lock_level", "created_at", "updated_at",
                    "current_traversal")
    list_filter = ("state", "project")
    search_fields = ("name", "id")
    readonly_fields = [f.name for f in Stack._meta.fields]
    inlines = [ResourceInline]
    actions = ["delete_stacks", "unlock_stacks"]

    def hidden_stacks(self, obj):
        return [obj]

    @admin.action(description="Delete the selected stacks (and their resources)")
    def delete_stacks(self, request, queryset):
        _through_the_door(self, request, queryset, "delete", "Delete")

    @admin.action(description="Unlock the selected stacks")
    def unlock_stacks(self, request, queryset):
        _through_the_door(self, request, queryset, "unlock", "Unlock")


@admin.register(Resource)
class ResourceAdmin(HiddenMaskingAdmin):
    list_display = ("name", "type", "stack", "state", "engine_id", "atomic_key", "updated_at")
    list_filter = ("state", "type")
    search_fields = ("name", "physical_resource_id", "stack__name")
    readonly_fields = [f.name for f in Resource._meta.fields]


@admin.register(Event)
class EventAdmin(HiddenMaskingAdmin):
    list_display = ("created_at", "stack", "resource_name", "resource_action",
                    "resource_status", "reason")
    list_filter = ("resource_action", "resource_status")
    list_select_related = ("stack",)
    readonly_fields = [f.name for f in Event._meta.fields]

    @admin.display(description="resource status reason")
    def reason(self, obj):
        return self.masked(obj, obj.resource_status_reason)


@admin.register(LockRecord)
class LockRecordAdmin(ReadOnlyAdmin):
    list_display = ("at", "stack", "kind", "username", "level", "reason", "expires_at",
                    "held_seconds")
    list_filter = ("kind", "level")
    search_fields = ("stack__name", "username", "reason")
    readonly_fields = [f.name for f in LockRecord._meta.fields]


@admin.register(RawTemplate)
class RawTemplateAdmin(HiddenMaskingAdmin):
    list_display = ("id", "created_at")
    readonly_fields = [f.name for f in RawTemplate._meta.fields]

    def hidden_stacks(self, obj):
        return list(Stack.objects.filter(raw_template=obj)) + \
            list(Stack.objects.filter(prev_raw_template=obj))

    def own_hidden_values(self, obj):
        return template_hidden_values(obj)
