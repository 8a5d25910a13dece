"""Admin: sync points, traversals, engines, the outbox and hook pauses, read-only;
releasing a dead engine's locks.

Nothing here writes a state: releasing locks goes through the same recovery
service the engines use (the resource's django-fsm ``mark_failed``).
"""
from dataclasses import dataclass

from django.contrib import admin, messages
from django.db.models import Count, OuterRef, Subquery

from convergence.engines import engine_row_alive
from convergence.inspect import current_sync_points, engine_holds, sync_point_label, \
    traversal_nodes, waiting_sync_point_ids
from convergence.models import Breakpoint, Engine, OutboxMessage, SyncPoint, Traversal
from convergence.recovery import engine_locks_release
from heatweb.admin import ReadOnlyAdmin
from heatweb.exceptions import HeatError
from stacks.admin_masking import HiddenMaskingAdmin
from stacks.models import Resource
from stacks.models import states as st
from stacks.topology import layout


class WaitingFilter(admin.SimpleListFilter):
    title = "sync point"
    parameter_name = "sync"

    def lookups(self, request, model_admin):
        return (("waiting", "Waiting (a predecessor missing)"), ("ready", "Ready"))

    def queryset(self, request, queryset):
        if self.value() not in ("waiting", "ready"):
            return queryset
        waiting = waiting_sync_point_ids(queryset)
        return queryset.filter(pk__in=waiting) if self.value() == "waiting" else \
            queryset.exclude(pk__in=waiting)


class CurrentTraversalFilter(admin.SimpleListFilter):
    title = "traversal"
    parameter_name = "traversal"

    def lookups(self, request, model_admin):
        return (("current", "Current traversal of its stack"),)

    def queryset(self, request, queryset):
        return current_sync_points(queryset) if self.value() == "current" else queryset


MAX_DRAWN_NODES = 400  # a larger traversal is listed, not drawn


class OutcomeFilter(admin.SimpleListFilter):
    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return (("running", "Not finished"), ("COMPLETE", "Complete"), ("FAILED", "Failed"))

    def queryset(self, request, queryset):
        if self.value() == "running":
            return queryset.filter(outcome="")
        if self.value() in ("COMPLETE", "FAILED"):
            return queryset.filter(outcome=self.value())
        return queryset


def _short(value):
    return f"{str(value)[:8]}…" if value else "—"


@admin.display(description="stack", ordering="stack__name")
def stack_name(obj):
    """The stack's name (its id is on the stack's own page): keeps the list narrow."""
    return obj.stack.name if obj.stack_id else "—"


@admin.register(SyncPoint)
class SyncPointAdmin(HiddenMaskingAdmin):
    """A sync point's ``input_data`` is its predecessors' resolved data: shown with the
    stack's hidden parameter values masked, as every other admin page shows them."""

    list_display = ("node", stack_name, "short_traversal", "ready", "waiting_for",
                    "updated_at")
    list_filter = (WaitingFilter, CurrentTraversalFilter, "is_update")
    search_fields = ("entity_id", "traversal_id", "stack__name")
    list_select_related = ("stack",)
    readonly_fields = ("node", "entity_id", "traversal_id", "is_update", "stack", "atomic_key",
                       "predecessors", "successors", "input_data", "created_at", "updated_at")

    @admin.display(description="node")
    def node(self, obj):
        return sync_point_label(obj)

    @admin.display(description="traversal")
    def short_traversal(self, obj):
        return _short(obj.traversal_id)

    @admin.display(boolean=True)
    def ready(self, obj):
        return set(obj.predecessors) <= set(obj.input_data)

    @admin.display(description="missing predecessors")
    def waiting_for(self, obj):
        return len(set(obj.predecessors) - set(obj.input_data)) or "—"


@dataclass
class _GraphNode:
    pk: str
    name: str
    type: str
    state: str
    requires: list


def traversal_drawing(nodes):
    """A layered drawing (the stack pages' ``layout``) of the traversal's nodes."""
    drawn = [_GraphNode(n.key, f"{n.name} · {n.action}", "", n.state or st.INIT_COMPLETE,
                        [k for k, _ in n.predecessors]) for n in nodes]
    graph = layout(drawn)
    waiting = {n.key for n in nodes if not n.ready}
    for node in graph.nodes:
        node.waiting = node.key in waiting
    return graph


@admin.register(Traversal)
class TraversalAdmin(ReadOnlyAdmin):
    """A traversal's page lists its nodes by resource and action with their sync points."""

    list_display = ("short_id", stack_name, "action", "current", "node_count", "created_at",
                    "outcome")
    list_filter = ("action", OutcomeFilter)
    search_fields = ("id", "stack__name")
    list_select_related = ("stack",)
    change_form_template = "admin/convergence/traversal/change_form.html"
    readonly_fields = ("id", "stack", "action", "node_count", "created_at", "finished_at",
                       "outcome")

    @admin.display(description="traversal", ordering="id")
    def short_id(self, obj):
        return _short(obj.pk)

    @admin.display(boolean=True)
    def current(self, obj):
        return obj.stack.current_traversal == str(obj.pk)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        traversal = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if traversal is not None:
            waiting_only = request.GET.get("nodes") == "waiting"
            nodes = traversal_nodes(traversal)
            extra.update(
                nodes=[n for n in nodes if not n.ready] if waiting_only else nodes,
                waiting_only=waiting_only, node_total=len(nodes),
                drawing=traversal_drawing(nodes) if len(nodes) <= MAX_DRAWN_NODES else None,
                waiting_total=sum(1 for n in nodes if not n.ready),
                is_current=traversal.stack.current_traversal == str(traversal.pk))
        return super().change_view(request, object_id, form_url, extra_context=extra)


@admin.register(Engine)
class EngineAdmin(ReadOnlyAdmin):
    list_display = ("id", "hostname", "pid", "alive", "last_heartbeat", "locks_held",
                    "started_at", "stopped_at")
    actions = ["release_locks"]
    change_form_template = "admin/convergence/engine/change_form.html"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        engine = self.get_object(request, object_id)
        extra = dict(extra_context or {})
        if engine is not None:
            extra["held"] = engine_holds(engine)
        return super().change_view(request, object_id, form_url, extra_context=extra)

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


@admin.register(Breakpoint)
class BreakpointAdmin(ReadOnlyAdmin):
    """Nodes paused on a hook; a user clears one with a signal ``{"unset_hook": ...}``."""

    list_display = ("stack", "resource_id", "hook", "cleared", "traversal_id", "created_at")
    list_filter = ("hook", "cleared")
    search_fields = ("stack__name", "traversal_id")
    list_select_related = ("stack",)
    readonly_fields = ("stack", "resource_id", "hook", "cleared", "traversal_id", "entity",
                       "data", "created_at")
