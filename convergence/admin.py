"""Admin: sync points, traversals and engines, read-only."""
from django.contrib import admin

from convergence.models import Engine, SyncPoint, Traversal


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(SyncPoint)
class SyncPointAdmin(ReadOnlyAdmin):
    list_display = ("entity_id", "is_update", "stack", "traversal_id", "atomic_key", "updated_at")
    list_filter = ("is_update", "stack", "traversal_id")
    search_fields = ("entity_id", "traversal_id")


@admin.register(Traversal)
class TraversalAdmin(ReadOnlyAdmin):
    list_display = ("id", "stack", "action", "node_count", "created_at", "finished_at", "outcome")
    list_filter = ("action", "outcome")
    search_fields = ("id", "stack__name")


@admin.register(Engine)
class EngineAdmin(ReadOnlyAdmin):
    list_display = ("id", "hostname", "pid", "started_at", "last_heartbeat", "stopped_at")
