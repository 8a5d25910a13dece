from django.apps import AppConfig


class HeatwebConfig(AppConfig):
    name = "heatweb"
    verbose_name = "Tenants and tokens"
