"""Test-only ML2 mechanism driver for heatweb's one-machine cloud.

The cloud runs no L2 agent, so no stock mechanism driver binds a port and
Nova fails to boot a server on a Neutron network (PortBindingFailed). This
driver binds the first segment of every port as an ACTIVE OVS VIF: all the fake
virt driver needs, and a VIF type the openvswitch QoS and trunk drivers accept
(an "other" VIF gets "409 Rule bandwidth_limit is not supported by port").
Never use it in a real cloud.
"""
from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class BindEveryPort(api.MechanismDriver):
    """Binds every port on any host."""

    def initialize(self):
        pass

    def bind_port(self, context):
        segments = context.segments_to_bind
        if segments:
            context.set_binding(segments[0][api.ID], portbindings.VIF_TYPE_OVS,
                                {portbindings.CAP_PORT_FILTER: True,
                                 portbindings.OVS_HYBRID_PLUG: False},
                                status=constants.PORT_STATUS_ACTIVE)
