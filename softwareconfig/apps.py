from django.apps import AppConfig


class SoftwareconfigConfig(AppConfig):
    name = "softwareconfig"
    verbose_name = "Software configuration"
