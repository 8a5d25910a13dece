"""Test-only Nova virt driver: the fake driver, plus a real QEMU guest for one image.

The one-machine cloud's nova-compute runs this instead of ``fake.FakeDriver``
(its ``FakeDriverWithoutFakeNodes``: one node whose uuid survives a restart).
Every server stays FakeDriver's bookkeeping (state in a dict, claims, interfaces,
volumes), so the rest of the cloud behaves as before; only a server booted from
the image named ``[heatweb_guest] image_name`` (``heatweb-guest``, registered by
scripts/cloud-up) also runs as a QEMU guest: the busybox kernel + initramfs of
scripts/cloud/guest/build-image.sh, which reads Nova's config drive and runs a
shell ``user_data``. A server of ``[heatweb_guest] agent_image_name``
(``heatweb-agent-guest``) boots the agent kind of that image (``agent_initrd``:
the same plus python3 and heatweb's in-instance agent, started from the config
drive) with ``agent_memory_mb``. A server of ``[heatweb_guest] debian_image_name``
(``heatweb-debian-guest``) boots the full Debian guest: the same kernel and initramfs,
whose init switches to the systemd of a disk, the server's own qcow2 overlay of
``debian_disk`` (systemd, cloud-init reading the config drive, heatweb's agent).

The guest's only NIC is QEMU user-mode networking with ``restrict=on``: no packet
leaves QEMU except through the forwards given here, each ``guestfwd`` running
``socat STDIO TCP:127.0.0.1:PORT`` on the host for one guest connection. Inside
the guest, init (the Debian guest: a systemd unit running socat) relays
``127.0.0.1:PORT`` to those forwards, so the cloud's URLs
(``http://127.0.0.1:PORT/...``) work unchanged. The forwarded ports are Keystone's
and ``[heatweb_guest] ports``, plus those listed in ``host_ports_file`` when the
guest starts (a heatweb test service appends its random port there). No bridge,
tap or NAT network. The one way in: a floating IP (an address of the cloud's loopback
``public`` subnet, 127.42.0.0/24) associated with a guest's port gets a QEMU
``hostfwd`` from ``FLOATING_IP:PORT`` on the host to the guest's ``PORT`` for each of
``[heatweb_guest] floating_ip_ports`` (22): a thread polls Neutron for the floating IPs
of the running guests' ports every ``floating_ip_poll`` seconds and adds or removes
the forwards through each QEMU's QMP socket (``hostfwd_add`` / ``hostfwd_remove``), so
an SSH to the floating IP reaches the guest's sshd as on a real cloud. Forwards bind
loopback addresses only: no other host address ever listens for a guest.

TCG boots are CPU-bound, so at most ``max_booting`` guests boot at once: spawn
holds one of that many file locks until the guest's init reaches its config
drive (or ``boot_timeout`` passes), and the server turns ACTIVE then.

nova-compute imports ``compute_driver`` as ``nova.virt.<value>``:
``heatweb_guest_compute`` (this package's ``heatweb-nova-compute``) starts it with
this module aliased as ``nova.virt.heatweb_guest``
(``compute_driver = heatweb_guest.GuestDriver``).
"""
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

from oslo_config import cfg
from oslo_log import log as logging

from nova.api.metadata import base as instance_metadata
from nova.compute import power_state
from nova import exception
from nova.virt import configdrive
from nova.virt import fake
from nova.virt import hardware

LOG = logging.getLogger(__name__)
CONF = cfg.CONF

