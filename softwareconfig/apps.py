from django.apps import AppConfig


class SoftwareconfigConfig(AppConfig):
    name = "softwareconfig"
    verbose_name = "Software configuration"

    def ready(self):
        import softwareconfig.deployment_groups  # noqa: F401 - registers the resource plugins
        import softwareconfig.resources  # noqa: F401
        import softwareconfig.structured  # noqa: F401
