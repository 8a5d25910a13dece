"""Servers that really run: guests of the ``heatweb-guest`` image on the one-machine cloud.

Nova's guest driver (scripts/cloud/guest_driver, docs/guests.md) boots each server
of that image as a busybox QEMU guest that reads its config drive and runs its
``user_data``. Here three guests signal one wait condition through the
``curl_cli`` of its handle, as Heat's templates do: the stack completes only
because the guests ran their scripts and reached heatweb on 127.0.0.1 through
QEMU's forwards.
"""
import base64
import json
import socket
import time
import uuid
from pathlib import Path

import openstack
import pytest

from tests.openstack.keystone_support import (CLOUD_BASE, Cloud, Heat, keystone_service,
                                              run_cli)

pytestmark = pytest.mark.openstack

GUEST_IMAGE = "heatweb-guest"
GUEST_STATE = CLOUD_BASE / "guests" / "run"  # the guest driver's state_dir
# Guests boot under TCG, two at a time, on a machine other test runs share.
TIMEOUT = 900


def guest_template(name, count):
    user_data = ("#!/bin/sh\n"
                 "echo \"user_data of SERVER on kernel $(uname -r)\"\n"
                 "wc_notify --data-binary "
                 "\"{\\\"status\\\": \\\"SUCCESS\\\", \\\"id\\\": \\\"SERVER\\\", "
                 "\\\"data\\\": \\\"$(hostname)\\\"}\"\n")
    resources = {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition", "properties": {
            "handle": {"get_resource": "handle"}, "count": count, "timeout": TIMEOUT}},
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{name}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.46.0.0/24"}},
    }
    for n in range(count):
        server = f"{name}-{n}"
        resources[f"server{n}"] = {"type": "OS::Nova::Server", "depends_on": ["subnet"],
                                   "properties": {
            "image": GUEST_IMAGE, "flavor": "m1.tiny", "name": server,
            "networks": [{"network": {"get_resource": "net"}}],
            "user_data_format": "RAW",
            "user_data": {"str_replace": {
                "template": user_data,
                "params": {"wc_notify": {"get_attr": ["handle", "curl_cli"]},
                           "SERVER": server}}}}}
    return {"heat_template_version": "2016-10-14", "resources": resources,
            "outputs": {"wc_data": {"value": {"get_attr": ["wait", "data"]}}}}


