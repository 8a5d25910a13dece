"""Nova in the simulated cloud: servers as ``SimServer`` rows, and Nova's generic kinds.

Servers build for ``HEATWEB["SIM_BOOT_SECONDS"]`` before they are ACTIVE
(and take ``SIM_DELETE_SECONDS``, ``SIM_SUSPEND_SECONDS``,
``SIM_RESUME_SECONDS`` to be gone, suspended, resumed; all 0 by default; a
create call answers ``SIM_CREATE_SECONDS`` after the server exists); a
locked server refuses delete/suspend/resume/reboot/rebuild. Flavors take
Nova's defaults and an id of their own choice; a key pair is known by its
name.
"""
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.models import SimImage, SimServer
from stacks.cloud.simulated.block_storage import volumes_attached
from stacks.cloud.simulated.objects import live
from stacks.cloud.simulated.task_reads import NETWORKS_READ, task_read


# A server in a transitional status reaches the target status at ``ready_at``.
_SETTLES_TO = {"BUILD": "ACTIVE", "SUSPENDING": "SUSPENDED", "RESUMING": "ACTIVE",
               "DELETING": "DELETED"}


def _servers():
    """The servers not deleted, without their ``user_data`` (no call shows it; a server's
    is kilobytes of MIME, read again for every call and every listed server before)."""
    return SimServer.objects.filter(deleted_at__isnull=True).defer("user_data")


def _settle(rows, target):
    if target == "DELETED":
        return rows.update(status="DELETED", deleted_at=timezone.now())
    return rows.update(status=target)


