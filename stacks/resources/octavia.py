"""Octavia's types: ``OS::Octavia::LoadBalancer``, ``Listener``, ``Pool``, ``PoolMember``,
``HealthMonitor``, ``L7Policy``, ``L7Rule``, and the admin's ``Flavor``, ``FlavorProfile``
and ``Quota``, as Heat's.

Octavia works asynchronously and refuses changes to a load balancer while
one is in progress (409 "... is immutable"): as Heat, a create, update or
delete refused that way is tried again at the next poll, and each waits
until its object's ``provisioning_status`` is ACTIVE (ERROR fails it). On
this project's real cloud Octavia runs noop drivers: the VIP is not a
Neutron port and operating statuses stay OFFLINE. Types answer
ResourceTypeUnavailable on a cloud without Octavia in its catalog.
"""
from stacks.cloud.driver import CloudError
from stacks.resources.base import ResourceFailure
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, QuotaResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, JsonString, Range

OCTAVIA = ("octavia", "load-balancer")
PROTOCOLS = ("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "PROXYV2", "UDP", "SCTP")
PORT = (Range(1, 65535),)


def _busy(error):
    return "(HTTP 409)" in str(error) and ("immutable" in str(error) or "PENDING" in str(error))


class OctaviaResource(CloudObjectResource):
    required_service = OCTAVIA
    named = True

    def handle_create(self):
        return {"create": True}

    def _try(self, call, *args, **kwargs):
        """The call, or False when Octavia is busy with the load balancer (try again)."""
        try:
            call(*args, **kwargs)
            return True
        except CloudError as error:
            if _busy(error):
                return False
            raise ResourceFailure(str(error)) from None

    def _active(self):
        found = self.existing()
        status = found.get("provisioning_status")
        if status == "ERROR":
            raise ResourceFailure(f"{self.type_name.rsplit('::', 1)[-1]} {self.physical_id} "
                                  f"went to status ERROR")
        return status in (None, "ACTIVE")

    def check_create_complete(self, cookie):
        if not self.physical_id:
            try:
                super().handle_create()
            except ResourceFailure as error:
                if _busy(error):
                    return False
                raise
        return self._active()

    def handle_update(self, new_properties, changed):
        return {"props": new_properties, "changed": sorted(changed)}

    def check_update_complete(self, cookie):
        if cookie and "props" in cookie:
            try:
                super().handle_update(cookie["props"], set(cookie["changed"]))
            except ResourceFailure as error:
                if _busy(error):
                    return False
                raise
            cookie.pop("props")
        return self._active()

    def handle_delete(self):
        return {"delete": True}

    def check_delete_complete(self, cookie):
        if not self.physical_id:
            return True
        found = _cloud_call(self.cloud.object_get, self.kind, self.physical_id)
        if found is None:
            return True
        if found.get("provisioning_status") != "PENDING_DELETE":
            self._try(self.cloud.object_delete, self.kind, self.physical_id)
        return False


def _admin_state():
    return prop("Boolean", "The administrative state.", default=True, update_allowed=True)


@register
class LoadBalancer(OctaviaResource):
    """An Octavia load balancer: a VIP on a subnet (or network)."""

    type_name = "OS::Octavia::LoadBalancer"
    kind = "loadbalancer"
    properties_schema = {
        "name": prop("String", "Name of this Load Balancer.", update_allowed=True),
        "description": prop("String", "Description of this Load Balancer.", default="",
                            update_allowed=True),
        "admin_state_up": _admin_state(),
        "vip_subnet": prop("String", "The name or ID of the subnet on which to allocate the "
                           "VIP address."),
        "vip_network": prop("String", "The name or ID of the network on which to allocate "
                            "the VIP."),
        "vip_address": prop("String", "IP address for the VIP."),
        "provider": prop("String", "Provider for this Load Balancer."),
        "flavor": prop("String", "The name or ID of the flavor of the Load Balancer."),
        "availability_zone": prop("String", "The availability zone of the Load Balancer."),
        "tenant_id": prop("String", "The ID of the tenant who owns the Load Balancer."),
    }
    field_names = {"vip_subnet": "vip_subnet_id", "vip_network": "vip_network_id",
                   "flavor": "flavor_id", "tenant_id": "project_id"}
    attributes_schema = attributes(
        vip_address="The VIP address of the LoadBalancer.",
        vip_port_id="The VIP port of the LoadBalancer.",
        vip_subnet_id="The VIP subnet of the LoadBalancer.",
        pools="Pools this LoadBalancer is associated with.",
        listeners="Listeners associated with this LoadBalancer.",
        flavor_id="The flavor ID of the LoadBalancer.",
        availability_zone="The availability zone of the LoadBalancer.")

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        from heatweb.exceptions import StackValidationFailed

        props = super().validate_properties(raw, resource_name=resource_name)
        if "vip_subnet" not in raw and "vip_network" not in raw:
            raise StackValidationFailed("At least one of the following properties must be "
                                        "specified: vip_subnet, vip_network.")
        return props


@register
class Listener(OctaviaResource):
    """An Octavia listener: a protocol and port of a load balancer."""

    type_name = "OS::Octavia::Listener"
    kind = "listener"
    changes_objects = {"loadbalancer": "loadbalancer"}
    properties_schema = {
        "name": prop("String", "Name of this listener.", update_allowed=True),
        "description": prop("String", "Description of this listener.", default="",
                            update_allowed=True),
        "admin_state_up": _admin_state(),
        "loadbalancer": prop("String", "ID or name of the load balancer with which listener "
                             "is associated."),
        "default_pool": prop("String", "ID or name of the default pool for the listener.",
                             update_allowed=True),
        "protocol": prop("String", "Protocol on which to listen for the client traffic.",
                         required=True, constraints=(AllowedValues(PROTOCOLS),)),
        "protocol_port": prop("Integer", "TCP or UDP port on which to listen for client "
                              "traffic.", required=True, constraints=PORT),
        "connection_limit": prop("Integer", "The maximum number of connections permitted for "
                                 "this load balancer. Defaults to -1, which is infinite.",
                                 default=-1, update_allowed=True,
                                 constraints=(Range(-1, None),)),
        "default_tls_container_ref": prop("String", "Default TLS container reference to "
                                          "retrieve TLS information.", update_allowed=True),
        "sni_container_refs": prop("List", "A list of references to TLS secrets.",
                                   update_allowed=True),
        "allowed_cidrs": prop("List", "A list of IPv4, IPv6 or mix of both CIDRs.",
                              update_allowed=True),
        "tenant_id": prop("String", "The ID of the tenant who owns the listener."),
    }
    field_names = {"loadbalancer": "loadbalancer_id", "default_pool": "default_pool_id",
                   "tenant_id": "project_id"}
    attributes_schema = attributes(
        loadbalancers="ID of the load balancer this listener is associated to.",
        default_pool_id="ID of the default pool this listener is associated to.")


@register
class Pool(OctaviaResource):
    """An Octavia pool: the members a listener balances over."""

    type_name = "OS::Octavia::Pool"
    kind = "pool"
    changes_objects = {"listener": "listener", "loadbalancer": "loadbalancer"}
    properties_schema = {
        "name": prop("String", "Name of this pool.", update_allowed=True),
        "description": prop("String", "Description of this pool.", default="",
                            update_allowed=True),
        "admin_state_up": _admin_state(),
        "lb_algorithm": prop("String", "The algorithm used to distribute load between the "
                             "members of the pool.", required=True, update_allowed=True,
                             constraints=(AllowedValues(("ROUND_ROBIN", "LEAST_CONNECTIONS",
                                                         "SOURCE_IP", "SOURCE_IP_PORT")),)),
        "protocol": prop("String", "Protocol of the pool.", required=True,
                         constraints=(AllowedValues(PROTOCOLS),)),
        "listener": prop("String", "Listener name or ID to be associated with this pool."),
        "loadbalancer": prop("String", "Loadbalancer name or ID to be associated with this "
                             "pool."),
        "session_persistence": prop("Map", "Configuration of session persistence.",
                                    update_allowed=True),
        "tls_enabled": prop("Boolean", "Enable backend member re-encryption.", default=False,
                            update_allowed=True),
        "tenant_id": prop("String", "The ID of the tenant who owns the pool."),
    }
    field_names = {"listener": "listener_id", "loadbalancer": "loadbalancer_id",
                   "tenant_id": "project_id"}
    attributes_schema = attributes(
        healthmonitor_id="ID of the health monitor associated with this pool.",
        listeners="Listener associated with this pool.",
        members="Members associated with this pool.")


@register
class PoolMember(OctaviaResource):
    """A member of an Octavia pool: an address and port."""

    type_name = "OS::Octavia::PoolMember"
    kind = "member"
    changes_objects = {"pool": "pool"}
    properties_schema = {
        "pool": prop("String", "Name or ID of the load balancing pool.", required=True),
        "address": prop("String", "IP address of the pool member on the pool network.",
                        required=True),
        "protocol_port": prop("Integer", "Port on which the pool member listens for requests "
                              "or connections.", required=True, constraints=PORT),
        "weight": prop("Integer", "Weight of pool member in the pool (default to 1).",
                       default=1, update_allowed=True, constraints=(Range(0, 256),)),
        "admin_state_up": _admin_state(),
        "subnet": prop("String", "Subnet name or ID of this member."),
        "monitor_address": prop("String", "Alternate IP address which health monitor can use "
                                "for health check.", update_allowed=True),
        "monitor_port": prop("Integer", "Alternate Port which health monitor can use for "
                             "health check.", update_allowed=True, constraints=PORT),
        "backup": prop("Boolean", "Whether the member is a backup.", default=False,
                       update_allowed=True),
        "tenant_id": prop("String", "The ID of the tenant who owns the pool member."),
    }
    field_names = {"pool": "pool_id", "subnet": "subnet_id", "tenant_id": "project_id"}
    named = False
    attributes_schema = attributes(address="The IP address of the pool member.",
                                   pool_id="The ID of the pool to which the pool member "
                                           "belongs.")


@register
class HealthMonitor(OctaviaResource):
    """An Octavia health monitor of a pool's members."""

    type_name = "OS::Octavia::HealthMonitor"
    kind = "health_monitor"
    changes_objects = {"pool": "pool"}
    properties_schema = {
        "admin_state_up": _admin_state(),
        "delay": prop("Integer", "The minimum time in seconds between regular connections of "
                      "the member.", required=True, update_allowed=True,
                      constraints=(Range(0, None),)),
        "expected_codes": prop("String", "The HTTP status codes expected in response from the "
                               "member to declare it healthy.", update_allowed=True),
        "http_method": prop("String", "The HTTP method used for requests by the monitor of "
                            "type HTTP.", update_allowed=True),
        "max_retries": prop("Integer", "Number of permissible connection failures before "
                            "changing the member status to INACTIVE.", required=True,
                            update_allowed=True, constraints=(Range(1, 10),)),
        "max_retries_down": prop("Integer", "Number of allowed connection failures before "
                                 "changing the status of the member to ERROR.", default=3,
                                 update_allowed=True, constraints=(Range(1, 10),)),
        "pool": prop("String", "ID or name of the load balancing pool.", required=True),
        "timeout": prop("Integer", "Maximum number of seconds for a monitor to wait for a "
                        "connection to be established before it times out.", required=True,
                        update_allowed=True, constraints=(Range(0, None),)),
        "type": prop("String", "One of predefined health monitor types.", required=True,
                     constraints=(AllowedValues(("PING", "TCP", "HTTP", "HTTPS", "UDP-CONNECT",
                                                 "TLS-HELLO", "SCTP")),)),
        "url_path": prop("String", "The HTTP path used in the HTTP request used by the "
                         "monitor to test a member health.", update_allowed=True),
        "tenant_id": prop("String", "ID of the tenant who owns the health monitor."),
    }
    field_names = {"pool": "pool_id", "tenant_id": "project_id"}
    named = False
    attributes_schema = attributes(pools="The list of Pools related to this monitor.")


@register
class L7Policy(OctaviaResource):
    """An Octavia L7 policy of a listener: reject, or redirect to a pool or URL."""

    type_name = "OS::Octavia::L7Policy"
    kind = "l7policy"
    changes_objects = {"listener": "listener"}
    properties_schema = {
        "name": prop("String", "Name of the policy.", update_allowed=True),
        "description": prop("String", "Description of the policy.", update_allowed=True),
        "admin_state_up": _admin_state(),
        "action": prop("String", "Action type of the policy.", required=True,
                       update_allowed=True,
                       constraints=(AllowedValues(("REJECT", "REDIRECT_TO_POOL",
                                                   "REDIRECT_TO_URL")),)),
        "redirect_pool": prop("String", "ID or name of the pool for REDIRECT_TO_POOL action "
                              "type.", update_allowed=True),
        "redirect_url": prop("String", "URL for REDIRECT_TO_URL action type.",
                             update_allowed=True),
        "position": prop("Integer", "L7 policy position in ordered policies list.",
                         update_allowed=True, constraints=(Range(1, None),)),
        "listener": prop("String", "ID or name of the listener this policy belongs to.",
                         required=True),
    }
    field_names = {"listener": "listener_id", "redirect_pool": "redirect_pool_id"}
    attributes_schema = attributes(rules="L7Rules associated with this policy.")


@register
class L7Rule(OctaviaResource):
    """An Octavia L7 rule of a policy."""

    type_name = "OS::Octavia::L7Rule"
    kind = "l7rule"
    changes_objects = {"l7policy": "l7policy"}
    named = False
    properties_schema = {
        "admin_state_up": _admin_state(),
        "l7policy": prop("String", "ID or name of L7 policy this rule belongs to.",
                         required=True),
        "type": prop("String", "Rule type.", required=True, update_allowed=True,
                     constraints=(AllowedValues(("HOST_NAME", "FILE_TYPE", "HEADER", "PATH",
                                                 "COOKIE", "SSL_CONN_HAS_CERT",
                                                 "SSL_VERIFY_RESULT", "SSL_DN_FIELD")),)),
        "compare_type": prop("String", "Rule compare type.", required=True,
                             update_allowed=True,
                             constraints=(AllowedValues(("REGEX", "STARTS_WITH", "ENDS_WITH",
                                                         "CONTAINS", "EQUAL_TO")),)),
        "invert": prop("Boolean", "Invert the compare type.", default=False,
                       update_allowed=True),
        "key": prop("String", "Key to compare. Relevant for HEADER and COOKIE types only.",
                    update_allowed=True),
        "value": prop("String", "Value to compare.", required=True, update_allowed=True),
    }
    field_names = {"l7policy": "l7policy_id"}
    attributes_schema = attributes()


@register
class FlavorProfile(CloudObjectResource):
    """An Octavia flavor profile (admin only): a provider's flavor metadata; updates in place."""

    type_name = "OS::Octavia::FlavorProfile"
    kind = "lb_flavor_profile"
    required_service = OCTAVIA
    properties_schema = {
        "name": prop("String", "Name of this Flavor Profile.", update_allowed=True),
        "flavor_data": prop("String", "JSON string containing the flavor metadata.",
                            required=True, update_allowed=True, constraints=(JsonString(),)),
        "provider_name": prop("String", "Provider name of this Flavor Profile.",
                              update_allowed=True),
    }
    attributes_schema = attributes()


@register
class Flavor(CloudObjectResource):
    """An Octavia flavor (admin only) of a flavor profile; all but the profile update in
    place."""

    type_name = "OS::Octavia::Flavor"
    kind = "lb_flavor"
    required_service = OCTAVIA
    properties_schema = {
        "description": prop("String", "Description of this Flavor.", default="",
                            update_allowed=True),
        "enabled": prop("Boolean", "If the resource if available for use.", default=True,
                        update_allowed=True),
        "name": prop("String", "Name of this Flavor.", update_allowed=True),
        "flavor_profile": prop("String", "The ID or the name of the Flavor Profile.",
                               required=True),
    }
    field_names = {"flavor_profile": "flavor_profile_id"}
    attributes_schema = attributes(flavor_profile_id="The ID of the flavor profile.")


@register
class Quota(QuotaResource):
    """Octavia quotas of a project (admin only)."""

    type_name = "OS::Octavia::Quota"
    kind = "lb_quota"
    required_service = OCTAVIA
    limits = {"healthmonitor": "the number of healthmonitors",
              "listener": "the number of listeners", "loadbalancer": "the number of load "
              "balancers", "pool": "the number of pools", "member": "the number of members"}
    field_names = {"loadbalancer": "load_balancer", "healthmonitor": "health_monitor"}
