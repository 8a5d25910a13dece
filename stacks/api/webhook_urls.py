"""URLs outside the tenant's API root: the signed signal webhooks and the simulated cloud's
temporary object URLs (a caller reaches them without a token)."""
from django.urls import path

from stacks.api.webhooks import SignalWebhookApi, SimulatedTempUrlApi

urlpatterns = [
    path("webhooks/signal/<uuid:resource_id>/<str:signature>", SignalWebhookApi.as_view(),
         name="signal-webhook"),
    path("sim/object-store/<str:container>/<str:name>", SimulatedTempUrlApi.as_view(),
         name="sim-temp-url"),
]
