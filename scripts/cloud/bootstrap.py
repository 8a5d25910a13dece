"""Fill heatweb's one-machine OpenStack cloud with what heatweb and its tests use.

Runs in the cloud's own virtualenv (openstacksdk from constraints.txt), called
by ``scripts/cloud-up``:

* ``catalog``: the ``service`` project, one service user per OpenStack
  service (and ``heatweb``, the orchestration service user), and the
  catalog endpoints of Glance, Placement, Nova and Neutron.
* ``compute``: waits until nova-compute, -conductor and -scheduler report up.
* ``seed``: flavors, DevStack's ``public`` external network (Neutron records only), a
  tiny public image, the guest image (``heatweb-guest``: servers of it boot as real QEMU
  guests, docs/guests.md), the ``demo`` and ``alt`` projects with their users (member,
  reader), and the ``clouds.yaml`` entries for them.
* ``health``: one authenticated call per service; exit 1 when one fails.

Every step looks before it creates, so running it twice changes nothing.
"""
import argparse
import sys
import time
from datetime import datetime, timezone

import openstack

KEYSTONE = "http://127.0.0.1:5000/v3"
SERVICES = {
    "glance": ("image", "http://127.0.0.1:9292"),
    "placement": ("placement", "http://127.0.0.1:8778"),
    "nova": ("compute", "http://127.0.0.1:8774/v2.1"),
    "neutron": ("network", "http://127.0.0.1:9696"),
}
# m1.huge asks for more disk than the fake virt driver reports (600000 GB;
# disk has no quota, unlike RAM), so the scheduler finds no host and Nova
# puts the server in ERROR with its fault message: how tests fail a build.
FLAVORS = (("m1.tiny", "1", 512, 1, 1), ("m1.small", "2", 2048, 1, 20),
           ("m1.huge", "99", 512, 1, 1_000_000))
IMAGE_NAME = "heatweb-tiny"
# The guest driver (scripts/cloud/guest_driver) boots servers of this image as QEMU
# guests from the cloud's own kernel and initramfs (BASE/guests/image); the bytes in
# Glance only name them. img_config_drive=mandatory: Nova gives these servers (and
# only these) a config drive, where the guest reads its user_data.
GUEST_IMAGE_NAME = "heatweb-guest"
# The same with python3 and heatweb's in-instance agent (BASE/guests/agent-image).
AGENT_GUEST_IMAGE_NAME = "heatweb-agent-guest"
# The full Debian guest: a disk of Debian bookworm (systemd, cloud-init, heatweb's agent;
# BASE/guests/debian-image), each server's an overlay of it.
DEBIAN_GUEST_IMAGE_NAME = "heatweb-debian-guest"
# DevStack's external network and its subnet (Neutron records, no host address). Its
# subnet is in 127.0.0.0/8, not DevStack's 172.24.4.0/24: test traffic goes to loopback
# addresses only, and heat-tempest-plugin's scenario tests ping a server's floating IP
# (the host's loopback answers it: that step says nothing of the guest, docs/guests.md).
PUBLIC_NETWORK, PUBLIC_CIDR = "public", "127.42.0.0/24"
# (user, project, role): the accounts tests and the Keystone mode sign in with.
ACCOUNTS = (("demo-member", "demo", "member"), ("demo-reader", "demo", "reader"),
            ("alt-member", "alt", "member"))


def connect(password, *, username="admin", project="admin"):
    # Only these arguments: an OS_CLOUD / OS_CLIENT_CONFIG_FILE in the caller's
    # environment (the openstack test mode sets both) would be merged in and
    # turn the admin login into a 401, and a healthy cloud into an "unhealthy" one.
    return openstack.connect(load_yaml_config=False, load_envvars=False, auth_url=KEYSTONE,
                             username=username, password=password, project_name=project,
                             user_domain_name="Default", project_domain_name="Default",
                             region_name="RegionOne", identity_api_version="3")


def ensure_project(idn, name, description):
    return (idn.find_project(name, domain_id="default")
            or idn.create_project(name=name, domain_id="default", description=description))


