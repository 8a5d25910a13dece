from django.apps import AppConfig


class SoftwareconfigConfig(AppConfig):
    name = "softwareconfig"
    verbose_name = "Software configuration"

    def ready(self):
        import softwareconfig.deployment_groups  # noqa: F401 - registers the resource plugins
        import softwareconfig.resources  # noqa: F401
        import softwareconfig.structured  # noqa: F401
        from softwareconfig import door, heat_import, resources, services
        from stacks.resources import server_user_data
        from stacks.services.heat_import import store

        # The plugins store their configs and deployments through the services, which
        # they do not import (the services poke the engine's waits).
        resources.deployments.register(services)
        server_user_data.software_configs.register(services)
        # A deployment's writes through its stack's door (the door's table of actions).
        door.register_actions()
        # An imported Heat stack's configs and deployments (manage.py import_heat).
        store.software_writer_register(heat_import.software_import)
