"""How nested-stack plugins reach the stack services: an interface registered at app start.

Plugins are loaded before the stack services (the services build
definitions from the plugin registry), so a plugin cannot import them; the
stacks app registers ``stacks.services.nested`` here when it is ready, as
the cloud driver is chosen by settings.
"""


class NestedStacks:
    """``nested_create``, ``nested_update``, ``nested_delete``, ``nested_action``,
    ``nested_progress``, ``nested_outputs``, ``nested_resources_data``, ``nested_get``,
    ``nested_lock``, ``nested_unlock`` and ``nested_unlock_progress`` of the registered
    service module."""

    def __init__(self):
        self._service = None

    def register(self, service):
        self._service = service

    def __getattr__(self, name):
        if name.startswith("_") or self._service is None:
            raise AttributeError(f"nested stack services not registered (asked for {name})")
        return getattr(self._service, name)


nested = NestedStacks()