OPTS = [
    cfg.StrOpt("image_name", default="heatweb-guest",
               help="Servers booted from the Glance image of this name run as guests."),
    cfg.StrOpt("kernel", help="The guest's kernel (vmlinuz)."),
    cfg.StrOpt("initrd", help="The guest's initramfs (initrd.cpio.gz)."),
    cfg.StrOpt("state_dir", help="Per-guest directories (config drive, console log, pid)."),
    cfg.StrOpt("host_ports_file",
               help="Extra host ports to forward, one a line; read at each guest start."),
    cfg.ListOpt("ports", default=["5000"],
                help="Host ports on 127.0.0.1 every guest can reach."),
    cfg.IntOpt("max_host_ports", default=24,
               help="At most this many ports of host_ports_file (its last lines)."),
    cfg.IntOpt("max_booting", default=2, help="Guests booting at the same time."),
    cfg.IntOpt("boot_timeout", default=180,
               help="Seconds a booting guest holds its slot at most."),
    cfg.IntOpt("memory_mb", default=128, help="Guest memory (at least 128: the initramfs)."),
    cfg.StrOpt("accel", default="tcg", choices=["tcg", "kvm"]),
    cfg.StrOpt("agent_image_name", default="heatweb-agent-guest",
               help="Servers booted from the Glance image of this name run as agent guests "
                    "(python3 and heatweb's in-instance agent)."),
    cfg.StrOpt("agent_initrd", help="The agent guest's initramfs (none: no agent guests)."),
    cfg.IntOpt("agent_memory_mb", default=256,
               help="Agent guest memory (its initramfs, with python3, is unpacked into RAM)."),
    cfg.StrOpt("debian_image_name", default="heatweb-debian-guest",
               help="Servers booted from the Glance image of this name run the full Debian "
                    "guest (systemd, cloud-init, heatweb's agent) from a disk."),
    cfg.StrOpt("debian_disk", help="The Debian guest's base disk (root.qcow2; none: no "
                                   "Debian guests). Each server's disk is an overlay of it."),
    cfg.IntOpt("debian_memory_mb", default=512, help="Debian guest memory."),
    cfg.IntOpt("debian_boot_timeout", default=300,
               help="Seconds a booting Debian guest holds its slot at most."),
    cfg.ListOpt("floating_ip_ports", default=["22"],
                help="Guest TCP ports a floating IP of the guest's port forwards "
                     "(FLOATING_IP:PORT on the host to the guest's PORT)."),
    cfg.IntOpt("floating_ip_poll", default=2,
               help="Seconds between two polls of Neutron for the running guests' "
                    "floating IPs (0: no floating IP forwards)."),
]
CONF.register_opts(OPTS, group="heatweb_guest")

GUEST_FWD_IP = "10.0.2.100"  # inside the guest's slirp network only
# init's console lines once the CPU-heavy part (kernel, modules, DHCP) is over; the
# Debian guest's once cloud-init's last stage is (its heatweb-guest-ready unit)
BOOTED_MARKS = {"busybox": (b"config drive", b"no config drive found"),
                "debian": (b"]: booted, cloud-init",)}
FAILED_MARKS = (b"Kernel panic", b"end Kernel panic", b"cannot mount /dev/vda")
LOOPBACK_PREFIX = "127."  # the only floating IP addresses a forward may bind


def host_ports():
    """Keystone's and the configured ports, then the file's last ``max_host_ports``."""
    conf = CONF.heatweb_guest
    listed = []
    if conf.host_ports_file:
        try:
            with open(conf.host_ports_file) as f:
                listed = [line.strip() for line in f]
        except OSError:
            pass
    ports = []
    for port in [*conf.ports, *listed[::-1]]:
        if port.isdigit() and 0 < int(port) < 65536 and int(port) not in ports:
            ports.append(int(port))
    return ports[:len(conf.ports) + conf.max_host_ports]


class BootSlot:
    """One of ``max_booting`` file locks (``STATE/boot-N.lock``): held while a guest boots.

    File locks, so the benchmark and a second nova-compute on the machine share the cap.
    """

    def __init__(self, state_dir, slots):
        self.paths = [os.path.join(state_dir, f"boot-{n}.lock") for n in range(max(1, slots))]
        self.fd = None

    def __enter__(self):
        while True:
            for path in self.paths:
                fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self.fd = fd
                return self
            time.sleep(0.2)

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