def ensure_user(idn, name, *, password, project, roles):
    user = idn.find_user(name, domain_id="default") or idn.create_user(
        name=name, password=password, domain_id="default", default_project_id=project.id)
    for role_name in roles:
        idn.assign_project_role_to_user(project, user, idn.find_role(role_name))
    return user


def ensure_service(idn, name, service_type, url, *, moved=False):
    """The catalog entry ``name`` of ``service_type``, its three endpoints at ``url``;
    ``moved``: an endpoint at another URL (a cloud brought up before with another port) is
    deleted first. Looks before it creates."""
    service = (next((s for s in idn.services() if s.name == name), None)
               or idn.create_service(name=name, type=service_type))
    for endpoint in idn.endpoints(service_id=service.id) if moved else ():
        if endpoint.url != url:
            idn.delete_endpoint(endpoint)
    have = {e.interface for e in idn.endpoints(service_id=service.id)}
    for interface in {"public", "internal", "admin"} - have:
        idn.create_endpoint(service_id=service.id, interface=interface, url=url,
                            region_id="RegionOne")
    return service


def register_service(conn, *, user, name, service_type, url, password):
    """A service with a venv of its own (service.py: Aodh, Designate, Gnocchi, Mistral): its user, with
    the admin and service roles in ``service``, and its catalog entry at ``url``."""
    idn = conn.identity
    service_project = ensure_project(idn, "service", "OpenStack service users")
    ensure_user(idn, user, password=password, project=service_project,
                roles=("admin", "service"))
    ensure_service(idn, name, service_type, url, moved=True)


def check_health(conn, name, service_type, path):
    """One authenticated GET of ``path`` on the service's public endpoint; exit 1 unless
    it answers 200."""
    response = conn.session.get(path, endpoint_filter={
        "service_type": service_type, "interface": "public"}, raise_exc=False)
    if response.status_code != 200:
        sys.exit(f"unhealthy: {name}: GET {path} answered {response.status_code} "
                 f"{response.text[:200]}")


def catalog(conn, password):
    idn = conn.identity
    service_project = ensure_project(idn, "service", "OpenStack service users")
    for name in list(SERVICES) + ["heatweb"]:
        ensure_user(idn, name, password=password, project=service_project,
                    roles=("admin", "service"))
    for name, (service_type, url) in SERVICES.items():
        ensure_service(idn, name, service_type, url)


def wait_compute(conn, timeout, after=None):
    """Until the three report up (nova-compute with a report after ``after``, epoch
    seconds, when given: a restarted one, not the heartbeat of the one it replaced)."""
    deadline = time.monotonic() + timeout
    wanted = {"nova-compute", "nova-conductor", "nova-scheduler"}
    up = set()
    while time.monotonic() < deadline:
        up = {s.binary for s in conn.compute.services()
              if s.state == "up" and s.status == "enabled"
              and (after is None or s.binary != "nova-compute" or reported_after(s, after))}
        if wanted <= up:
            return
        time.sleep(1)
    sys.exit(f"nova services not all up after {timeout}s: up are {sorted(up)}")


def reported_after(service, after):
    updated = service.updated_at and datetime.fromisoformat(service.updated_at.rstrip("Z"))
    return bool(updated) and updated.replace(tzinfo=timezone.utc).timestamp() > after


