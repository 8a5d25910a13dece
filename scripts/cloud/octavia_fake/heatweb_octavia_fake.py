"""Test-only Octavia network driver: Octavia's noop network driver whose subnets are on
the networks Neutron says they are on.

The noop driver puts a subnet it has not seen on whatever network the process last looked
up (none in a fresh process), so octavia-api and octavia-worker disagree: the API records
a load balancer's VIP on one network, the worker puts a member on the VIP's subnet on
another. Creating that member then "unplugs" the VIP network (the noop driver deletes the
VIP port's record), and deleting it fails in ``CalculateDelta`` (``KeyError``: the VIP
network, no longer plugged, has no vnic type), so the member stays in Octavia and the
stack deleting it waits. Asking Neutron for a real subnet's network makes both processes
agree, as the real driver does; a subnet Neutron does not know keeps the noop answer.
Nothing else changes: no port is made, no amphora runs. Never use it outside tests.
"""
import functools

from octavia.common import clients
from octavia.network.drivers.noop_driver import driver as noop


@functools.lru_cache(maxsize=1024)
def _neutron_network_of(subnet_id):
    try:
        return clients.NeutronAuth.get_neutron_client().network.get_subnet(
            subnet_id).network_id
    except Exception:  # not a Neutron subnet (or Neutron away): the noop answer stands
        return None


class NetworkDriver(noop.NoopNetworkDriver):
    def get_subnet(self, subnet_id, context=None):
        subnet = super().get_subnet(subnet_id, context=context)
        network_id = _neutron_network_of(subnet_id)
        if network_id:
            subnet.network_id = network_id
        return subnet
