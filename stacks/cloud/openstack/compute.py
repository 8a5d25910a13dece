"""Nova on a real cloud: servers, flavors and host aggregates.

A server is created with its creation key in its metadata (``KEY_PROPERTY``)
and a create first looks for it; its networks entries become Nova's (an
entry naming a subnet gets a port of ours made on it: Heat's internal port,
deleted with the server); its attributes come from one Nova read and one
Neutron list of its ports. A flavor's extra specs and project access and an
aggregate's hosts and metadata are Nova's calls of their own
(``_os_<verb>_<kind>`` methods for ``ObjectCalls``).
"""
import base64
import re
import time

from django.conf import settings
from openstack.compute.v2.server import Server

from stacks.cloud.driver import NETWORK_IDS, CloudError, CloudNotFound, nova_metadata
from stacks.cloud.openstack.calls import KEY_PROPERTY, call, gone, is_id

# The description of a port heatweb makes for a server's networks entry naming a subnet
# (Nova takes no subnet): Heat's internal port, deleted with the server.
INTERNAL_PORT = "heatweb: port of a server's networks entry, deleted with the server"
GONE_SERVER = ("DELETED", "SOFT_DELETED")
# Servers whose ports one Neutron list asks for (``device_id=a&device_id=b...``: ~50
# characters of query each, within any server's URL limit).
PORTS_PER_LIST = 100
# Server create options (``driver.SERVER_OPTIONS``) named otherwise by openstacksdk.
SDK_SERVER_FIELDS = {"admin_pass": "admin_password"}


