from django.apps import AppConfig


class ConvergenceConfig(AppConfig):
    name = "convergence"
    verbose_name = "Convergence engine"