class SimulatedNova:
    """Mixin of ``SimulatedCloud``: servers, and the Nova kinds' hooks."""

    def _server(self, server_id, operation=None):
        server = _servers().filter(pk=server_id).first()
        if server is None:
            raise CloudNotFound(f"Instance {server_id} could not be found.")
        if operation:
            self._fault(operation, server.project_id)
        return server

    @staticmethod
    def _refuse_if_locked(server, operation):
        if server.locked:
            raise CloudError(f"Instance {server.id} is locked: {operation} is not allowed "
                             f"(HTTP 409)")

    def server_create(self, *, project_id, name, image, flavor, metadata=None, user_data=None,
                      networks=None, key_name=None, creation_key=None, find_first=True,
                      block_devices=None, options=None, security_groups=None):
        if creation_key and find_first:
            made = SimServer.objects.filter(creation_key=creation_key, project_id=project_id,
                                            deleted_at__isnull=True).exclude(status="ERROR") \
                .values_list("pk", flat=True)
            if made:
                return made[0]
        self._fault("server_create", project_id)
        self.block_devices_check(block_devices or [])
        boot = settings.HEATWEB.get("SIM_BOOT_SECONDS", 0)
        server_id = uuid.uuid4().hex
        nics = self._attach(project_id, networks or self._network_of_project(project_id),
                            server_id=server_id)
        # An address of 10.0.0.0/8 taken from the id (a real cloud's DHCP
        # would hand out the next free one).
        host = int(server_id[:6], 16)
        server = SimServer.objects.create(
            id=server_id, project_id=project_id, name=name, image=image, flavor=flavor,
            metadata=metadata or {}, user_data=user_data or "", networks=nics,
            options=options or {}, creation_key=creation_key or "",
            address=nics[0]["addr"] if nics and nics[0]["addr"] else
            f"10.{host >> 16}.{host >> 8 & 255}.{max(2, host & 255) % 255}",
            ready_at=timezone.now() + timedelta(seconds=boot))
        self.block_devices_create(server.id, block_devices or [], project_id=project_id)
        latency = settings.HEATWEB.get("SIM_CREATE_SECONDS", 0)
        if latency:
            # A real cloud has made the server before its answer arrives: a caller
            # that dies in between leaves a server it does not know the id of.
            time.sleep(latency)
        return server.id

    def find_boot_source(self, kind, name_or_id):
        """A simulated server boots on any image or flavor name: each is known."""
        return name_or_id

    @staticmethod
    def _network_of_project(project_id):
        """Nova's choice for a server given no networks: the one network available to the
        project (its own unshared networks and the shared ones), as ``networks``.

        External networks do not count (on a cloud they belong to the operator's
        project). Where Nova refuses the boot ("Multiple possible networks found",
        NetworkAmbiguous), or has no network to give, the simulated server boots without
        a port, with an address of its own. Read once per engine task (``task_reads``;
        a network made, changed or deleted by the task reads it again).
        """
        by_project = task_read(NETWORKS_READ, dict)
        if project_id not in by_project:
            rows = live("network").filter(Q(project_id=project_id) | Q(fields__shared=True))
            by_project[project_id] = [row.pk for row in rows.only("pk", "fields")
                                      if not row.fields.get("router:external")]
        found = by_project[project_id]
        return [{"network": found[0]}] if len(found) == 1 else []

    def _attach(self, project_id, networks, *, server_id):
        """Each of Heat's ``networks`` entries as ``{network, addr, port, auto}``.

        A network (not a port) gets a port made for the server, as Nova does;
        it goes with the server. A port given is bound to the server (its
        ``device_id``); one bound to another live server is refused, as Nova
        refuses it.
        """
        nics = []
        for entry in networks:
            port_id, auto = entry.get("port"), False
            if port_id:
                self._port_bind(self._resolve("port", port_id), server_id)
            else:
                network = entry.get("network") or entry.get("uuid")
                fixed = {"ip_address": entry["fixed_ip"]} if entry.get("fixed_ip") else {}
                if entry.get("subnet"):  # Heat's internal port on that subnet
                    subnet = self._resolve("subnet", entry["subnet"])
                    network = network or subnet.fields.get("network_id")
                    fixed["subnet_id"] = subnet.pk
                if not network:
                    continue
                fixed = [fixed] if fixed else None
                port_id = self.object_create(
                    "port", project_id=project_id, name="", network_id=network,
                    fixed_ips=fixed, device_owner="compute:nova", device_id=server_id)
                auto = True
            network_name, address = self.port_address(port_id)
            nics.append({"network": network_name, "addr": address, "port": port_id,
                         "auto": auto})
        return nics

    def server_get(self, server_id):
        server = _servers().filter(pk=server_id).first()
        if server is None:
            return None
        return self._describe(server, self._status(server), volumes_attached([server.pk]))

    @staticmethod
    def _describe(server, status, volumes):
        """Nova's view of ``server``; ``volumes``: ``volumes_attached`` of it (and others)."""
        addresses = {}
        for nic in server.networks or []:
            if isinstance(nic, dict) and nic.get("addr"):
                addresses.setdefault(nic["network"], []).append(
                    {"addr": nic["addr"], "version": 4, "port": nic.get("port")})
        return {"id": server.id, "name": server.name, "image": server.image,
                "flavor": server.flavor, "status": status,
                "locked": server.locked, "locked_reason": server.locked_reason or None,
                "metadata": server.metadata,
                "addresses": addresses or {"private": [{"addr": server.address, "version": 4}]},
                "fault": (server.fault or None) if status == "ERROR" else None,
                "networks": server.networks, "created": server.created_at.isoformat(),
                "tags": list((server.options or {}).get("tags") or []),
                "config_drive": "True" if (server.options or {}).get("config_drive") else "",
                "volumes_attached": volumes.get(server.pk, []),
                "availability_zone": "nova"}

    @staticmethod
    def _status(server):
        """The status now: a transition whose time has come (``ready_at``) is applied."""
        target = _SETTLES_TO.get(server.status)
        if target and timezone.now() >= server.ready_at:
            _settle(SimServer.objects.filter(pk=server.pk, status=server.status), target)
            server.status = target
        return server.status

    def server_status(self, server_id):
        server = _servers().filter(pk=server_id).first()
        return "DELETED" if server is None else self._status(server)

    def server_list(self, server_ids):
        """One list query for many servers; transitions that are due are applied in bulk."""
        rows = list(_servers().filter(pk__in=list(server_ids)))
        now = timezone.now()
        due = {}
        for server in rows:
            if server.status in _SETTLES_TO and now >= server.ready_at:
                due.setdefault(server.status, set()).add(server.pk)
        for status, due_ids in due.items():
            _settle(SimServer.objects.filter(pk__in=due_ids, status=status), _SETTLES_TO[status])
        statuses = {server.pk: _SETTLES_TO[server.status]
                    if server.pk in due.get(server.status, ()) else server.status
                    for server in rows}
        shown = [server for server in rows if statuses[server.pk] != "DELETED"]
        volumes = volumes_attached([server.pk for server in shown])
        return {server.pk: self._describe(server, statuses[server.pk], volumes)
                for server in shown}

    @staticmethod
    def _transition(server, pending, seconds_setting):
        """Start a transition that completes after the configured seconds (at once when 0)."""
        seconds = settings.HEATWEB.get(seconds_setting, 0)
        ready_at = timezone.now() + timedelta(seconds=seconds)
        rows = SimServer.objects.filter(pk=server.pk)
        if seconds:
            rows.update(status=pending, ready_at=ready_at)
        else:
            _settle(rows, _SETTLES_TO[pending])

    def server_update(self, server_id, *, creation_key=None, **fields):
        server = self._server(server_id, "server_update")
        if "flavor" in fields:
            self._refuse_if_locked(server, "resize")
        allowed = {k: v for k, v in fields.items() if k in ("name", "flavor", "metadata")}
        changed = {k: fields[k] for k in ("tags", "admin_pass") if k in fields}
        if changed:
            allowed["options"] = {**(server.options or {}), **changed}
        SimServer.objects.filter(pk=server.pk).update(**allowed)

    def server_delete(self, server_id, *, internal_ports=None):
        # Its ports made for subnet entries are its nics marked ``auto``: internal_ports
        # (the OpenStack driver's) has nothing to add.
        server = _servers().filter(pk=server_id).first()
        if server is None:
            return  # already gone: deleting is idempotent
        self._fault("server_delete", server.project_id)
        self._refuse_if_locked(server, "delete")
        self.volumes_release(server.pk)
        for nic in server.networks or []:
            if isinstance(nic, dict) and nic.get("auto"):
                self.object_delete("port", nic["port"])
            elif isinstance(nic, dict) and nic.get("port"):
                self._port_unbind(nic["port"], server.pk)
        if server.status != "DELETING":
            self._transition(server, "DELETING", "SIM_DELETE_SECONDS")

    def _transition_at_once(self, server_id, *, status, pending, seconds_setting):
        """A transition of a server in ``status`` (not deleted, not locked) in one UPDATE,
        where no injected fault can fail the call; False: the call goes the long way
        (another status, a transition that is due first, a lock, a fault), which reads
        the server and answers what a failing call answers."""
        if self._faults_possible():
            return False
        seconds = settings.HEATWEB.get(seconds_setting, 0)
        rows = SimServer.objects.filter(pk=server_id, deleted_at__isnull=True, locked=False,
                                        status=status)
        if seconds:
            return bool(rows.update(status=pending,
                                    ready_at=timezone.now() + timedelta(seconds=seconds)))
        return bool(rows.update(status=_SETTLES_TO[pending]))

    def server_suspend(self, server_id):
        if self._transition_at_once(server_id, status="ACTIVE", pending="SUSPENDING",
                                    seconds_setting="SIM_SUSPEND_SECONDS"):
            return
        server = self._server(server_id, "server_suspend")
        self._refuse_if_locked(server, "suspend")
        if self._status(server) not in ("ACTIVE", "SUSPENDED"):
            raise CloudError(f"Cannot suspend instance {server_id} while it is {server.status}")
        if server.status == "ACTIVE":
            self._transition(server, "SUSPENDING", "SIM_SUSPEND_SECONDS")

    def server_resume(self, server_id):
        if self._transition_at_once(server_id, status="SUSPENDED", pending="RESUMING",
                                    seconds_setting="SIM_RESUME_SECONDS"):
            return
        server = self._server(server_id, "server_resume")
        self._refuse_if_locked(server, "resume")
        if self._status(server) not in ("ACTIVE", "SUSPENDED"):
            raise CloudError(f"Cannot resume instance {server_id} while it is {server.status}")
        if server.status == "SUSPENDED":
            self._transition(server, "RESUMING", "SIM_RESUME_SECONDS")

    def server_reboot(self, server_id):
        server = self._server(server_id, "server_reboot")
        self._refuse_if_locked(server, "reboot")

    def server_rebuild(self, server_id, image):
        server = self._server(server_id, "server_rebuild")
        self._refuse_if_locked(server, "rebuild")
        SimServer.objects.filter(pk=server.pk).update(image=image)

    def server_image_create(self, server_id, *, name):
        """A generic image of the server (the simulated cloud keeps no disk): active at once."""
        server = self._server(server_id, "server_image_create")
        self._refuse_if_locked(server, "createImage")
        return SimImage.objects.create(project_id=server.project_id, name=name,
                                       location=f"simulated://server/{server.pk}",
                                       tags=["snapshot"]).id

    def server_lock(self, server_id, reason=None):
        server = self._server(server_id, "server_lock")
        SimServer.objects.filter(pk=server.pk).update(locked=True, locked_reason=reason or "")

    def server_unlock(self, server_id):
        server = self._server(server_id, "server_unlock")
        SimServer.objects.filter(pk=server.pk).update(locked=False, locked_reason="")

    def server_port_detach(self, server_id, port_id):
        server = _servers().filter(pk=server_id).first()
        if server is not None:
            nics = [nic for nic in server.networks or [] if isinstance(nic, dict)]
            SimServer.objects.filter(pk=server.pk).update(
                networks=[nic for nic in nics if nic.get("port") != port_id])
            if any(nic.get("port") == port_id and nic.get("auto") for nic in nics):
                self.object_delete("port", port_id)  # made for the server: goes with it
                return
        self._port_unbind(port_id, server_id)

    def server_interfaces(self, server_id):
        server = _servers().filter(pk=server_id).first()
        out = []
        for nic in (server.networks or []) if server else []:
            port = self.object_get("port", nic["port"]) if isinstance(nic, dict) else None
            if port is not None:
                ips = port.get("fixed_ips") or []
                out.append({"port": port["id"], "network": port.get("network_id"),
                            "subnets": [ip["subnet_id"] for ip in ips],
                            "fixed_ips": [ip["ip_address"] for ip in ips]})
        return out

    def server_interface_attach(self, server_id, entry, *, security_groups=None):
        server = self._server(server_id, "server_interface_attach")
        nics = self._attach(server.project_id, [entry], server_id=server.pk)
        SimServer.objects.filter(pk=server.pk).update(networks=[*(server.networks or []), *nics])

    def _port_bind(self, port, server_id):
        holder = port.fields.get("device_id")
        if holder and holder != server_id and SimServer.objects.filter(
                pk=holder, deleted_at__isnull=True).exclude(status="DELETED").exists():
            raise CloudError(f"Port {port.pk} is still in use. (HTTP 409)")
        self.object_update("port", port.pk, device_id=server_id,
                                   device_owner="compute:nova")

    def _port_unbind(self, port_id, server_id):
        port = self.object_get("port", port_id)
        if port is not None and port.get("device_id") == server_id:
            self.object_update("port", port_id, device_id="", device_owner="")

    def server_confirm_resize(self, server_id):
        """Nothing to confirm: a simulated resize is done at once."""

    def server_set_error(self, server_id, fault):
        """Put the server in ERROR with ``fault`` as its message (what Nova does on a failed build)."""
        SimServer.objects.filter(pk=server_id).update(status="ERROR", fault=fault)

    # Nova's kinds -----------------------------------------------------------------------------

    def _complete_flavor(self, fields, project_id):
        flavor_id = str(fields.pop("id", "") or uuid.uuid4())
        if live("flavor", pk=flavor_id).exists():
            raise CloudError(f"Flavor with ID {flavor_id} already exists. (HTTP 409)")
        return {"disk": 0, "swap": 0, "ephemeral": 0, "rxtx_factor": 1.0, "is_public": True,
                "extra_specs": {}, "tenants": [], "description": None, **fields,
                "id": flavor_id}

    def _complete_keypair(self, fields, project_id):
        name_taken = live("keypair", pk=fields.get("name")).exists()
        if name_taken:
            raise CloudError(f"Key pair '{fields.get('name')}' already exists. (HTTP 409)")
        return {"type": "ssh", **fields, "id": fields.get("name")}

    def _complete_server_group(self, fields, project_id):
        return {"policies": ["anti-affinity"], "members": [], "metadata": {}, **fields}

    def _complete_aggregate(self, fields, project_id):
        return {"hosts": [], "metadata": {}, "availability_zone": None, **fields}
