"""``OS::Heat::Delay``: a pause at a chosen point of a stack's create, delete,
suspend or resume (its place in the dependency graph decides where)."""
import random

from stacks.resources.base import ResourcePlugin, wait_cookie
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Property, Range

DELAY_ACTIONS = ("CREATE", "DELETE", "SUSPEND", "RESUME")


@register
class Delay(ResourcePlugin):
    """Waits ``min_wait`` seconds plus a random jitter of up to ``max_jitter`` x
    ``jitter_multiplier`` seconds during the ``actions`` listed: after the resources it
    depends on and before those depending on it (the reverse for DELETE and RESUME).
    The wait is the engine's timed wait: no worker sleeps.
    """

    type_name = "OS::Heat::Delay"
    properties_schema = {
        "min_wait": Property("Number", description="Minimum time in seconds to wait during "
                             "the specified actions.", default=0, update_allowed=True,
                             constraints=(Range(0, None),)),
        "max_jitter": Property("Number", description="Maximum jitter to add to the minimum "
                               "wait time.", default=0, update_allowed=True,
                               constraints=(Range(0, None),)),
        "jitter_multiplier": Property("Number", description="Number of seconds to multiply "
                                      "the maximum jitter value by.", default=1.0,
                                      update_allowed=True, constraints=(Range(0, None),)),
        "actions": Property("List", description="Actions during which the delay will occur.",
                            default=["CREATE"], update_allowed=True,
                            schema=Property("String",
                                            constraints=(AllowedValues(DELAY_ACTIONS),))),
    }

    def _wait(self, action):
        if action not in (self.properties.get("actions") or ()):
            return None
        jitter = self.properties.get("max_jitter", 0) * self.properties.get(
            "jitter_multiplier", 1.0)
        return wait_cookie(self.properties.get("min_wait", 0) + jitter * random.random())

    def handle_create(self):
        return self._wait("CREATE")

    def handle_delete(self):
        return self._wait("DELETE")

    def handle_suspend(self):
        return self._wait("SUSPEND")

    def handle_resume(self):
        return self._wait("RESUME")
