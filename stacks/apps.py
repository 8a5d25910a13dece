from django.apps import AppConfig


class StacksConfig(AppConfig):
    name = "stacks"
    verbose_name = "Stacks"

    def ready(self):
        # Imported here, not at the top: they load models, so the app registry must be ready.
        # Register every built-in resource plugin, including the nested-stack ones.
        import stacks.resources  # noqa: F401
        import stacks.resources.stack  # noqa: F401
        from convergence.recovery import on_stack_quiet, on_sweep
        from convergence.services import on_stack_failed, on_stack_settled, \
            on_traversal_finished
        from stacks.definitions import definition_cache
        from stacks.resources.nested_stacks import nested
        from stacks.selectors import stored_lookup
        from stacks.services import actions_registry, event_sinks, lifecycle, lock_healing, \
            lock_modes, lock_schedule, lock_windows, nested as nested_services, restart, \
            snapshots

        # Interfaces registered at start, so the lower layers import no stack
        # service: nested-stack plugins reach child stacks, and the engine
        # hands a failed stack to the stack service (which decides to roll back)
        # and a quiet one to the service that starts its action over.
        nested.register(nested_services)
        # A child's resource_facade reads its parent's stored resources (made of plugins).
        definition_cache.stored_lookup_register(stored_lookup)
        # The door's table: the services that do each stack action (the door imports none).
        actions_registry.register_actions()
        on_stack_failed(lifecycle.stack_failed)
        on_traversal_finished(snapshots.snapshot_finished)
        # The environment's event_sinks (zaqar-queue) get the action's events.
        on_traversal_finished(event_sinks.traversal_events_to_sinks)
        # A lock waiting for its stack to settle (an action under it, one it interrupted).
        on_stack_settled(lock_modes.lock_settled)
        on_stack_quiet(restart.stack_traversal_restart, actions=restart.RESTARTABLE)
        # The sweep of every engine also expires locks whose window closed, verifies
        # physical locks and starts scheduled windows.
        on_sweep(lock_windows.lock_expiry_sweep)
        on_sweep(lock_healing.lock_verify_sweep)
        on_sweep(lock_schedule.lock_window_sweep)
        on_sweep(lock_modes.lock_resume_sweep)