class GuestDriver(fake.FakeDriverWithoutFakeNodes):
    """FakeDriver (with a stable node identity in ``state_path/compute_id``, so
    nova-compute can restart); a server of the guest image is also a QEMU process,
    its files in ``state_dir/<uuid>/``."""

    def __init__(self, virtapi, read_only=False):
        super().__init__(virtapi, read_only)
        self._processes = {}  # uuid -> Popen of this nova-compute's guests
        self._lock = threading.Lock()
        self._forwards = {}  # uuid -> {floating IP address: [host forward specs]}

    # ------------------------------------------------------------------ helpers
    @property
    def _state(self):
        return CONF.heatweb_guest.state_dir or os.path.join(CONF.state_path, "guests")

    def _dir(self, instance):
        return os.path.join(self._state, instance.uuid)

    def _is_guest(self, instance):
        return os.path.isdir(self._dir(instance))

    def _pid(self, instance):
        """The guest's QEMU pid while it runs, else None (a Popen that ended is reaped)."""
        proc = self._processes.get(instance.uuid)
        if proc is not None:
            return proc.pid if proc.poll() is None else None
        try:  # a guest of an earlier nova-compute (init_host kills those)
            with open(os.path.join(self._dir(instance), "qemu.pid")) as f:
                pid = int(f.read().strip())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    def _make_config_drive(self, instance, injected_files, admin_password, network_info):
        extra_md = {"admin_pass": admin_password} if admin_password else {}
        # The same call as LibvirtDriver._create_configdrive.
        inst_md = instance_metadata.InstanceMetadata(
            instance, content=injected_files, extra_md=extra_md, network_info=network_info)
        path = os.path.join(self._dir(instance), "disk.config")
        with configdrive.ConfigDriveBuilder(instance_md=inst_md) as cdb:
            cdb.make_drive(path)

    def _kind(self, instance):
        """``agent`` or ``debian`` for a server of those images (spawn wrote it down),
        else ``busybox``."""
        try:
            with open(os.path.join(self._dir(instance), "instance.json")) as f:
                return json.load(f).get("kind", "busybox")
        except (OSError, ValueError):
            return "busybox"

    def _argv(self, instance, ports):
        conf, d = CONF.heatweb_guest, self._dir(instance)
        kind = self._kind(instance)
        initrd, memory_mb, disks, append = conf.initrd, conf.memory_mb, [], ""
        if kind == "agent":
            initrd, memory_mb = conf.agent_initrd, conf.agent_memory_mb
        elif kind == "debian":
            # The busybox init loads the virtio modules and switches to the disk's
            # systemd; the disk is the first virtio drive (/dev/vda), the config drive
            # the second.
            memory_mb, append = conf.debian_memory_mb, " guest.root=/dev/vda"
            disks = ["-drive", f"file={os.path.join(d, 'disk.qcow2')},if=virtio,format=qcow2"]
        net = "user,id=n0,restrict=on,net=10.0.2.0/24,host=10.0.2.2"
        for port in ports:
            net += (f",guestfwd=tcp:{GUEST_FWD_IP}:{port}"
                    f"-cmd:socat STDIO TCP:127.0.0.1:{port}")
        with open(os.path.join(d, "mac")) as f:
            mac = f.read().strip()
        nic = "virtio-net-pci,netdev=n0" + (f",mac={mac}" if mac else "")
        tb_size = 64 if kind == "debian" else 32
        accel = (["-accel", "kvm", "-cpu", "host"] if conf.accel == "kvm"
                 else ["-accel", f"tcg,tb-size={tb_size}", "-cpu", "max"])
        fwd = ",".join(str(p) for p in ports)
        return ["qemu-system-x86_64", *accel, "-m", str(max(128, memory_mb)), "-smp", "1",
                "-nodefaults", "-no-user-config", "-name", instance.uuid, "-display", "none",
                "-no-reboot", "-kernel", conf.kernel, "-initrd", initrd,
                "-append", f"console=ttyS0 quiet panic=-1 guest.fwd={fwd}{append}",
                *disks, "-drive", f"file={os.path.join(d, 'disk.config')},if=virtio,format=raw,"
                          "readonly=on",
                "-netdev", net, "-device", nic,
                # append=on: a reboot's console follows the last boot's, as a serial log
                "-chardev", f"file,id=s0,append=on,path={os.path.join(d, 'console.log')}",
                "-serial", "chardev:s0",
                # the floating IP forwards are added and removed here (hostfwd_add)
                "-qmp", f"unix:{os.path.join(d, 'qmp.sock')},server=on,wait=off",
                "-pidfile", os.path.join(d, "qemu.pid")]

    def _console(self, instance):
        try:
            with open(os.path.join(self._dir(instance), "console.log"), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def _start(self, instance):
        """Start the guest and wait (in a boot slot) until its init reached the config drive."""
        d = self._dir(instance)
        seen = len(self._console(instance))  # the marks of this boot, not of an earlier one
        kind = self._kind(instance)
        booted = BOOTED_MARKS.get(kind, BOOTED_MARKS["busybox"])
        timeout = (CONF.heatweb_guest.debian_boot_timeout if kind == "debian"
                   else CONF.heatweb_guest.boot_timeout)
        with BootSlot(self._state, CONF.heatweb_guest.max_booting):
            ports = host_ports()
            # Not -daemonize: the guest stays in nova-compute's process group (cloud-down
            # stops it with the service) and this process reaps it.
            with open(os.path.join(d, "qemu.err"), "ab") as err:
                proc = subprocess.Popen(self._argv(instance, ports), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=err)
            with self._lock:
                self._processes[instance.uuid] = proc
                self._forwards[instance.uuid] = {}  # a new QEMU has none yet
            LOG.info("guest started: pid %s, host ports %s", proc.pid, ports, instance=instance)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and proc.poll() is None:
                out = self._console(instance)[seen:]
                if any(m in out for m in booted + FAILED_MARKS):
                    break
                time.sleep(0.2)

    def _stop(self, instance, timeout=10):
        with self._lock:
            proc = self._processes.pop(instance.uuid, None)
            self._forwards.pop(instance.uuid, None)
        pid = proc.pid if proc is not None and proc.poll() is None else self._pid(instance)
        if not pid:
            return
        try:
            os.kill(pid, signal.SIGCONT)  # a paused guest must see the SIGTERM
            os.kill(pid, signal.SIGTERM)  # no ACPI shutdown: a test guest loses nothing
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                return
            if proc is None and not _alive(pid):
                return
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if proc is not None:
            proc.wait()

    # ------------------------------------------------------------------ floating IPs
    def _poll_floating_ips(self):
        """Forever (a daemon thread): the running guests' forwards follow Neutron's
        floating IPs of their ports."""
        interval = CONF.heatweb_guest.floating_ip_poll
        while True:
            time.sleep(interval)
            try:
                self._sync_floating_ips()
            except Exception:  # noqa: BLE001 - Neutron down, a token: try again
                LOG.warning("floating IP forwards: poll failed", exc_info=True)

    def _sync_floating_ips(self):
        with self._lock:
            running = {uuid: proc for uuid, proc in self._processes.items()
                       if proc.poll() is None}
        if not running:
            return
        from nova import context as nova_context
        from nova.network import neutron
        client = neutron.get_client(nova_context.get_admin_context(), admin=True)
        # The ports of now (an interface attached since the boot counts too).
        port_guest = {port["id"]: port["device_id"] for port in client.list_ports(
            device_id=sorted(running), fields=["id", "device_id"])["ports"]}
        fips = [] if not port_guest else client.list_floatingips(
            port_id=sorted(port_guest),
            fields=["floating_ip_address", "port_id"])["floatingips"]
        wanted = {uuid: set() for uuid in running}
        for fip in fips:
            address = fip.get("floating_ip_address") or ""
            if fip.get("port_id") in port_guest and address.startswith(LOOPBACK_PREFIX):
                wanted[port_guest[fip["port_id"]]].add(address)
        for uuid, addresses in wanted.items():
            self._apply_forwards(uuid, addresses)

    def _apply_forwards(self, uuid, addresses):
        """Add the forwards of new addresses, remove those of addresses gone."""
        with self._lock:
            have = self._forwards.get(uuid)
            if have is None or uuid not in self._processes:
                return  # stopped meanwhile
            have = dict(have)
        sock = os.path.join(self._state, uuid, "qmp.sock")
        ports = [int(p) for p in CONF.heatweb_guest.floating_ip_ports if str(p).isdigit()]
        for address in sorted(set(have) - addresses):
            for spec in have.pop(address):
                _qmp_hmp(sock, f"hostfwd_remove n0 {spec}")
            LOG.info("guest %s: floating IP %s forwards removed", uuid, address)
        for address in sorted(addresses - set(have)):
            have[address] = []
            for port in ports:
                spec = f"tcp:{address}:{port}"
                error = _qmp_hmp(sock, f"hostfwd_add n0 {spec}-:{port}")
                if error:
                    LOG.warning("guest %s: forward %s refused: %s", uuid, spec, error)
                else:
                    have[address].append(spec)
            LOG.info("guest %s: floating IP %s forwards %s", uuid, address, have[address])
        with self._lock:
            if uuid in self._forwards:
                self._forwards[uuid] = have

    def _set_state(self, instance, state):
        if instance.uuid in self.instances:
            self.instances[instance.uuid].state = state

    def _signal(self, instance, sig, state):
        pid = self._pid(instance)
        if not pid:
            raise exception.InstanceNotRunning(instance_id=instance.uuid)
        os.kill(pid, sig)  # SIGSTOP freezes the vCPU and slirp alike
        self._set_state(instance, state)

    # ------------------------------------------------------------------ driver API
    def init_host(self, host):
        super().init_host(host)
        os.makedirs(self._state, exist_ok=True)
        if CONF.heatweb_guest.floating_ip_poll > 0:
            threading.Thread(target=self._poll_floating_ips, name="floating-ip-forwards",
                             daemon=True).start()
        # FakeDriver forgets its instances on a restart, so the guests of an earlier
        # nova-compute are killed (by their pidfiles: only ours) and their state removed.
        for name in os.listdir(self._state):
            d = os.path.join(self._state, name)
            if not os.path.isdir(d):
                continue
            try:
                with open(os.path.join(d, "qemu.pid")) as f:
                    pid = int(f.read().strip())
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"qemu-system" in f.read():
                        os.kill(pid, signal.SIGCONT)
                        os.kill(pid, signal.SIGKILL)
                        LOG.info("killed the stale guest %s (pid %s)", name, pid)
            except (OSError, ValueError):
                pass
            shutil.rmtree(d, ignore_errors=True)

    def spawn(self, context, instance, image_meta, injected_files, admin_password,
              allocations, network_info=None, block_device_info=None, power_on=True,
              accel_info=None):
        super().spawn(context, instance, image_meta, injected_files, admin_password,
                      allocations, network_info, block_device_info, power_on, accel_info)
        name = (image_meta.name if image_meta is not None and image_meta.obj_attr_is_set("name")
                else None)
        conf = CONF.heatweb_guest
        if name == conf.image_name:
            kind = "busybox"
        elif name == conf.agent_image_name and conf.agent_initrd:
            kind = "agent"
        elif name == conf.debian_image_name and conf.debian_disk:
            kind = "debian"
        else:
            return
        d = self._dir(instance)
        os.makedirs(d, exist_ok=True)
        if kind == "debian":
            # The server's own disk: an overlay of the base as it is now (its real path:
            # a rebuilt image does not change the disks of servers made before it).
            subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2",
                            "-b", os.path.realpath(conf.debian_disk),
                            os.path.join(d, "disk.qcow2")], check=True, capture_output=True)
        mac = next((vif["address"] for vif in network_info or [] if vif.get("address")), "")
        with open(os.path.join(d, "mac"), "w") as f:
            f.write(mac)
        with open(os.path.join(d, "instance.json"), "w") as f:
            json.dump({"uuid": instance.uuid, "name": instance.name, "kind": kind}, f)
        self._make_config_drive(instance, injected_files, admin_password, network_info)
        if power_on:
            self._start(instance)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        if self._is_guest(instance):
            self._stop(instance)
            if destroy_disks:  # Nova's delete calls destroy only (libvirt's cleans up there)
                shutil.rmtree(self._dir(instance), ignore_errors=True)
        super().destroy(context, instance, network_info, block_device_info, destroy_disks,
                        destroy_secrets)

    def cleanup(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, migrate_data=None, destroy_vifs=True,
                destroy_secrets=True):
        super().cleanup(context, instance, network_info, block_device_info, destroy_disks,
                        migrate_data, destroy_vifs, destroy_secrets)
        if destroy_disks and self._is_guest(instance):
            shutil.rmtree(self._dir(instance), ignore_errors=True)

    def reboot(self, context, instance, network_info, reboot_type, block_device_info=None,
               bad_volumes_callback=None, accel_info=None, share_info=None):
        if not self._is_guest(instance) or instance.uuid not in self.instances:
            return super().reboot(context, instance, network_info, reboot_type,
                                  block_device_info, bad_volumes_callback, accel_info,
                                  share_info)
        # Soft and hard alike: a fresh boot from the same config drive (the busybox
        # init runs user_data at every boot).
        self._stop(instance)
        self._start(instance)
        self._set_state(instance, power_state.RUNNING)

    def power_off(self, instance, timeout=0, retry_interval=0):
        if self._is_guest(instance):
            self._stop(instance)
        super().power_off(instance, timeout, retry_interval)

    def power_on(self, context, instance, network_info, block_device_info=None,
                 accel_info=None, share_info=None):
        super().power_on(context, instance, network_info, block_device_info, accel_info,
                         share_info)
        if self._is_guest(instance) and not self._pid(instance):
            self._start(instance)

    def pause(self, instance):
        if self._is_guest(instance):
            self._signal(instance, signal.SIGSTOP, power_state.PAUSED)

    def unpause(self, instance):
        if self._is_guest(instance):
            self._signal(instance, signal.SIGCONT, power_state.RUNNING)

    # A suspend keeps the guest in memory, stopped (no state saved to disk: a test
    # guest needs no more).
    def suspend(self, context, instance):
        if self._is_guest(instance):
            self._signal(instance, signal.SIGSTOP, power_state.SUSPENDED)

    def resume(self, context, instance, network_info, block_device_info=None,
               share_info=None):
        if self._is_guest(instance):
            self._signal(instance, signal.SIGCONT, power_state.RUNNING)

    def get_info(self, instance, use_cache=True):
        info = super().get_info(instance, use_cache)
        if (self._is_guest(instance) and info.state == power_state.RUNNING
                and not self._pid(instance)):
            # The guest powered itself off (poweroff in user_data): SHUTDOWN, which
            # Nova's power state sync turns into SHUTOFF, as with libvirt.
            self._set_state(instance, power_state.SHUTDOWN)
            return hardware.InstanceInfo(state=power_state.SHUTDOWN)
        return info

    def get_console_output(self, context, instance):
        if not self._is_guest(instance):
            return super().get_console_output(context, instance)
        return self._console(instance)[-100000:]


def _qmp_hmp(sock_path, command_line, timeout=5):
    """Run one human monitor command through QEMU's QMP socket: what it answered ('' for
    a hostfwd_add that worked), or the error."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(sock_path)
            f = s.makefile("rwb")
            f.readline()  # the greeting
            for request in ({"execute": "qmp_capabilities"},
                            {"execute": "human-monitor-command",
                             "arguments": {"command-line": command_line}}):
                f.write(json.dumps(request).encode() + b"\n")
                f.flush()
                while True:  # events may come before the answer
                    answer = json.loads(f.readline() or b'{"error": "closed"}')
                    if "event" not in answer:
                        break
                if "error" in answer:
                    return str(answer["error"])
            return (answer.get("return") or "").strip()
    except (OSError, ValueError) as e:
        return f"QMP {sock_path}: {e}"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of another parent counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False
