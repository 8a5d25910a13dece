from django.contrib import admin

from heatweb.models import ApiToken, Membership, Project

# The app list in a sidebar on every page took 300 px from the lists (traversals, sync
# points) and clipped their columns at 1280 px; the home page and breadcrumbs remain.
admin.site.enable_nav_sidebar = False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "id", "created_at")
    search_fields = ("name", "id")
    inlines = [MembershipInline]

    def has_delete_permission(self, request, obj=None):
        # Deleting a project would delete its stacks around the door (and their
        # locks); a project with live stacks stays until they are deleted.
        if obj is not None and obj.stacks.filter(deleted_at__isnull=True).exists():
            return False
        return super().has_delete_permission(request, obj)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "project", "created_at", "expires_at", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at")
    list_filter = ("revoked_at",)


class ReadOnlyAdmin(admin.ModelAdmin):
    """A model admin that shows rows and changes nothing by itself: no add, edit or
    delete (and so no bulk delete action). Changes go through services, as
    admin actions that call them."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
