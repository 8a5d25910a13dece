"""Heat's ``custom_constraint``s of parameters, checked against the cloud (or the value's
form) when a stack is validated, created or updated, as Heat checks them.

A constraint on a kind the cloud keeps (``neutron.network``, ``nova.keypair``, ...)
looks the value up by name or id; ``glance.image`` and ``nova.flavor`` ask the
driver's ``find_boot_source``; ``ip_addr``, ``net_cidr`` and ``mac_addr`` check
the value's form. A constraint name not listed here is accepted unchecked.
An empty value is not looked up (a parameter left to its empty default).
"""
import ipaddress
import re

from heatweb.exceptions import StackValidationFailed
from stacks.cloud.driver import CloudError

# Heat's constraint name -> the cloud's object kind
OBJECT_CONSTRAINTS = {
    "neutron.network": "network", "neutron.subnet": "subnet", "neutron.port": "port",
    "neutron.router": "router", "neutron.subnetpool": "subnetpool",
    "neutron.address_scope": "address_scope", "neutron.qos_policy": "qos_policy",
    "nova.keypair": "keypair", "cinder.volume": "volume", "cinder.snapshot": "volume_snapshot",
    "cinder.vtype": "volume_type", "cinder.qos_specs": "qos_specs",
    "keystone.project": "project", "keystone.user": "user", "keystone.group": "group",
    "keystone.role": "role", "keystone.domain": "domain", "keystone.region": "region",
    "keystone.service": "service", "octavia.loadbalancer": "loadbalancer",
    "octavia.listener": "listener", "octavia.pool": "pool",
}
BOOT_SOURCE_CONSTRAINTS = {"glance.image": "image", "nova.flavor": "flavor"}
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def _form_problem(name, value):
    """Why ``value`` is not of the form constraint ``name`` wants, or None."""
    try:
        if name == "ip_addr":
            ipaddress.ip_address(value)
        elif name in ("net_cidr", "cidr"):
            ipaddress.ip_network(value, strict=False)
        elif name == "mac_addr" and not _MAC.match(value):
            return f"{value} is not a valid MAC address"
    except ValueError as error:
        return str(error)
    return None


def _problem(cloud, name, value):
    if name in OBJECT_CONSTRAINTS:
        cloud.object_find(OBJECT_CONSTRAINTS[name], value)
    elif name in BOOT_SOURCE_CONSTRAINTS:
        cloud.find_boot_source(BOOT_SOURCE_CONSTRAINTS[name], value)
    else:
        return _form_problem(name, value)
    return None


def check_custom_constraints(params, cloud, *, only=None):
    """Raise StackValidationFailed (400) naming the first parameter whose value fails a
    custom constraint; ``params``: a stack's typed Parameters, ``only``: the names to
    check (default all)."""
    for pname, schema in params.schemas.items():
        names = [c.spec for c in schema.constraints if c.kind == "custom_constraint"]
        if not names or pname not in params.values or (only is not None and pname not in only):
            continue
        value = params.values[pname]
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, str) or not item:
                continue
            for name in names:
                try:
                    problem = _problem(cloud, name, item)
                except CloudError as error:
                    problem = str(error)
                if problem:
                    raise StackValidationFailed(
                        f"Parameter '{pname}' is invalid: Error validating value '{item}': "
                        f"{problem}")
