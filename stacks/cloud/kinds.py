"""The kinds of generic cloud objects both drivers keep, declared once.

A kind is a service's object type (``router``, ``flavor``, ``project`` ...)
whose fields carry the service's own names (Neutron's ``network_id``, Nova's
``ram``, Keystone's ``domain_id``). The driver methods ``object_create``,
``object_get``, ``object_update`` and ``object_delete`` take any of them;
what a kind declares here is shared by both drivers: its service (a
missing one is named in errors), the label in messages, whether names are
unique, and which fields name other objects (``refs``: a name given there
is looked up and replaced by the id, as Heat's ``neutron``/``keystone``
constraints do).

A ``refs`` path is a field (``network_id``), a list of names
(``security_groups[]``), a key in each map of a list (``fixed_ips[].subnet_id``)
or a key of a map (``external_gateway_info.network_id``).
"""
from dataclasses import dataclass, field

from stacks.cloud.driver import CloudError


@dataclass(frozen=True)
class Kind:
    name: str
    service: str  # the catalog's service type: network, compute, identity
    label: str
    refs: dict = field(default_factory=dict)  # field path -> kind it names
    unique_name: bool = False  # a second live object of that name is refused (409)


def _kinds(*kinds):
    return {kind.name: kind for kind in kinds}


KINDS = _kinds(
    # Neutron
    Kind("network", "network", "Network", refs={"qos_policy_id": "qos_policy"}),
    Kind("subnet", "network", "Subnet", refs={"network_id": "network",
                                              "subnetpool_id": "subnetpool"}),
    Kind("port", "network", "Port", refs={"network_id": "network",
                                          "fixed_ips[].subnet_id": "subnet",
                                          "security_groups[]": "security_group",
                                          "qos_policy_id": "qos_policy"}),
    Kind("security_group", "network", "Security group"),
    Kind("security_group_rule", "network", "Security group rule",
         refs={"security_group_id": "security_group", "remote_group_id": "security_group"}),
    Kind("router", "network", "Router",
         refs={"external_gateway_info.network_id": "network",
               "external_gateway_info.external_fixed_ips[].subnet_id": "subnet"}),
    Kind("router_interface", "network", "Router interface",
         refs={"router_id": "router", "subnet_id": "subnet", "port_id": "port"}),
    Kind("floating_ip", "network", "Floating IP",
         refs={"floating_network_id": "network", "port_id": "port", "subnet_id": "subnet"}),
    Kind("floating_ip_association", "network", "Floating IP association",
         refs={"floatingip_id": "floating_ip", "port_id": "port"}),
    Kind("trunk", "network", "Trunk", refs={"port_id": "port",
                                            "sub_ports[].port_id": "port"}),
    Kind("subnetpool", "network", "Subnet pool", refs={"address_scope_id": "address_scope"}),
    Kind("address_scope", "network", "Address scope"),
    Kind("qos_policy", "network", "QoS policy"),
    Kind("qos_bandwidth_limit_rule", "network", "QoS bandwidth limit rule",
         refs={"qos_policy_id": "qos_policy"}),
    Kind("qos_dscp_marking_rule", "network", "QoS DSCP marking rule",
         refs={"qos_policy_id": "qos_policy"}),
    Kind("qos_minimum_bandwidth_rule", "network", "QoS minimum bandwidth rule",
         refs={"qos_policy_id": "qos_policy"}),
    # Nova
    Kind("flavor", "compute", "Flavor", unique_name=True, refs={"tenants[]": "project"}),
    Kind("keypair", "compute", "Key pair", unique_name=True),
    Kind("server_group", "compute", "Server group"),
    Kind("aggregate", "compute", "Aggregate", unique_name=True),
    Kind("quota", "compute", "Quota", refs={"project": "project"}),
    # Cinder
    Kind("volume", "block-storage", "Volume",
         refs={"snapshot_id": "volume_snapshot", "source_volid": "volume",
               "backup_id": "volume_backup"}),
    Kind("volume_snapshot", "block-storage", "Snapshot", refs={"volume_id": "volume"}),
    Kind("volume_backup", "block-storage", "Backup", refs={"volume_id": "volume"}),
    Kind("volume_type", "block-storage", "Volume type", unique_name=True),
    Kind("volume_type_encryption", "block-storage", "Volume type encryption",
         refs={"volume_type_id": "volume_type"}),
    Kind("qos_specs", "block-storage", "QoS specs", unique_name=True),
    Kind("volume_quota", "block-storage", "Quota", refs={"project": "project"}),
    Kind("qos_association", "block-storage", "QoS association",
         refs={"qos_specs_id": "qos_specs", "volume_type_id": "volume_type"}),
    # A volume attached to a server through Nova (id "<server id>/<volume id>")
    Kind("volume_attachment", "compute", "Volume attachment", refs={"volume_id": "volume"}),
    # Swift (the id is the container's name)
    Kind("container", "object-store", "Container", unique_name=True),
    Kind("swift_object", "object-store", "Object"),  # the simulated Swift's objects
    # Barbican (ids are Barbican's hrefs, as Heat's physical ids)
    Kind("secret", "key-manager", "Secret"),
    Kind("order", "key-manager", "Order"),
    Kind("secret_container", "key-manager", "Container"),
    # Aodh (alarms of every type: ``type`` and its ``<type>_rule`` are fields)
    Kind("alarm", "alarming", "Alarm"),
    # Designate (a recordset's ``name`` is its fully qualified name)
    Kind("dns_zone", "dns", "Zone"),
    Kind("dns_recordset", "dns", "RecordSet", refs={"zone_id": "dns_zone"}),
    # Zaqar (a queue's id is its name; a subscription's "<queue>/<subscription id>")
    Kind("queue", "messaging", "Queue"),
    Kind("queue_subscription", "messaging", "Subscription"),
    Kind("queue_message", "messaging", "Message"),  # the simulated Zaqar's messages
    # Mistral (a workflow's and a cron trigger's id is its name, as Heat's physical id;
    # an execution's its UUID)
    Kind("workflow", "workflowv2", "Workflow", unique_name=True),
    Kind("cron_trigger", "workflowv2", "Cron trigger", unique_name=True),
    Kind("workflow_execution", "workflowv2", "Execution"),
    # Octavia (members and L7 rules: "<pool id>/<member id>", "<policy id>/<rule id>")
    Kind("loadbalancer", "load-balancer", "Load balancer",
         refs={"vip_subnet_id": "subnet", "vip_network_id": "network"}),
    Kind("listener", "load-balancer", "Listener", refs={"loadbalancer_id": "loadbalancer",
                                                         "default_pool_id": "pool"}),
    Kind("pool", "load-balancer", "Pool", refs={"loadbalancer_id": "loadbalancer",
                                                 "listener_id": "listener"}),
    Kind("member", "load-balancer", "Member", refs={"pool_id": "pool", "subnet_id": "subnet"}),
    Kind("health_monitor", "load-balancer", "Health monitor", refs={"pool_id": "pool"}),
    Kind("l7policy", "load-balancer", "L7 policy", refs={"listener_id": "listener",
                                                         "redirect_pool_id": "pool"}),
    Kind("l7rule", "load-balancer", "L7 rule", refs={"l7policy_id": "l7policy"}),
    Kind("lb_flavor_profile", "load-balancer", "Flavor profile"),
    Kind("lb_flavor", "load-balancer", "Flavor",
         refs={"flavor_profile_id": "lb_flavor_profile"}),
    Kind("lb_quota", "load-balancer", "Quota", refs={"project": "project"}),
    # Keystone
    Kind("project", "identity", "Project", unique_name=True,
         refs={"domain_id": "domain", "parent_id": "project"}),
    Kind("user", "identity", "User", unique_name=True,
         refs={"domain_id": "domain", "default_project_id": "project"}),
    Kind("group", "identity", "Group", unique_name=True, refs={"domain_id": "domain"}),
    Kind("role", "identity", "Role", unique_name=True, refs={"domain_id": "domain"}),
    Kind("role_assignment", "identity", "Role assignment",
         refs={"user": "user", "group": "group", "role": "role", "project": "project",
               "domain": "domain"}),
    Kind("group_membership", "identity", "Group membership",
         refs={"user": "user", "group": "group"}),
    Kind("domain", "identity", "Domain", unique_name=True),
    Kind("region", "identity", "Region"),
    Kind("service", "identity", "Service"),
    Kind("endpoint", "identity", "Endpoint", refs={"service_id": "service",
                                                  "region_id": "region"}),
)


def kind_of(name):
    """The declared kind ``name``; CloudError for one no driver keeps."""
    try:
        return KINDS[name]
    except KeyError:
        raise CloudError(f"Unknown cloud object kind {name}") from None


def resolve_refs(kind, fields, lookup):
    """``fields`` with each name in the kind's ``refs`` replaced by ``lookup(kind, name)``."""
    out = dict(fields)
    for path, target in kind_of(kind).refs.items():
        _resolve_path(out, path, lambda value, target=target: lookup(target, value))
    return out


def _resolve_path(container, path, look):
    head, _, rest = path.partition(".")
    if head.endswith("[]"):
        key = head[:-2]
        items = container.get(key)
        if not isinstance(items, list):
            return
        if rest:
            container[key] = [_resolved_map(item, rest, look) for item in items]
        else:
            container[key] = [look(item) if item else item for item in items]
        return
    value = container.get(head)
    if rest:
        if isinstance(value, dict):
            container[head] = _resolved_map(value, rest, look)
    elif value:
        container[head] = look(value)


def _resolved_map(item, rest, look):
    if not isinstance(item, dict):
        return item
    item = dict(item)
    _resolve_path(item, rest, look)
    return item
