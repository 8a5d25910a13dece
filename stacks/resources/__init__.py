"""Resource plugins; importing this package registers the built-in types."""
from stacks.resources import autoscaling, barbican, cinder, compute, delay, designate, \
    heat_basic, image, instance_group, keystone, mistral, neutron, neutron_extras, neutron_l3, \
    nova_floating_ip, nova_objects, octavia, resource_chain, resource_group, swift, \
    swift_signal, unavailable, wait_condition, zaqar  # noqa: F401
from stacks.resources import aodh  # noqa: F401  (after unavailable: its placeholder)
# after the plugins they map onto
from stacks.resources import aws, aws_cloudwatch, aws_lb, aws_more, aws_rds  # noqa: F401