def seed(conn, password):
    for name, flavor_id, ram, vcpus, disk in FLAVORS:
        if not conn.compute.find_flavor(name):
            conn.compute.create_flavor(name=name, id=flavor_id, ram=ram, vcpus=vcpus, disk=disk)
    if not conn.image.find_image(IMAGE_NAME):
        # Any bytes do: the fake virt driver never reads the image.
        conn.image.create_image(name=IMAGE_NAME, data=b"heatweb tiny image\n" * 64,
                                disk_format="raw", container_format="bare",
                                visibility="public")
    if not conn.image.find_image(GUEST_IMAGE_NAME):
        conn.image.create_image(
            name=GUEST_IMAGE_NAME, data=b"heatweb busybox guest: BASE/guests/image\n",
            disk_format="raw", container_format="bare", visibility="public",
            img_config_drive="mandatory", os_distro="busybox")
    if not conn.image.find_image(AGENT_GUEST_IMAGE_NAME):
        conn.image.create_image(
            name=AGENT_GUEST_IMAGE_NAME,
            data=b"heatweb agent guest: BASE/guests/agent-image\n",
            disk_format="raw", container_format="bare", visibility="public",
            img_config_drive="mandatory", os_distro="busybox")
    if not conn.image.find_image(DEBIAN_GUEST_IMAGE_NAME):
        conn.image.create_image(
            name=DEBIAN_GUEST_IMAGE_NAME,
            data=b"heatweb Debian guest: BASE/guests/debian-image\n",
            disk_format="raw", container_format="bare", visibility="public",
            img_config_drive="mandatory", os_distro="debian", os_version="12")
    ensure_public_network(conn)
    idn = conn.identity
    projects = {name: ensure_project(idn, name, f"heatweb test project {name}")
                for name in ("demo", "alt")}
    for user, project, role in ACCOUNTS:
        ensure_user(idn, user, password=password, project=projects[project], roles=(role,))
    # Shared by several test runs at once (and what a killed run leaves):
    # Nova's default quota of 10 instances is soon used up.
    for project in projects.values():
        conn.set_compute_quotas(project.id, instances=-1, cores=-1, ram=-1)


def ensure_public_network(conn):
    """DevStack's external network ``public`` with its subnet (heat-tempest-plugin's
    floating network): Neutron records only. Neutron here runs no agents, so nothing of
    it is on the host: no bridge, no address, no route."""
    network = conn.network.find_network(PUBLIC_NETWORK)
    if network is None:
        network = conn.network.create_network(
            name=PUBLIC_NETWORK, is_router_external=True, provider_network_type="flat",
            provider_physical_network=PUBLIC_NETWORK)
    for subnet in conn.network.subnets(network_id=network.id):
        if subnet.cidr != PUBLIC_CIDR:  # an earlier cloud's: its floating IPs not loopback
            for ip in conn.network.ips(floating_network_id=network.id):
                conn.network.delete_ip(ip)
            conn.network.delete_subnet(subnet)
    if not list(conn.network.subnets(network_id=network.id)):
        conn.network.create_subnet(name=f"{PUBLIC_NETWORK}-subnet", network_id=network.id,
                                   ip_version=4, cidr=PUBLIC_CIDR, is_dhcp_enabled=False)
    return network


def clouds_yaml(password):
    """The clouds.yaml text: one cloud per account."""
    entries = [("heatweb-admin", "admin", "admin"), ("heatweb-service", "heatweb", "service")]
    entries += [(f"heatweb-{user}", user, project) for user, project, _ in ACCOUNTS]
    lines = ["clouds:"]
    for cloud, user, project in entries:
        lines += [f"  {cloud}:", "    auth:", f"      auth_url: {KEYSTONE}",
                  f"      username: {user}", f"      password: {password}",
                  f"      project_name: {project}", "      user_domain_name: Default",
                  "      project_domain_name: Default", "    region_name: RegionOne",
                  "    identity_api_version: 3"]
    return "\n".join(lines) + "\n"


def health(conn):
    checks = {"keystone": lambda: conn.identity.find_project("admin"),
              "glance": lambda: next(iter(conn.image.images(limit=1)), None),
              "nova": lambda: list(conn.compute.flavors()),
              "neutron": lambda: next(iter(conn.network.networks(limit=1)), None),
              "placement": lambda: conn.placement.get("/resource_providers").raise_for_status()}
    failed = []
    for name, check in checks.items():
        try:
            check()
        except Exception as exc:  # any failure means "not healthy"; say which and why
            failed.append(f"{name}: {exc}")
    if failed:
        sys.exit("unhealthy: " + "; ".join(failed))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("catalog", "compute", "seed", "clouds-yaml", "health"))
    parser.add_argument("--password", required=True)
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--after", type=float, help="compute: a report after this epoch time")
    args = parser.parse_args()
    if args.step == "clouds-yaml":
        sys.stdout.write(clouds_yaml(args.password))
        return
    conn = connect(args.password)
    if args.step == "catalog":
        catalog(conn, args.password)
    elif args.step == "compute":
        wait_compute(conn, args.timeout, args.after)
    elif args.step == "seed":
        seed(conn, args.password)
    else:
        health(conn)


if __name__ == "__main__":
    main()
