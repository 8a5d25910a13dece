"""Resource plugins; importing this package registers the built-in types."""
from stacks.resources import autoscaling, compute, heat_basic, image, neutron, \
    resource_group, wait_condition  # noqa: F401
