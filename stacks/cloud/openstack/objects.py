"""Generic objects of the OpenStack driver: each kind is an openstacksdk resource class.

``OS_KINDS`` maps a kind (``stacks.cloud.kinds``) to its proxy
(``network``, ``compute``, ``identity``) and sdk class; create, get, update
and delete go through the proxy's own generic ``_create``/``_get``/
``_update``/``_delete`` with the fields as the kinds name them (the sdk
takes its attribute names and the service's names alike). A kind that is
an action on other objects (a router interface, a role assignment) or
needs more than one call (a flavor's extra specs) has ``_os_<verb>_<kind>``
methods in the service's module of this package (``network``, ``identity``, ...).

Neutron objects carry their ``creation_key`` as the tag
``heatweb-key:<key>`` and a create first looks for it; other services have
no tags on every kind, so their creates are not found again after a crash.
"""
import importlib
import threading
from dataclasses import dataclass

from stacks.cloud.driver import CloudError, CloudNotFound, CreatedId
from stacks.cloud.kinds import kind_of, resolve_refs
from stacks.cloud.openstack.calls import call, gone, is_id

TAG_PREFIX = "heatweb-key:"
# Kinds whose POST takes ``tags`` where Neutron has this extension (ML2's extension driver
# ``tag_ports_during_bulk_creation``): their creation key then costs no second request.
TAGS_IN_POST = {"port": "tag-ports-during-bulk-creation"}
_tags_in_post_known = {}  # (network endpoint, extension alias) -> bool
# One asks: a batch's first ports are made by ten threads at once, and each asking
# Neutron would cost up to ten requests where one is needed.
_tags_in_post_asking = threading.Lock()


@dataclass(frozen=True)
class OsKind:
    proxy: str
    sdk_class: str  # under ``openstack.``
    tags: bool = False  # Neutron tags (the creation key)
    wire_names: bool = True  # get answers the service's names (else the sdk's)
    parent: str | None = None  # a URI field: the id is "<parent id>/<own id>"

    def cls(self):
        module, name = self.sdk_class.rsplit(".", 1)
        return getattr(importlib.import_module(f"openstack.{module}"), name)


def _net(path, *, tags=True, parent=None):
    return OsKind("network", f"network.v2.{path}", tags=tags, parent=parent)


