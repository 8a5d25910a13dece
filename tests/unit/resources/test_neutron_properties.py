"""Neutron properties Heat templates use that the corpus found missing: the IPv6 modes
of a Subnet, a Port's binding, DNS name and DHCP options (the hidden ``network_id`` is
in test_cloud_object_types)."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.resources.neutron import Port, Subnet


def test_ipv6_modes():
    props = Subnet.validate_properties({"network": "n", "cidr": "fd00::/64", "ip_version": 6,
                                        "ipv6_address_mode": "slaac",
                                        "ipv6_ra_mode": "slaac"}, resource_name="r")
    assert props["ipv6_address_mode"] == "slaac"
    with pytest.raises(StackValidationFailed, match="ipv6_ra_mode"):
        Subnet.validate_properties({"network": "n", "cidr": "fd00::/64",
                                    "ipv6_ra_mode": "dhcp"}, resource_name="r")


def test_port_binding_dns_and_dhcp_options():
    props = Port.validate_properties({"network": "n", "binding:vnic_type": "direct",
                                      "dns_name": "node1",
                                      "extra_dhcp_opts": [{"opt_name": "mtu",
                                                           "opt_value": "1400"}]},
                                     resource_name="r")
    assert props["binding:vnic_type"] == "direct" and props["dns_name"] == "node1"
    with pytest.raises(StackValidationFailed, match="binding:vnic_type"):
        Port.validate_properties({"network": "n", "binding:vnic_type": "fast"},
                                 resource_name="r")
