"""How nested-stack plugins reach the stack services: an interface registered at app start.

Plugins are loaded before the stack services (the services build
definitions from the plugin registry), so a plugin cannot import them; the
stacks app registers ``stacks.services.nested`` here when it is ready, as
the cloud driver is chosen by settings.
"""


from stacks.resources.backends import ServiceInterface


class NestedStacks(ServiceInterface):
    """``nested_create``, ``nested_update``, ``nested_delete``, ``nested_action``,
    ``nested_progress``, ``nested_outputs``, ``nested_resources_data``, ``nested_get``,
    ``nested_lock``, ``nested_unlock``, ``nested_unlock_progress``, ``stack_parameters``
    and ``nested_template_check`` of the registered service module."""


nested = NestedStacks("nested stack services")
