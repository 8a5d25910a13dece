"""Kinds of the OpenStack driver that are more than one sdk resource's CRUD.

A security group's ``rules`` replace its rules; a router interface is the
router's ``add_router_interface`` (its id: the interface's port); a floating
IP association is the floating IP's ``port_id``; a role assignment is
Keystone's ``PUT /{projects|domains}/{id}/{users|groups}/{id}/roles/{role}``
(its id: ``<target kind>:<id>:<actor kind>:<id>:<role>``); a flavor's extra
specs and project access, a quota set of Nova, Cinder or Octavia (its id:
the project's) and an aggregate's hosts and metadata are calls of their own.
"""
from functools import partialmethod

from stacks.cloud.driver import CloudError, CloudNotFound

ROUTER_INTERFACE = "network:router_interface"


def _call(*args, **kwargs):
    from stacks.cloud.openstack import call  # cycle: that module imports the mixins

    return call(*args, **kwargs)


def _gone(*args, **kwargs):
    from stacks.cloud.openstack import _gone as gone

    return gone(*args, **kwargs)


class ActionCalls:
    """Mixin of ``OpenStackCloud``: ``_os_<verb>_<kind>`` methods for ``ObjectCalls``."""

    # Security groups: their rules ---------------------------------------------------------

    def _os_create_security_group(self, *, name, fields, creation_key, find_first):
        rules = fields.pop("rules", None)
        group_id = self._generic_create("security_group", name=name, fields=fields,
                                        creation_key=creation_key, find_first=find_first)
        if rules is not None:
            self._replace_rules(group_id, rules)
        return group_id

    def _replace_rules(self, group_id, rules):
        """Heat's way: the group's rules become exactly ``rules`` (egress defaults too)."""
        net = self.conn.network
        group = _call(net.get_security_group, group_id)
        for rule in group.security_group_rules or []:
            _gone(net.delete_security_group_rule, rule["id"], ignore_missing=True)
        for rule in rules:
            _call(net.create_security_group_rule, security_group_id=group_id,
                  **{"direction": "ingress", "ethertype": "IPv4",
                     **{k: v for k, v in rule.items() if v is not None}})

    def _os_update_security_group(self, object_id, fields):
        rules = fields.pop("rules", None)
        if fields:
            _call(self.conn.network.update_security_group, object_id, **fields)
        if rules is not None:
            self._replace_rules(object_id, rules)

    def _os_update_trunk(self, trunk_id, fields):
        """Sub-ports are added and removed by Neutron's own calls, not a PUT; one whose
        segmentation changed is removed, then added again (as Heat)."""
        if "sub_ports" in fields:
            net = self.conn.network
            wanted = {sub["port_id"]: sub for sub in fields.pop("sub_ports") or []}
            current = {sub["port_id"]: sub for sub in
                       _call(net.get_trunk, trunk_id).sub_ports or []}

            def same(port_id):
                return port_id in wanted and port_id in current and all(
                    str(wanted[port_id].get(key)) == str(current[port_id].get(key))
                    for key in ("segmentation_type", "segmentation_id"))

            gone = [{"port_id": p} for p in current if not same(p)]
            if gone:
                _call(net.delete_trunk_subports, trunk_id, gone)
            added = [sub for p, sub in wanted.items() if not same(p)]
            if added:
                _call(net.add_trunk_subports, trunk_id, added)
        if fields:
            self._generic_update("trunk", trunk_id, fields)

    # Routers' extra routes --------------------------------------------------------------------

    def router_routes_change(self, router_id, *, add=(), remove=()):
        """With ``extraroute-atomic``, Neutron's own add and remove calls (as Heat's
        ExtraRouteSet): a route another resource adds to the router meanwhile is kept."""
        if not self.has_network_extension("extraroute-atomic"):
            return super().router_routes_change(router_id, add=add, remove=remove)
        net = self.conn.network
        if remove:
            _call(net.remove_extra_routes_from_router, router_id,
                  body={"router": {"routes": list(remove)}})
        if add:
            _call(net.add_extra_routes_to_router, router_id, body={"router": {"routes": list(add)}})
        return None

    # Router interfaces and floating IP associations ------------------------------------------

    def _os_create_router_interface(self, *, name, fields, creation_key, find_first):
        answer = _call(self.conn.network.add_interface_to_router, fields["router_id"],
                       subnet=fields.get("subnet_id"), port=fields.get("port_id"))
        return answer["port_id"]

    def _os_get_router_interface(self, port_id):
        port = _gone(self.conn.network.get_port, port_id)
        if port is None or not (port.device_owner or "").startswith(ROUTER_INTERFACE):
            return None
        ips = port.fixed_ips or []
        return {"id": port.id, "port_id": port.id, "router_id": port.device_id,
                "subnet_id": ips[0]["subnet_id"] if ips else None}

    def _os_delete_router_interface(self, port_id):
        interface = self._os_get_router_interface(port_id)
        if interface is not None:
            try:
                _call(self.conn.network.remove_interface_from_router, interface["router_id"],
                      port=port_id)
            except CloudNotFound:
                pass

    def _os_create_floating_ip_association(self, *, name, fields, creation_key, find_first):
        _call(self.conn.network.update_ip, fields["floatingip_id"], port_id=fields["port_id"],
              **({"fixed_ip_address": fields["fixed_ip_address"]}
                 if fields.get("fixed_ip_address") else {}))
        return fields["floatingip_id"]

    def _os_get_floating_ip_association(self, fip_id):
        fip = _gone(self.conn.network.get_ip, fip_id)
        if fip is None or not fip.port_id:
            return None
        return {"id": fip.id, "floatingip_id": fip.id, "port_id": fip.port_id,
                "fixed_ip_address": fip.fixed_ip_address}

    def _os_update_floating_ip_association(self, fip_id, fields):
        _call(self.conn.network.update_ip, fip_id, **fields)

    def _os_delete_floating_ip_association(self, fip_id):
        if _gone(self.conn.network.get_ip, fip_id) is not None:
            _call(self.conn.network.update_ip, fip_id, port_id=None)

    # Role assignments ------------------------------------------------------------------------

    @staticmethod
    def _assignment_parts(fields):
        actor = "user" if fields.get("user") else "group"
        target = "project" if fields.get("project") else "domain"
        if not fields.get(actor) or not fields.get(target) or not fields.get("role"):
            raise CloudError("A role assignment names a role, a user or group, and a project "
                             "or domain (HTTP 400)")
        return target, fields[target], actor, fields[actor], fields["role"]

    def _assignment_call(self, verb, parts):
        target, target_id, actor, actor_id, role = parts
        method = {"assign": f"assign_{target}_role_to_{actor}",
                  "unassign": f"unassign_{target}_role_from_{actor}",
                  "validate": f"validate_{actor}_has_{target}_role"}[verb]
        return _call(getattr(self.conn.identity, method), target_id, actor_id, role)

    def _os_create_role_assignment(self, *, name, fields, creation_key, find_first):
        parts = self._assignment_parts(fields)
        self._assignment_call("assign", parts)
        return ":".join(parts)

    def _os_get_role_assignment(self, object_id):
        parts = tuple(str(object_id).split(":"))
        if len(parts) != 5 or not self._assignment_call("validate", parts):
            return None
        target, target_id, actor, actor_id, role = parts
        return {"id": object_id, target: target_id, actor: actor_id, "role": role}

    def _os_delete_role_assignment(self, object_id):
        parts = tuple(str(object_id).split(":"))
        if len(parts) == 5:
            try:
                self._assignment_call("unassign", parts)
            except CloudNotFound:
                pass

    def _os_create_group_membership(self, *, name, fields, creation_key, find_first):
        _call(self.conn.identity.add_user_to_group, fields["user"], fields["group"])
        return f"{fields['group']}:{fields['user']}"

    def _os_get_group_membership(self, object_id):
        group, _, user = str(object_id).partition(":")
        if not _call(self.conn.identity.check_user_in_group, user, group):
            return None
        return {"id": object_id, "group": group, "user": user}

    def _os_delete_group_membership(self, object_id):
        group, _, user = str(object_id).partition(":")
        try:
            _call(self.conn.identity.remove_user_from_group, user, group)
        except CloudNotFound:
            pass

    # Flavors, quotas, aggregates -------------------------------------------------------------

    def _os_create_flavor(self, *, name, fields, creation_key, find_first):
        extra_specs = fields.pop("extra_specs", None)
        tenants = fields.pop("tenants", None)
        compute = self.conn.compute
        flavor = _call(compute.create_flavor, name=name, **fields)
        if extra_specs:
            _call(compute.create_flavor_extra_specs, flavor, {
                k: str(v) for k, v in extra_specs.items()})
        for tenant in tenants or []:
            _call(compute.flavor_add_tenant_access, flavor, tenant)
        return flavor.id

    def _os_get_flavor(self, flavor_id):
        compute = self.conn.compute
        flavor = _gone(compute.get_flavor, flavor_id)
        if flavor is None:
            return None
        out = flavor.to_dict(headers=False, computed=False)
        out.pop("location", None)
        out["extra_specs"] = dict(_call(compute.fetch_flavor_extra_specs, flavor).extra_specs
                                  or {})
        out["tenants"] = [] if flavor.is_public else [
            a["tenant_id"] for a in _call(compute.get_flavor_access, flavor)]
        return out

    def _os_update_flavor(self, flavor_id, fields):
        compute = self.conn.compute
        current = self._os_get_flavor(flavor_id)
        if current is None:
            raise CloudNotFound(f"Flavor {flavor_id} could not be found. (HTTP 404)")
        if "extra_specs" in fields:
            wanted = {k: str(v) for k, v in (fields.pop("extra_specs") or {}).items()}
            for key in set(current["extra_specs"]) - set(wanted):
                _call(compute.delete_flavor_extra_specs_property, flavor_id, key)
            if wanted:
                _call(compute.create_flavor_extra_specs, flavor_id, wanted)
        if "tenants" in fields:
            wanted = set(fields.pop("tenants") or [])
            for tenant in wanted - set(current["tenants"]):
                _call(compute.flavor_add_tenant_access, flavor_id, tenant)
            for tenant in set(current["tenants"]) - wanted:
                _call(compute.flavor_remove_tenant_access, flavor_id, tenant)
        if fields:
            _call(compute.update_flavor, flavor_id, **fields)

    def _quota_calls(self, kind):
        """(update, get, revert) of the quota kind's service, each taking the project."""
        proxy, update, get, revert = QUOTA_CALLS[kind]
        proxy = getattr(self.conn, proxy)
        return getattr(proxy, update), getattr(proxy, get), getattr(proxy, revert)

    def _quota_create(self, kind, *, name, fields, creation_key, find_first):
        project = fields.pop("project")
        _call(self._quota_calls(kind)[0], project, **fields)
        return project

    def _quota_get(self, kind, project):
        quota = _gone(self._quota_calls(kind)[1], project)
        if quota is None:
            return None
        out = quota.to_dict(headers=False, computed=False)
        out.pop("location", None)
        return {**out, "id": project}

    def _quota_update(self, kind, project, fields):
        fields.pop("project", None)
        _call(self._quota_calls(kind)[0], project, **fields)

    def _quota_delete(self, kind, project):
        _gone(self._quota_calls(kind)[2], project)

    def _os_create_aggregate(self, *, name, fields, creation_key, find_first):
        hosts, metadata = fields.pop("hosts", None), fields.pop("metadata", None)
        aggregate = _call(self.conn.compute.create_aggregate, name=name, **fields)
        self._aggregate_members(aggregate.id, hosts or [], metadata or {})
        return aggregate.id

    def _aggregate_members(self, aggregate_id, hosts, metadata, current=None):
        compute = self.conn.compute
        current = current or {"hosts": [], "metadata": {}}
        for host in set(hosts) - set(current["hosts"] or []):
            _call(compute.add_host_to_aggregate, aggregate_id, host)
        for host in set(current["hosts"] or []) - set(hosts):
            _call(compute.remove_host_from_aggregate, aggregate_id, host)
        cleared = {k: None for k in (current["metadata"] or {}) if k not in metadata}
        if metadata or cleared:
            _call(compute.set_aggregate_metadata, aggregate_id, {**cleared, **metadata})

    def _os_update_aggregate(self, aggregate_id, fields):
        current = self.object_get("aggregate", aggregate_id) or {}
        hosts = fields.pop("hosts", current.get("hosts") or [])
        metadata = fields.pop("metadata", current.get("metadata") or {})
        if fields:
            _call(self.conn.compute.update_aggregate, aggregate_id, **fields)
        self._aggregate_members(aggregate_id, hosts or [], metadata or {}, current)

    def _os_delete_aggregate(self, aggregate_id):
        current = self.object_get("aggregate", aggregate_id)
        if current is None:
            return
        for host in current.get("hosts") or []:
            _call(self.conn.compute.remove_host_from_aggregate, aggregate_id, host)
        _gone(self.conn.compute.delete_aggregate, aggregate_id, ignore_missing=True)


# A project's quota set of each service: (proxy, update, get, revert to the defaults).
QUOTA_CALLS = {
    "quota": ("compute", "update_quota_set", "get_quota_set", "revert_quota_set"),
    "volume_quota": ("block_storage", "update_quota_set", "get_quota_set", "revert_quota_set"),
    "lb_quota": ("load_balancer", "update_quota", "get_quota", "delete_quota"),
}
for _kind in QUOTA_CALLS:
    for _verb in ("create", "get", "update", "delete"):
        setattr(ActionCalls, f"_os_{_verb}_{_kind}",
                partialmethod(getattr(ActionCalls, f"_quota_{_verb}"), _kind))
