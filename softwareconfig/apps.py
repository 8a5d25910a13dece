from django.apps import AppConfig


class SoftwareconfigConfig(AppConfig):
    name = "softwareconfig"
    verbose_name = "Software configuration"

    def ready(self):
        import softwareconfig.resources  # noqa: F401 - registers the resource plugins
