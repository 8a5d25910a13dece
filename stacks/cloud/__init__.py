"""The cloud behind physical resources; the simulated one unless settings say otherwise."""
from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string


@lru_cache(maxsize=1)
def get_cloud_driver():
    path = settings.HEATWEB.get("CLOUD_DRIVER", "stacks.cloud.simulated.SimulatedCloud")
    return import_string(path)()
