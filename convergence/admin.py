"""Admin: sync points, traversals, engines and the outbox, read-only; releasing a dead engine's locks.

Nothing here writes a state: releasing locks goes through the same recovery
service the engines use (the resource's django-fsm ``mark_failed``).
"""
from django.contrib import admin, messages
from django.db.models import Count, OuterRef, Subquery

from convergence.engines import engine_row_alive
from convergence.models import Engine, OutboxMessage, SyncPoint, Traversal
from convergence.recovery import engine_locks_release
from heatweb.admin import ReadOnlyAdmin
from heatweb.exceptions import HeatError
from stacks.models import Resource


@admin.register(SyncPoint)
class SyncPointAdmin(ReadOnlyAdmin):
    list_display = ("entity_id", "is_update", "stack", "traversal_id", "ready", "atomic_key",
                    "updated_at")
    list_filter = ("is_update", "stack", "traversal_id")
    search_fields = ("entity_id", "traversal_id", "stack__name")
    readonly_fields = ("entity_id", "traversal_id", "is_update", "stack", "atomic_key",
                       "predecessors", "successors", "input_data", "created_at", "updated_at")

    @admin.display(boolean=True)
    def ready(self, obj):
        return set(obj.predecessors) <= set(obj.input_data)


@admin.register(Traversal)
class TraversalAdmin(ReadOnlyAdmin):
    list_display = ("id", "stack", "action", "current", "node_count", "created_at",
                    "finished_at", "outcome")
    list_filter = ("action", "outcome", "stack")
    search_fields = ("id", "stack__name")
    list_select_related = ("stack",)

    @admin.display(boolean=True)
    def current(self, obj):
        return obj.stack.current_traversal == str(obj.pk)


@admin.register(Engine)
class EngineAdmin(ReadOnlyAdmin):
    list_display = ("id", "hostname", "pid", "alive", "last_heartbeat", "locks_held",
                    "started_at", "stopped_at")
    actions = ["release_locks"]

    @admin.display(boolean=True)
    def alive(self, obj):
        return engine_row_alive(obj)

    def get_queryset(self, request):
        held = (Resource.objects.filter(engine_id=OuterRef("pk")).order_by()
                .values("engine_id").annotate(n=Count("pk")).values("n"))
        return super().get_queryset(request).annotate(locks=Subquery(held))

    @admin.display(description="locks held")
    def locks_held(self, obj):
        return obj.locks or 0

    @admin.action(description="Release the resource locks of the selected dead engines")
    def release_locks(self, request, queryset):
        released = 0
        for engine in queryset:
            try:
                released += engine_locks_release(engine)
            except HeatError as refusal:
                self.message_user(request, refusal.message, messages.WARNING)
        self.message_user(request, f"Released {released} resource lock(s).")


@admin.register(OutboxMessage)
class OutboxMessageAdmin(ReadOnlyAdmin):
    """Tasks stored with their work and not published yet (a writer died, or due later)."""

    list_display = ("task", "stack", "traversal_id", "due_at", "claimed_until", "created_at")
    list_filter = ("task",)
    search_fields = ("stack__name", "traversal_id")
    list_select_related = ("stack",)
    readonly_fields = ("task", "args", "stack", "traversal_id", "due_at", "claimed_by",
                       "claimed_until", "created_at")
