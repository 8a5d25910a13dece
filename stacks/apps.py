from django.apps import AppConfig


class StacksConfig(AppConfig):
    name = "stacks"
    verbose_name = "Stacks"

    def ready(self):
        # Register every built-in resource plugin, including the nested-stack ones.
        import stacks.resources  # noqa: F401
        import stacks.resources.stack  # noqa: F401
        from stacks.resources.nested_stacks import nested
        from stacks.services import nested as nested_services

        nested.register(nested_services)