def qemu_guests(server_ids):
    """The pids of running QEMU processes named after one of these servers."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"qemu-system-x86_64") and b"-name" in argv:
            name = argv[argv.index(b"-name") + 1].decode()
            if name in server_ids:
                found[name] = int(entry.name)
    return found


def test_three_guests_run_their_user_data_and_signal_one_wait_condition(request,
                                                                        tmp_path_factory):
    cloud = Cloud()
    service = keystone_service(request.config, tmp_path_factory)
    token, body = cloud.token("heatweb-demo-member")
    heat = Heat(service, token, body["project"]["id"])
    name = f"gw{uuid.uuid4().hex[:6]}"

    path = heat.create(name, guest_template(name, 3), timeout_mins=TIMEOUT // 60)
    started = time.monotonic()
    # Without the guests' signals the wait condition would time out (FAILED at once here).
    stack = heat.wait(path, "CREATE_COMPLETE", timeout=TIMEOUT)
    print(f"3 guests: CREATE_COMPLETE {time.monotonic() - started:.0f} s after the create")

    demo = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    servers = {n: demo.compute.find_server(f"{name}-{n}") for n in range(3)}
    ids = {s.id for s in servers.values()}
    assert len(ids) == 3 and set(qemu_guests(ids)) == ids  # each one a real QEMU

    # Each guest signalled once, with its own hostname from the config drive.
    wc_data = json.loads({o["output_key"]: o["output_value"]
                          for o in stack["outputs"]}["wc_data"])
    assert wc_data == {f"{name}-{n}": f"{name}-{n}" for n in range(3)}
    resp = heat.call("GET", f"{path}/resources/handle/metadata")
    assert resp.status_code == 200, resp.text
    signals = resp.json()["metadata"]
    assert {k: v["status"] for k, v in signals.items()} == {
        f"{name}-{n}": "SUCCESS" for n in range(3)}

    # The console is the guest's serial log, through Nova's API and the CLI.
    env = cloud.os_env("heatweb-demo-member")
    for n, server in servers.items():
        shown = run_cli(["openstack", "console", "log", "show", server.id], env)
        assert shown.returncode == 0, shown.stderr
        assert f"user_data: user_data of {name}-{n} on kernel" in shown.stdout, shown.stdout
        assert "user_data exited 0" in shown.stdout, shown.stdout

    assert heat.call("DELETE", path).status_code == 204
    heat.wait(path, "DELETE_COMPLETE", timeout=300)
    assert qemu_guests(ids) == {}
    for server in servers.values():
        assert demo.compute.find_server(server.id) is None
        assert not (GUEST_STATE / server.id).exists()  # its config drive and console


def test_a_guest_pauses_suspends_resumes_and_reboots(request, tmp_path_factory):
    """Nova's power actions reach the QEMU process: SIGSTOP / SIGCONT, a reboot boots
    again (its user_data runs a second time, the busybox guest has no once-per-instance).
    A floating IP of ``public`` (127.42.0.0/24) associated with the guest's port reaches
    the guest's port 22 (the driver's forward), after the reboot too, and no more once
    disassociated."""
    cloud = Cloud()
    keystone_service(request.config, tmp_path_factory)  # its port is forwarded
    demo = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    name = f"gp{uuid.uuid4().hex[:6]}"
    net = demo.network.create_network(name=f"{name}-net")
    subnet = demo.network.create_subnet(network_id=net.id, ip_version=4,
                                        cidr="10.47.0.0/24")
    request.addfinalizer(lambda: demo.network.delete_network(net.id))
    public = demo.network.find_network("public")
    router = demo.network.create_router(name=f"{name}-router",
                                        external_gateway_info={"network_id": public.id})
    demo.network.add_interface_to_router(router, subnet_id=subnet.id)
    request.addfinalizer(lambda: (demo.network.remove_interface_from_router(
        router, subnet_id=subnet.id), demo.network.delete_router(router)))
    server = demo.compute.create_server(
        name=name, image_id=demo.image.find_image(GUEST_IMAGE).id,
        flavor_id=demo.compute.find_flavor("m1.tiny").id, networks=[{"uuid": net.id}],
        user_data=_b64("#!/bin/sh\necho \"boot of $(hostname) at $(cut -d' ' -f1 "
                       "/proc/uptime)\"\n"
                       "nc -ll -p 22 -e echo \"port 22 of $(hostname)\" "
                       ">/dev/null 2>&1 &\n"))
    request.addfinalizer(lambda: _delete_server(demo, server.id))
    demo.compute.wait_for_server(server, wait=TIMEOUT)
    port = next(demo.network.ports(device_id=server.id))
    fip = demo.network.create_ip(floating_network_id=public.id, port_id=port.id)
    request.addfinalizer(lambda: demo.network.delete_ip(fip, ignore_missing=True))
    assert fip.floating_ip_address.startswith("127.42.0.")
    _wait_for(lambda: _banner(fip.floating_ip_address) == f"port 22 of {name}",
              "the floating IP's forward to the guest's port 22", 120)

    def console():
        return demo.compute.get_server_console_output(server.id)["output"]

    def wait_console(count):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if console().count(f"user_data: boot of {name} at") >= count:
                return
            time.sleep(2)
        raise AssertionError(f"not {count} boots in the console:\n{console()[-3000:]}")

    wait_console(1)
    pid = qemu_guests({server.id})[server.id]
    for action, paused_status in (("pause", "PAUSED"), ("suspend", "SUSPENDED")):
        getattr(demo.compute, f"{action}_server")(server.id)
        demo.compute.wait_for_server(server, status=paused_status, wait=120)
        assert _process_state(pid) == "T"  # stopped
        getattr(demo.compute, "unpause_server" if action == "pause" else "resume_server")(
            server.id)
        demo.compute.wait_for_server(server, status="ACTIVE", wait=120)
        assert _process_state(pid) in ("R", "S")

    demo.compute.reboot_server(server.id, "HARD")
    _wait_for(lambda: demo.compute.get_server(server.id).status == "ACTIVE"
              and qemu_guests({server.id}).get(server.id) not in (None, pid), "the reboot")
    wait_console(2)  # the console keeps the first boot's lines, then the second's
    # the new QEMU gets the floating IP's forward again
    _wait_for(lambda: _banner(fip.floating_ip_address) == f"port 22 of {name}",
              "the forward after the reboot", 120)
    demo.network.update_ip(fip, port_id=None)
    _wait_for(lambda: _banner(fip.floating_ip_address) is None,
              "the forward's removal after the disassociation", 60)

    demo.compute.stop_server(server.id)
    demo.compute.wait_for_server(server, status="SHUTOFF", wait=120)
    assert qemu_guests({server.id}) == {}
    demo.compute.start_server(server.id)
    demo.compute.wait_for_server(server, status="ACTIVE", wait=TIMEOUT)
    assert server.id in qemu_guests({server.id})
    wait_console(3)


def _b64(text):
    return base64.b64encode(text.encode()).decode()


def _banner(address, port=22):
    """The first line a TCP connection to ADDRESS:PORT reads; None when refused."""
    try:
        with socket.create_connection((address, port), timeout=5) as conn:
            conn.settimeout(10)
            return conn.makefile("rb").readline().decode().strip()
    except OSError:
        return None


def _process_state(pid):
    return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]


def _wait_for(check, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


def _delete_server(conn, server_id):
    conn.compute.delete_server(server_id, ignore_missing=True)
    _wait_for(lambda: conn.compute.find_server(server_id) is None, "the server's delete", 300)