OS_KINDS = {
    "network": _net("network.Network"),
    "subnet": _net("subnet.Subnet"),
    "port": _net("port.Port"),
    "security_group": _net("security_group.SecurityGroup"),
    "security_group_rule": _net("security_group_rule.SecurityGroupRule", tags=False),
    "router": _net("router.Router"),
    "floating_ip": _net("floating_ip.FloatingIP"),
    "trunk": _net("trunk.Trunk"),
    "subnetpool": _net("subnet_pool.SubnetPool"),
    "address_scope": _net("address_scope.AddressScope", tags=False),
    "qos_policy": _net("qos_policy.QoSPolicy"),
    "qos_bandwidth_limit_rule": _net("qos_bandwidth_limit_rule.QoSBandwidthLimitRule",
                                     tags=False, parent="qos_policy_id"),
    "qos_dscp_marking_rule": _net("qos_dscp_marking_rule.QoSDSCPMarkingRule", tags=False,
                                  parent="qos_policy_id"),
    "qos_minimum_bandwidth_rule": _net("qos_minimum_bandwidth_rule.QoSMinimumBandwidthRule",
                                       tags=False, parent="qos_policy_id"),
    "flavor": OsKind("compute", "compute.v2.flavor.Flavor", wire_names=False),
    "keypair": OsKind("compute", "compute.v2.keypair.Keypair", wire_names=False),
    "server_group": OsKind("compute", "compute.v2.server_group.ServerGroup", wire_names=False),
    "aggregate": OsKind("compute", "compute.v2.aggregate.Aggregate", wire_names=False),
    "quota": OsKind("compute", "compute.v2.quota_set.QuotaSet", wire_names=False),
    "volume": OsKind("block_storage", "block_storage.v3.volume.Volume"),
    "volume_snapshot": OsKind("block_storage", "block_storage.v3.snapshot.Snapshot"),
    "volume_backup": OsKind("block_storage", "block_storage.v3.backup.Backup"),
    "volume_type": OsKind("block_storage", "block_storage.v3.type.Type"),
    "volume_type_encryption": OsKind("block_storage", "block_storage.v3.type.TypeEncryption",
                                     parent="volume_type_id"),
    "qos_specs": OsKind("block_storage", "block_storage.v3.qos_spec.QoSSpec"),
    "loadbalancer": OsKind("load_balancer", "load_balancer.v2.load_balancer.LoadBalancer"),
    "listener": OsKind("load_balancer", "load_balancer.v2.listener.Listener"),
    "pool": OsKind("load_balancer", "load_balancer.v2.pool.Pool"),
    "member": OsKind("load_balancer", "load_balancer.v2.member.Member", parent="pool_id"),
    "health_monitor": OsKind("load_balancer", "load_balancer.v2.health_monitor.HealthMonitor"),
    "l7policy": OsKind("load_balancer", "load_balancer.v2.l7_policy.L7Policy"),
    "l7rule": OsKind("load_balancer", "load_balancer.v2.l7_rule.L7Rule", parent="l7policy_id"),
    "lb_flavor_profile": OsKind("load_balancer",
                                "load_balancer.v2.flavor_profile.FlavorProfile"),
    "lb_flavor": OsKind("load_balancer", "load_balancer.v2.flavor.Flavor"),
    # Designate's zones (found by name for a recordset's zone; their calls are ``dns``'s)
    "dns_zone": OsKind("dns", "dns.v2.zone.Zone"),
    **{kind: OsKind("identity", f"identity.v3.{kind}.{kind.title()}")
       for kind in ("project", "user", "group", "role", "domain", "region", "service",
                    "endpoint")},
}
# Kinds that are actions on other objects: only their _os_<verb>_<kind> methods.
# Neutron's field names -> the sdk's query names, for object_search
SDK_QUERY_NAMES = {"router:external": "is_router_external"}
ACTION_KINDS = ("router_interface", "floating_ip_association", "role_assignment",
                "group_membership", "qos_association", "volume_attachment", "container",
                "secret", "order", "secret_container", "alarm", "queue",
                "queue_subscription", "dns_recordset", "workflow", "workflow_execution",
                "cron_trigger")


