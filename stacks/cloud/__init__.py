"""The cloud behind physical resources; the simulated one unless settings say otherwise."""
from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string


@lru_cache(maxsize=1)
def get_cloud_driver():
    """The configured driver, every call counted (``stacks.cloud.metered``)."""
    from stacks.cloud.metered import MeteredCloud
    from stacks.cloud.simulated import SimulatedCloud

    path = settings.HEATWEB.get("CLOUD_DRIVER", "stacks.cloud.simulated.SimulatedCloud")
    driver = import_string(path)()
    return MeteredCloud(driver, simulated=isinstance(driver, SimulatedCloud))


def cloud_for_stack(stack):
    """The driver acting for the stack's owner.

    In Keystone mode a driver that takes a keystoneauth1 session
    (``for_session``, the OpenStack one) gets the stack's trust session
    (``heatweb.keystone.session_for_stack``): it acts in the owner's project
    as the owner, after the owner's token expired. Otherwise, and for the
    simulated cloud, the configured driver.
    """
    from heatweb.keystone import session_for_stack
    from stacks.cloud.metered import MeteredCloud

    driver = get_cloud_driver()
    for_session = getattr(driver.driver, "for_session", None)
    session = session_for_stack(stack) if for_session is not None else None
    return driver if session is None else MeteredCloud(for_session(session), simulated=False)
