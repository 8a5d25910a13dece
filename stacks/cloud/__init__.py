"""The cloud behind physical resources; the simulated one unless settings say otherwise."""
from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string

from stacks.cloud.metered import MeteredCloud
from stacks.cloud.simulated import SimulatedCloud


@lru_cache(maxsize=1)
def get_cloud_driver():
    """The configured driver, every call counted (``stacks.cloud.metered``)."""
    path = settings.HEATWEB.get("CLOUD_DRIVER", "stacks.cloud.simulated.SimulatedCloud")
    driver = import_string(path)()
    return MeteredCloud(driver, simulated=isinstance(driver, SimulatedCloud))


def cloud_for_stack(stack):
    """The driver acting for the stack's owner (Keystone mode: through the stack's trust).

    The configured driver's ``for_stack`` decides: the OpenStack one binds
    the stack's trust session (``heatweb.keystone.session_for_stack``); the
    simulated cloud is the same for everyone.
    """
    return get_cloud_driver().for_stack(stack)


def cloud_for_user(user, project_id):
    """The driver acting as the caller in ``project_id`` (Keystone mode: their own token),
    for what is checked before a stack (and its trust) exists."""
    return get_cloud_driver().for_user(user, project_id)


# The cloud key of heatweb's own objects (software configs and deployments).
HEATWEB_OBJECTS = "heatweb"


def cloud_key():
    """Which cloud the configured driver drives, as the owner records name it: the
    simulated cloud, or an OpenStack cloud by its ``OS_CLOUD`` and region."""
    if settings.HEATWEB.get("CLOUD_DRIVER", "").endswith("SimulatedCloud"):
        return "simulated"
    return f"openstack:{settings.HEATWEB.get('OS_CLOUD', '')}:{settings.HEATWEB.get('OS_REGION', '')}"