class ObjectCalls:
    """Mixin of ``OpenStackCloud``: the ``object_*`` methods through openstacksdk."""

    def _os_kind(self, kind):
        kind_of(kind)
        if kind not in OS_KINDS:
            raise CloudError(f"Unknown cloud object kind {kind}")
        entry = OS_KINDS[kind]
        return entry, getattr(self.conn, entry.proxy), entry.cls()

    def _lookup_id(self, kind, name_or_id):
        """The id of the ``kind`` named (or with id) ``name_or_id``: Heat takes either."""
        if is_id(name_or_id):
            return name_or_id
        _, proxy, cls = self._os_kind(kind)
        items = call(lambda: list(proxy._list(cls, name=name_or_id)))
        if len(items) > 1 and kind == "security_group":
            # An admin sees every project's groups (each has its "default"): the
            # project's own one, if only one of them is (as Heat's get_secgroup_uuids)
            own = [item for item in items if item.project_id == self.conn.current_project_id]
            items = own if len(own) == 1 else items
        if len(items) > 1:
            raise CloudError(f"More than one {kind_of(kind).label.lower()} named "
                             f"{name_or_id} (HTTP 409)")
        if items:
            return items[0].id
        if gone(proxy._get, cls, name_or_id) is not None:  # an id that is not a UUID
            return name_or_id
        raise CloudNotFound(f"No {kind_of(kind).label.lower()} found for {name_or_id} "
                            f"(HTTP 404)")

    def object_find(self, kind, name_or_id):
        """As ``_lookup_id``, and an id is looked at too (Heat's custom constraints GET it):
        one the caller cannot see is not found."""
        spec = kind_of(kind)
        entry, proxy, cls = self._os_kind(kind)
        if not is_id(name_or_id) or entry.parent:
            return self._lookup_id(kind, name_or_id)
        if gone(proxy._get, cls, name_or_id) is None:
            raise CloudNotFound(f"No {spec.label.lower()} found for {name_or_id} (HTTP 404)")
        return name_or_id

    def object_search(self, kind, **fields):
        _, proxy, cls = self._os_kind(kind)
        query = {SDK_QUERY_NAMES.get(k, k): v for k, v in fields.items()}
        return [found.id for found in call(lambda: list(proxy._list(cls, **query)))]

    def _custom(self, verb, kind):
        return getattr(self, f"_os_{verb}_{kind}", None)

    @staticmethod
    def _split(entry, object_id):
        """(URI fields, own id) of an object id (``<parent>/<id>`` for a parent's child)."""
        if entry.parent:
            parent, _, own = str(object_id).partition("/")
            return {entry.parent: parent}, own
        return {}, object_id

    def object_create(self, kind, *, project_id, name, creation_key=None, find_first=True,
                      **fields):
        values = resolve_refs(kind, {k: v for k, v in fields.items() if v is not None},
                              self._lookup_id)
        custom = self._custom("create", kind)
        if custom is not None:
            return custom(name=name, fields=values, creation_key=creation_key,
                          find_first=find_first)
        return self._generic_create(kind, name=name, fields=values,
                                    creation_key=creation_key, find_first=find_first)

    def _generic_create(self, kind, *, name, fields, creation_key, find_first):
        """The sdk class's create, fields resolved (found again by its tag when it has one)."""
        values = dict(fields)
        entry, proxy, cls = self._os_kind(kind)
        if creation_key and find_first and entry.tags:
            found = call(lambda: list(proxy._list(cls, tags=f"{TAG_PREFIX}{creation_key}")))
            if found:
                return found[0].id
        if name:
            values["name"] = name
        tag_after = bool(creation_key and entry.tags)
        if tag_after and self._tags_in_post(kind):
            values["tags"] = [f"{TAG_PREFIX}{creation_key}"]
            tag_after = False
        created = call(proxy._create, cls, **values)
        if tag_after:  # a Neutron that takes no tags in this kind's POST: tagged right after
            call(proxy.set_tags, created, [f"{TAG_PREFIX}{creation_key}"])
        if entry.parent:
            return f"{values[entry.parent]}/{created.id}"
        # The create's answer is the object as a GET gives it (the tags as just set): the
        # plugin's attributes come from it, not from a GET right after (a port: one
        # Neutron request fewer per port).
        described = None if self._custom("get", kind) is not None else \
            self._as_dict(entry, created)
        return CreatedId(created.id, described)

    def _tags_in_post(self, kind):
        """Whether this Neutron takes the tags in a ``kind``'s POST (its extension
        ``TAGS_IN_POST[kind]``, asked once per endpoint and process): one request a port."""
        extension = TAGS_IN_POST.get(kind)
        if extension is None:
            return False
        key = (self.conn.network.get_endpoint(), extension)
        if key not in _tags_in_post_known:
            with _tags_in_post_asking:
                if key not in _tags_in_post_known:
                    _tags_in_post_known[key] = \
                        call(self.conn.network.find_extension, extension) is not None
        return _tags_in_post_known[key]

    def object_get(self, kind, object_id):
        custom = self._custom("get", kind)
        if custom is not None:
            return custom(object_id)
        entry, proxy, cls = self._os_kind(kind)
        uri, own = self._split(entry, object_id)
        found = gone(proxy._get, cls, own, **uri)
        return None if found is None else self._as_dict(entry, found)

    @staticmethod
    def _as_dict(entry, found):
        out = found.to_dict(headers=False, computed=False, original_names=entry.wire_names)
        out.pop("location", None)
        return out

    def object_update(self, kind, object_id, **fields):
        fields = resolve_refs(kind, fields, self._lookup_id)
        custom = self._custom("update", kind)
        if custom is not None:
            return custom(object_id, fields)
        return self._generic_update(kind, object_id, fields)

    def _generic_update(self, kind, object_id, fields):
        entry, proxy, cls = self._os_kind(kind)
        uri, own = self._split(entry, object_id)
        if fields:
            call(proxy._update, cls, own, **uri, **fields)
        return None

    def object_delete(self, kind, object_id):
        custom = self._custom("delete", kind)
        if custom is not None:
            return custom(object_id)
        entry, proxy, cls = self._os_kind(kind)
        uri, own = self._split(entry, object_id)
        gone(proxy._delete, cls, own, ignore_missing=True, **uri)
        return kind_of(kind).service == "network"  # Neutron deletes before it answers
