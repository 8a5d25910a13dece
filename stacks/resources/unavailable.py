"""Resource types of services this cloud lacks, and Heat's retired types.

Heat registers a type whether or not its service is deployed; validating a
template that uses one on a cloud without that service answers
``ResourceTypeUnavailable`` (``HEAT-E99001 Service mistral is not available
for resource type OS::Mistral::Workflow, reason: mistral workflowv2 endpoint
is not in service catalog.``), never "could not be found". heatweb knows
these types the same way: each is listed here with Heat's client name and
service type (or, for Neutron's VPNaaS, the extension it needs); none has an implementation yet, so when the catalog does have
the service the reason says heatweb does not implement the type.

Types Heat 27 keeps HIDDEN as placeholders (``HIDDEN_PLACEHOLDERS``): their
service or API was retired (Sahara, Senlin, Monasca, Vitrage, Neutron's LBaaS
v1 and v2, Designate's v1 domains and records, Magnum's bays) or the type was
removed (``OS::Heat::HARestarter``). Heat 27 registers each as its
``NoneResource`` with ``support_status`` HIDDEN and no client: any properties
validate, create makes nothing and completes, every attribute is null; the
type is neither listed nor described (``NotSupported``). heatweb does the same.
"""
import uuid
from functools import lru_cache

from heatweb.exceptions import NotSupported, ResourceTypeUnavailable
from stacks.resources import registry
from stacks.resources.heat_basic import NoneResource

# (Heat's client name, catalog service type) -> the types of that service
MISSING_SERVICES = {
    ("blazar", "reservation"): ("Host", "Lease"),
    ("ironic", "baremetal"): ("Port",),
    ("magnum", "container-infra"): ("BayModel", "Cluster", "ClusterTemplate"),
    ("manila", "sharev2"): ("SecurityService", "Share", "ShareNetwork", "ShareType"),
    ("octavia", "load-balancer"): ("AvailabilityZone", "AvailabilityZoneProfile"),
    ("trove", "database"): ("Cluster", "Instance"),
    ("zun", "container"): ("Container",),
}
# Neutron extensions whose types heatweb lacks: on a cloud without the extension Heat
# answers as for a missing service (its required_service_extension).
MISSING_EXTENSIONS = {
    "vpnaas": ("VPNService", "IKEPolicy", "IPsecPolicy", "IPsecSiteConnection"),
}
HIDDEN_PLACEHOLDERS = {
    "Sahara": ("Cluster", "ClusterTemplate", "DataSource", "ImageRegistry", "Job",
               "JobBinary", "NodeGroupTemplate"),
    "Senlin": ("Cluster", "Node", "Policy", "Profile", "Receiver"),
    "Monasca": ("AlarmDefinition", "Notification"),
    "Vitrage": ("Template",),
    "Heat": ("HARestarter",),
    # Heat's neutron/loadbalancer.py (LBaaS v1, hidden since 9.0.0) and
    # neutron/lbaas/*.py (LBaaS v2, hidden since 21.0.0).
    "Neutron": ("HealthMonitor", "Pool", "PoolMember", "LoadBalancer"),
    "Neutron::LBaaS": ("LoadBalancer", "Listener", "Pool", "PoolMember", "HealthMonitor",
                       "L7Policy", "L7Rule"),
    "Designate": ("Domain", "Record"),
    "Magnum": ("Bay",),
}


@lru_cache(maxsize=64)
def _in_catalog(service_type):
    from stacks.cloud import get_cloud_driver

    try:
        return bool(get_cloud_driver().has_service(service_type))
    except Exception:  # no catalog to ask: the service is not there
        return False


def _refusal(type_name, client, service_type):
    def refuse():
        reason = ("heatweb does not implement this resource type yet."
                  if _in_catalog(service_type) else
                  f"{client} {service_type} endpoint is not in service catalog.")
        raise ResourceTypeUnavailable(service_name=client, resource_type=type_name,
                                      reason=reason)
    return refuse


def _register_missing():
    for (client, service_type), names in MISSING_SERVICES.items():
        for name in names:
            type_name = f"OS::{client.title()}::{name}"
            registry.register_unavailable(type_name, _refusal(type_name, client, service_type))


def _extension_refusal(type_name, extension):
    def refuse():
        reason = ("heatweb does not implement this resource type yet."
                  if _has_extension(extension) else
                  f"Required extension {extension} in neutron service is not available.")
        raise ResourceTypeUnavailable(service_name="neutron", resource_type=type_name,
                                      reason=reason)
    return refuse


def _register_missing_extensions():
    for extension, names in MISSING_EXTENSIONS.items():
        for name in names:
            type_name = f"OS::Neutron::{name}"
            registry.register_unavailable(type_name, _extension_refusal(type_name, extension))


def check_extension(plugin, type_name):
    """Heat's answer for a type whose service is not in the catalog (``required_service``:
    Cinder, Swift, Barbican), or whose Neutron extension the cloud lacks (a router on a
    Neutron without the L3 plugin)."""
    service = getattr(plugin, "required_service", None)
    if service and not _in_catalog(service[1]):
        _refusal(type_name, *service)()
    extension = getattr(plugin, "required_extension", None)
    if extension and not _has_extension(extension):
        raise ResourceTypeUnavailable(
            service_name="neutron", resource_type=type_name,
            reason=f"Required extension {extension} in neutron service is not available.")


def _has_extension(extension):
    from stacks.cloud import get_cloud_driver

    try:
        return get_cloud_driver().has_network_extension(extension)
    except Exception:  # Neutron not answering now: the create will tell
        return True


def type_available(type_name):
    """False for a type this cloud cannot run: its service (``required_service``) is not
    in the catalog, or Neutron lacks its extension. Heat's ``is_service_available``:
    ``GET /resource_types`` leaves such a type out."""
    try:
        check_extension(registry.plugin_or_base(type_name), type_name)
    except ResourceTypeUnavailable:
        return False
    return True


def refuse_unavailable(type_name):
    """Heat's answer when a hidden or unavailable type is described (``GET /resource_types``)."""
    if registry.has_type(type_name):
        plugin = registry.plugin_or_base(type_name)
        if plugin.hidden:
            raise NotSupported(feature=type_name)
        check_extension(plugin, type_name)
    elif registry.is_unavailable(type_name):
        registry.get_plugin(type_name)  # raises ResourceTypeUnavailable


class HiddenPlaceholder(NoneResource):
    """Heat 27's hidden placeholder of a retired type: any properties are accepted,
    nothing is made, its reference is a new UUID (Heat's ``NoneResource.handle_create``)."""

    type_name = None
    hidden = True

    def handle_create(self):
        self.physical_id = self.physical_id or str(uuid.uuid4())


def _placeholder_type(project, name):
    return type(f"{project.replace('::', '')}{name}", (HiddenPlaceholder,), {
        "__doc__": f"Heat 27's hidden placeholder of a retired {project} type: any properties "
                   f"are accepted and nothing is made.",
        "type_name": f"OS::{project}::{name}"})


_register_missing()
_register_missing_extensions()
for _project, _names in HIDDEN_PLACEHOLDERS.items():
    for _name in _names:
        registry.register(_placeholder_type(_project, _name))