class ComputeCalls:
    """Mixin of ``OpenStackCloud``: Nova's servers, flavors and aggregates."""

    def _find_server_by_key(self, name, creation_key):
        for server in call(self.conn.compute.servers, details=True,
                           name=f"^{re.escape(name)}$"):
            if (server.metadata or {}).get(KEY_PROPERTY) != creation_key:
                continue
            if server.status == "ERROR":
                # The create this key belongs to failed in the cloud: clear
                # it away and build again.
                gone(self.conn.compute.delete_server, server, ignore_missing=True)
                continue
            if server.status not in GONE_SERVER and server.task_state != "deleting":
                return server
        return None

    def _server_networks(self, networks, *, security_groups=None, made=None):
        """Nova's networks of Heat's entries; an entry naming a subnet gets a port made on it
        (its id appended to ``made``)."""
        if not networks:
            return self._default_networks()
        out = []
        for entry in networks:
            if entry.get("port"):  # an id goes to Nova as it is (Nova refuses a wrong one)
                out.append({"port": entry["port"] if is_id(entry["port"]) else call(
                    self.conn.network.find_port, entry["port"], ignore_missing=False).id})
            elif entry.get("subnet"):
                port = self._internal_port(entry, security_groups)
                made.append(port)
                out.append({"port": port})
            else:
                nic = {"uuid": self._network_id(entry)} if entry.get("network") or \
                    entry.get("uuid") else {}
                if entry.get("fixed_ip"):
                    nic["fixed_ip"] = entry["fixed_ip"]
                out.append(nic)
        return out

    def _default_networks(self):
        """Nova's network for a server given none (Heat leaves it to Nova's default): the
        one network the project has or shares. With none, or several (where Nova would
        refuse: "Multiple possible networks found"), the server boots without a network,
        as heatweb always did: no auto-allocated topology in a cloud without routers."""
        project_id = self.conn.current_project_id
        visible = [net for net in call(lambda: list(self.conn.network.networks()))
                   if net.is_shared or (net.project_id == project_id
                                        and not net.is_router_external)]
        return [{"uuid": visible[0].id}] if len(visible) == 1 else "none"

    def _network_id(self, entry):
        """A network given by id is looked at once a ``LOOKUP_SECONDS`` (a group's servers
        share theirs); a name is looked up each time (a network of that name may have been
        made again meanwhile)."""
        value = entry.get("network") or entry.get("uuid")
        if is_id(value):
            return self._looked_up(self.conn.network.find_network, value)
        return call(self.conn.network.find_network, value, ignore_missing=False).id

    def _internal_port(self, entry, security_groups):
        subnet = call(self.conn.network.find_subnet, entry["subnet"], ignore_missing=False)
        fixed = {"subnet_id": subnet.id, **({"ip_address": entry["fixed_ip"]}
                                            if entry.get("fixed_ip") else {})}
        fields = {"network_id": subnet.network_id, "fixed_ips": [fixed],
                  "description": INTERNAL_PORT}
        if security_groups:
            fields["security_group_ids"] = [
                call(self.conn.network.find_security_group, group, ignore_missing=False).id
                for group in security_groups]
        return call(self.conn.network.create_port, **fields).id

    def _delete_internal_ports(self, port_ids):
        for port_id in port_ids:
            gone(self.conn.network.delete_port, port_id, ignore_missing=True)

    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True,
                      block_devices=None, options=None, security_groups=None):
        if creation_key and find_first:
            found = self._find_server_by_key(name, creation_key)
            if found is not None:
                return found.id
        made = []
        fields = {"name": name, "networks": self._server_networks(
                      networks, security_groups=security_groups, made=made),
                  "metadata": {**nova_metadata(metadata),
                               **({KEY_PROPERTY: creation_key} if creation_key else {})}}
        if key_name:
            fields["key_name"] = key_name
        for option, value in (options or {}).items():
            if value is not None:
                fields[SDK_SERVER_FIELDS.get(option, option)] = value
        if security_groups:  # Nova puts them on the ports it makes (names or ids)
            fields["security_groups"] = [{"name": group} for group in security_groups]
        if user_data:
            fields["user_data"] = base64.b64encode(user_data.encode()).decode()
        finders = {"flavor_id": (self.conn.compute.find_flavor, flavor)}
        if image:
            finders["image_id"] = (self.conn.image.find_image, image)
        if block_devices:
            fields["block_device_mapping"] = self._block_devices(block_devices)
        try:
            return self._create_server(fields, finders)
        except CloudError:
            self._delete_internal_ports(made)
            raise

    def _create_server(self, fields, finders):
        try:
            return call(self.conn.compute.create_server, **fields, **{
                field: self._looked_up(*finder) for field, finder in finders.items()}).id
        except CloudError as error:
            # An id looked up a while ago may be stale (an image replaced under its
            # name): Nova refuses it ("Image ... could not be found"); look again once.
            stale = [(f.__name__, n) for f, n in finders.values()]
            if not ("image" in str(error).lower() or "flavor" in str(error).lower()) or \
                    not any(key in self._ids for key in stale):
                raise
            for key in stale:
                self._ids.pop(key, None)
            return call(self.conn.compute.create_server, **fields, **{
                field: self._looked_up(*finder) for field, finder in finders.items()}).id

    def _block_devices(self, devices):
        """Nova's mapping v2 with image names replaced by ids (volumes and snapshots by id)."""
        out = []
        for entry in devices:
            entry = {k: v for k, v in entry.items() if v is not None}
            if entry.get("source_type") == "image" and entry.get("uuid"):
                entry["uuid"] = self._looked_up(self.conn.image.find_image, entry["uuid"])
            out.append(entry)
        return out

    def _ports_by_address(self, server_ids):
        """``{(server id, ip, mac): port id}`` of the servers' ports: Heat's ``port`` in each
        of a server's ``addresses`` (one Neutron list per PORTS_PER_LIST servers, filtered
        by their ids: not every port the project has)."""
        server_ids = list(server_ids)
        ports = [port for start in range(0, len(server_ids), PORTS_PER_LIST)
                 for port in call(lambda ids=server_ids[start:start + PORTS_PER_LIST]:
                                  list(self.conn.network.ports(
                                      device_id=ids[0] if len(ids) == 1 else ids)))]
        return {(port.device_id, ip["ip_address"], port.mac_address): (port.id, port.network_id)
                for port in ports if port.device_id in server_ids
                for ip in port.fixed_ips or []}

    @staticmethod
    def _port_of(server, addr, ports):
        return ports.get((server.id, addr.get("addr"), addr.get("OS-EXT-IPS-MAC:mac_addr")),
                         (None, None))

    @classmethod
    def _addresses(cls, server, ports):
        return {net: [{**addr, "port": cls._port_of(server, addr, ports)[0]} for addr in addrs]
                for net, addrs in (server.addresses or {}).items()}

    @classmethod
    def _network_ids(cls, server, ports):
        """``{network name: id}`` of the server's addresses, from their ports (the plugin's
        ``networks`` attribute keys each network by its id too, without looking it up)."""
        ids = {}
        for net, addrs in (server.addresses or {}).items():
            found = {cls._port_of(server, addr, ports)[1] for addr in addrs} - {None}
            if len(found) == 1:
                ids[net] = found.pop()
        return ids

    @classmethod
    def _server_dict(cls, server, ports):
        flavor = server.flavor or {}
        image = server.image or {}
        fault = server.fault or {}
        return {"id": server.id, "name": server.name, "status": server.status,
                "image": image.get("id") if isinstance(image, dict) else image,
                "flavor": flavor.get("original_name") or flavor.get("id"),
                # Our creation key is ours, not the user's metadata (nor drift).
                "metadata": {k: v for k, v in (server.metadata or {}).items()
                             if k != KEY_PROPERTY},
                "addresses": cls._addresses(server, ports),
                "locked": bool(server.is_locked), "locked_reason": server.locked_reason,
                "fault": (fault.get("message") or "").strip() or None if server.status == "ERROR" else None,
                "key_name": server.key_name, "task_state": server.task_state,
                "created": server.created_at, "tags": list(server.tags or []),
                "config_drive": "True" if server.has_config_drive else "",
                "volumes_attached": [dict(v) for v in server.attached_volumes or []],
                "availability_zone": server.availability_zone,
                NETWORK_IDS: cls._network_ids(server, ports)}

    def server_get(self, server_id):
        server = gone(self.conn.compute.get_server, server_id)
        if server is None or server.status in GONE_SERVER:
            return None
        return self._server_dict(server, self._ports_by_address([server.id]))

    def server_status(self, server_id):
        server = gone(self.conn.compute.get_server, server_id)
        return "DELETED" if server is None or server.status in GONE_SERVER else server.status

    def server_list(self, server_ids):
        """One list of the project's servers (Nova ``GET /servers/detail``) per call."""
        wanted = set(server_ids)
        if not wanted:
            return {}
        servers = [server for server in call(lambda: list(self.conn.compute.servers(details=True)))
                   if server.id in wanted and server.status not in GONE_SERVER]
        # A server still building is waited for again: its attributes (its addresses'
        # ports) are read when it is done, not on every round of the wait.
        settled = [server.id for server in servers if server.status != "BUILD"]
        ports = self._ports_by_address(settled) if settled else {}
        return {server.id: self._server_dict(server, ports) for server in servers}

    def server_update(self, server_id, *, creation_key=None, **fields):
        if creation_key and set(fields) == {"metadata"}:
            # Nova replaces the whole set (PUT), our key with it: no read of the server
            # first; a server gone is Nova's 404.
            wanted = {**nova_metadata(fields["metadata"] or {}), KEY_PROPERTY: creation_key}
            call(Server.new(id=server_id).replace_metadata, self.conn.compute, wanted)
            return
        server = self._existing_server(server_id)
        if "name" in fields:
            call(self.conn.compute.update_server, server, name=fields["name"])
        if "metadata" in fields:
            self._replace_metadata(server, fields["metadata"] or {})
        if "tags" in fields:
            call(server.set_tags, self.conn.compute, list(fields["tags"] or []))
        if fields.get("admin_pass"):
            call(self.conn.compute.change_server_password, server, fields["admin_pass"])
        if "flavor" in fields:
            flavor = call(self.conn.compute.find_flavor, fields["flavor"], ignore_missing=False)
            call(self.conn.compute.resize_server, server, flavor.id)

    def _replace_metadata(self, server, metadata):
        ours = {k: v for k, v in (server.metadata or {}).items() if k == KEY_PROPERTY}
        wanted = {**nova_metadata(metadata), **ours}
        stale = [k for k in (server.metadata or {}) if k not in wanted]
        if stale:
            call(self.conn.compute.delete_server_metadata, server, stale)
        call(self.conn.compute.set_server_metadata, server, **wanted)

    def server_confirm_resize(self, server_id):
        call(self.conn.compute.confirm_server_resize, server_id)

    def _existing_server(self, server_id):
        server = gone(self.conn.compute.get_server, server_id)
        if server is None:
            raise CloudNotFound(f"Instance {server_id} could not be found. (HTTP 404)")
        return server

    def server_delete(self, server_id, *, internal_ports=None):
        # Neutron refuses the owner the delete of a port bound to a server: detached
        # first (server_port_detach then deletes a port of ours).
        if internal_ports is None:
            internal_ports = self.internal_ports_by_server().get(server_id, [])
        for port_id in internal_ports:
            self.server_port_detach(server_id, port_id)
        gone(self.conn.compute.delete_server, server_id, ignore_missing=True)

    def internal_ports_by_server(self):
        ports = {}
        for port in call(lambda: list(self.conn.network.ports(description=INTERNAL_PORT))):
            if port.device_id:
                ports.setdefault(port.device_id, []).append(port.id)
        return ports

    def server_interfaces(self, server_id):
        return [{"port": port.id, "network": port.network_id,
                 "subnets": [ip["subnet_id"] for ip in port.fixed_ips or []],
                 "fixed_ips": [ip["ip_address"] for ip in port.fixed_ips or []]}
                for port in call(lambda: list(self.conn.network.ports(device_id=server_id)))]

    def server_interface_attach(self, server_id, entry, *, security_groups=None):
        server = self._existing_server(server_id)
        if entry.get("port"):
            fields = {"port_id": entry["port"]}
        elif entry.get("subnet"):
            fields = {"port_id": self._internal_port(entry, security_groups)}
        else:
            fields = {"net_id": self._network_id(entry), **(
                {"fixed_ips": [{"ip_address": entry["fixed_ip"]}]} if entry.get("fixed_ip")
                else {})}
        try:
            call(self.conn.compute.create_server_interface, server, **fields)
        except CloudError:
            if entry.get("subnet"):
                self._delete_internal_ports([fields["port_id"]])
            raise

    # The action goes to the id as it is (no read first): a server gone is Nova's 404.
    def server_suspend(self, server_id):
        call(self.conn.compute.suspend_server, server_id)

    def server_resume(self, server_id):
        call(self.conn.compute.resume_server, server_id)

    def server_reboot(self, server_id):
        call(self.conn.compute.reboot_server, self._existing_server(server_id), "SOFT")

    def server_image_create(self, server_id, *, name):
        """Nova's createImage: the image starts queued/saving in Glance, then goes active
        (the plugin waits on ``image_get``); the id comes from Nova's answer, so no Glance
        read races the new image."""
        server = self._existing_server(server_id)
        return call(server.create_image, self.conn.compute, name)

    def server_lock(self, server_id, reason=None):
        call(self.conn.compute.lock_server, self._existing_server(server_id),
             locked_reason=reason)

    def server_unlock(self, server_id):
        call(self.conn.compute.unlock_server, self._existing_server(server_id))

    def server_port_detach(self, server_id, port_id):
        port = gone(self.conn.network.get_port, port_id)
        if port is None or port.device_id != server_id:
            return  # gone, or not (any more) this server's
        if gone(self.conn.compute.get_server, server_id) is not None:
            try:
                call(self.conn.compute.delete_server_interface, port_id, server=server_id)
            except CloudNotFound:
                pass
        # Nova detaches asynchronously; as Heat does, wait (bounded) until Neutron
        # shows the port free, or its replacement's boot fails "port in use".
        deadline = time.monotonic() + settings.HEATWEB["PORT_DETACH_SECONDS"]
        while time.monotonic() < deadline:
            port = gone(self.conn.network.get_port, port_id)
            if port is None or not port.device_id:
                if port is not None and port.description == INTERNAL_PORT:
                    self._delete_internal_ports([port_id])
                return
            time.sleep(0.5)
        raise CloudError(f"Port {port_id} was not detached from server {server_id} within "
                         f"{settings.HEATWEB['PORT_DETACH_SECONDS']} s")

    # Flavors ---------------------------------------------------------------------------------

    def _os_create_flavor(self, *, name, fields, creation_key, find_first):
        extra_specs = fields.pop("extra_specs", None)
        tenants = fields.pop("tenants", None)
        compute = self.conn.compute
        flavor = call(compute.create_flavor, name=name, **fields)
        if extra_specs:
            call(compute.create_flavor_extra_specs, flavor, {
                k: str(v) for k, v in extra_specs.items()})
        for tenant in tenants or []:
            call(compute.flavor_add_tenant_access, flavor, tenant)
        return flavor.id

    def _os_get_flavor(self, flavor_id):
        compute = self.conn.compute
        flavor = gone(compute.get_flavor, flavor_id)
        if flavor is None:
            return None
        out = flavor.to_dict(headers=False, computed=False)
        out.pop("location", None)
        out["extra_specs"] = dict(call(compute.fetch_flavor_extra_specs, flavor).extra_specs
                                  or {})
        out["tenants"] = [] if flavor.is_public else [
            a["tenant_id"] for a in call(compute.get_flavor_access, flavor)]
        return out

    def _os_update_flavor(self, flavor_id, fields):
        compute = self.conn.compute
        current = self._os_get_flavor(flavor_id)
        if current is None:
            raise CloudNotFound(f"Flavor {flavor_id} could not be found. (HTTP 404)")
        if "extra_specs" in fields:
            wanted = {k: str(v) for k, v in (fields.pop("extra_specs") or {}).items()}
            for key in set(current["extra_specs"]) - set(wanted):
                call(compute.delete_flavor_extra_specs_property, flavor_id, key)
            if wanted:
                call(compute.create_flavor_extra_specs, flavor_id, wanted)
        if "tenants" in fields:
            wanted = set(fields.pop("tenants") or [])
            for tenant in wanted - set(current["tenants"]):
                call(compute.flavor_add_tenant_access, flavor_id, tenant)
            for tenant in set(current["tenants"]) - wanted:
                call(compute.flavor_remove_tenant_access, flavor_id, tenant)
        if fields:
            call(compute.update_flavor, flavor_id, **fields)

    # Aggregates ------------------------------------------------------------------------------

    def _os_create_aggregate(self, *, name, fields, creation_key, find_first):
        hosts, metadata = fields.pop("hosts", None), fields.pop("metadata", None)
        aggregate = call(self.conn.compute.create_aggregate, name=name, **fields)
        self._aggregate_members(aggregate.id, hosts or [], metadata or {})
        return aggregate.id

    def _aggregate_members(self, aggregate_id, hosts, metadata, current=None):
        compute = self.conn.compute
        current = current or {"hosts": [], "metadata": {}}
        for host in set(hosts) - set(current["hosts"] or []):
            call(compute.add_host_to_aggregate, aggregate_id, host)
        for host in set(current["hosts"] or []) - set(hosts):
            call(compute.remove_host_from_aggregate, aggregate_id, host)
        cleared = {k: None for k in (current["metadata"] or {}) if k not in metadata}
        if metadata or cleared:
            call(compute.set_aggregate_metadata, aggregate_id, {**cleared, **metadata})

    def _os_update_aggregate(self, aggregate_id, fields):
        current = self.object_get("aggregate", aggregate_id) or {}
        hosts = fields.pop("hosts", current.get("hosts") or [])
        metadata = fields.pop("metadata", current.get("metadata") or {})
        if fields:
            call(self.conn.compute.update_aggregate, aggregate_id, **fields)
        self._aggregate_members(aggregate_id, hosts or [], metadata or {}, current)

    def _os_delete_aggregate(self, aggregate_id):
        current = self.object_get("aggregate", aggregate_id)
        if current is None:
            return
        for host in current.get("hosts") or []:
            call(self.conn.compute.remove_host_from_aggregate, aggregate_id, host)
        gone(self.conn.compute.delete_aggregate, aggregate_id, ignore_missing=True)
