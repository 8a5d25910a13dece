"""Write tempest.conf for heat-tempest-plugin against heatweb on the one-machine cloud.

Runs in the tempest venv (openstacksdk comes with tempest's plugin), called by
``scripts/heat-tempest``. The accounts come from the cloud's ``clouds.yaml``
(scripts/cloud/bootstrap.py): the tests act as ``demo-member`` of the ``demo``
project, the few admin steps as ``admin``. It also makes sure the demo project
has the network the tests boot servers on (``heat-net`` / ``heat-subnet``,
heat-tempest-plugin's default names).

``[service_available]`` says what the cloud runs, read from its catalog: Keystone,
Glance, Nova, Neutron, heatweb as Heat, and the extras scripts/cloud/extras-up adds
(Cinder, Swift, Barbican, Octavia, ...). A service the catalog lacks is False, so
tempest and the plugin skip the tests that need it; ``[volume-feature-enabled] backup``
is True when Cinder has a cinder-backup up (extras-up runs one). With Barbican, the multi-cloud
test gets its ``credential_secret_id``: a secret of the demo member holding an
application credential of theirs, as Heat's docs describe it. DevStack's ``public``
external network (scripts/cloud/bootstrap.py) is the floating network; ``heat-net``
reaches it through the demo project's ``heat-router`` (DevStack's ``router1`` for its
``private`` network), so a floating IP can be associated with a port on ``heat-net``
(``test_server_cfn_init``'s ``AWS::EC2::EIPAssociation``). ``public`` must be the
cloud's only external network: Heat's ``AWS::EC2::EIP`` takes the one there is
("Expected 1 external network, found N" otherwise). heatweb's own openstack-mode tests
make external networks of their own for a while (``<tag>-public``); one older than
``STALE_EXTERNAL_AGE`` is a killed run's leftover and is removed here with what uses it,
a younger one is named on stderr. No test is skipped by name here.
"""
import argparse
import configparser
import datetime
import json
import sys
from pathlib import Path

import openstack
import yaml

IMAGE = "heatweb-tiny"  # bootstrap.py's public image (a fake record in Nova)
# bootstrap.py's guest image: its servers boot as real busybox guests that run their
# user_data (docs/guests.md). The plugin's minimal image: the tests that boot one run
# a shell user_data (the multi-signal wait condition curls its handle 25 times).
MINIMAL_IMAGE = "heatweb-guest"
# bootstrap.py's full Debian guest (systemd, cloud-init): ``--image-ref`` gives it to the
# plugin's image_ref for the scenario tests that need cloud-init (SOFTWARE_CONFIG user
# data) or an agent polling heatweb's CloudFormation API (test_server_software_config);
# the functional tests keep heatweb-tiny (real guests there would cost minutes).
DEBIAN_IMAGE = "heatweb-debian-guest"
FLAVOR, MINIMAL_FLAVOR = "m1.small", "m1.tiny"
NETWORK, SUBNET, CIDR = "heat-net", "heat-subnet", "10.0.77.0/24"
ROUTER = "heat-router"
# No run of ./test (60 min at most) nor of this script keeps its external network longer.
STALE_EXTERNAL_AGE = datetime.timedelta(hours=3)
# Heat's own default for hidden_stack_tags.
HIDDEN_STACK_TAG = "data-processing-cluster"
RUNNING = ("nova", "glance", "neutron", "heat")
# tempest's [service_available] names and the catalog types that mean them
OPTIONAL = {"cinder": ("block-storage", "volumev3", "volume"), "swift": ("object-store",),
            "zaqar": ("messaging",), "aodh": ("alarming",), "barbican": ("key-manager",),
            "octavia": ("load-balancer",), "designate": ("dns",), "manila": ("sharev2",),
            "sahara": ("data-processing",), "magnum": ("container-infra",),
            "mistral": ("workflowv2", "workflow"), "senlin": ("clustering",),
            "zun": ("container",), "trove": ("database",), "gnocchi": ("metric",),
            "ceilometer": ("metering",), "horizon": (), "ironic": ("baremetal",)}
PUBLIC_NETWORK = "public"  # DevStack's external network (scripts/cloud/bootstrap.py)
CREDENTIAL_SECRET = "heat-tempest-cloud-credential"


def connect(auth):
    return openstack.connect(load_yaml_config=False, load_envvars=False,
                             auth_url=auth["auth_url"], username=auth["username"],
                             password=auth["password"], project_name=auth["project_name"],
                             user_domain_name="Default", project_domain_name="Default",
                             region_name="RegionOne", identity_api_version="3")


def ensure_network(conn):
    """The demo project's heat-net/heat-subnet (servers of the tests boot on it)."""
    net = conn.network.find_network(NETWORK, project_id=conn.current_project_id)
    if net is None:
        net = conn.network.create_network(name=NETWORK)
    if conn.network.find_subnet(SUBNET, network_id=net.id) is None:
        conn.network.create_subnet(name=SUBNET, network_id=net.id, ip_version=4,
                                   cidr=CIDR)
    return net


def ensure_router(conn, net, public):
    """The demo project's heat-router: gateway on ``public``, an interface on heat-subnet
    (Neutron associates a floating IP only with a port whose subnet reaches its network)."""
    router = conn.network.find_router(ROUTER, project_id=conn.current_project_id)
    if router is None:
        router = conn.network.create_router(
            name=ROUTER, external_gateway_info={"network_id": public.id})
    subnet = conn.network.find_subnet(SUBNET, network_id=net.id)
    if not any(ip.get("subnet_id") == subnet.id
               for port in conn.network.ports(device_id=router.id, network_id=net.id)
               for ip in port.fixed_ips):
        conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    return router


def other_external_networks(admin_conn, now=None):
    """The external networks beside ``public``: those older than STALE_EXTERNAL_AGE
    (a killed run's) removed, the others' names returned."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    live = []
    for network in admin_conn.network.networks(is_router_external=True):
        if network.name == PUBLIC_NETWORK:
            continue
        created = datetime.datetime.fromisoformat(network.created_at.replace("Z", "+00:00"))
        if now - created < STALE_EXTERNAL_AGE:
            live.append(network.name)
            continue
        print(f"prepare: removing the stale external network {network.name} "
              f"({network.id}, made {network.created_at})", file=sys.stderr)
        remove_external_network(admin_conn, network)
    return live


def remove_external_network(admin_conn, network):
    """An external network with its floating IPs and the router gateways on it."""
    net_api = admin_conn.network
    for ip in net_api.ips(floating_network_id=network.id):
        net_api.delete_ip(ip, ignore_missing=True)
    for router in net_api.routers():
        if (router.external_gateway_info or {}).get("network_id") == network.id:
            net_api.update_router(router, external_gateway_info={})
    for port in net_api.ports(network_id=network.id):
        net_api.delete_port(port, ignore_missing=True)
    net_api.delete_network(network, ignore_missing=True)


def available_services(admin_conn):
    """tempest's ``[service_available]``: True for what the cloud's catalog has."""
    types = {service.type for service in admin_conn.identity.services()}
    return {**{name: "True" for name in RUNNING},
            **{name: str(any(t in types for t in wanted))
               for name, wanted in OPTIONAL.items()}}


def backup_running(admin_conn):
    """Whether Cinder has a cinder-backup service up (the backup tests need one)."""
    return any(service.binary == "cinder-backup" and service.state == "up"
               for service in admin_conn.block_storage.services())


def credential_secret(conn, demo):
    """The multi-cloud test's ``credential_secret_id``: a Barbican secret of the demo member
    holding an application credential of theirs, in Heat's format (``auth_type`` and
    ``auth``, keystoneauth's options). Made once; found again by name."""
    for secret in conn.key_manager.secrets(name=CREDENTIAL_SECRET):
        return secret.secret_ref.rsplit("/", 1)[-1]
    identity = conn.identity
    user_id = conn.current_user_id
    old = identity.find_application_credential(user_id, CREDENTIAL_SECRET)
    if old is not None:
        identity.delete_application_credential(user_id, old)
    credential = identity.create_application_credential(user_id, CREDENTIAL_SECRET)
    payload = json.dumps({"auth_type": "v3applicationcredential", "auth": {
        "auth_url": demo["auth_url"], "application_credential_id": credential.id,
        "application_credential_secret": credential.secret}})
    secret = conn.key_manager.create_secret(
        name=CREDENTIAL_SECRET, payload=payload, payload_content_type="text/plain",
        secret_type="opaque")
    return secret.secret_ref.rsplit("/", 1)[-1]


def build(clouds, heat_url, log_dir, image_ref=IMAGE):
    admin, demo = clouds["heatweb-admin"]["auth"], clouds["heatweb-demo-member"]["auth"]
    conn = connect(demo)
    image = conn.image.find_image(image_ref)
    guest_image = conn.image.find_image(MINIMAL_IMAGE)
    flavor = conn.compute.find_flavor(FLAVOR)
    minimal = conn.compute.find_flavor(MINIMAL_FLAVOR)
    if not (image and guest_image and flavor and minimal):
        sys.exit(f"the cloud lacks the images {image_ref}/{MINIMAL_IMAGE} or the flavors "
                 f"{FLAVOR}/{MINIMAL_FLAVOR}")
    net = ensure_network(conn)
    admin_conn = connect(admin)
    services = available_services(admin_conn)
    public = admin_conn.network.find_network(PUBLIC_NETWORK)
    if public is not None:
        ensure_router(conn, net, public)
        live = other_external_networks(admin_conn)
        if live:
            print(f"prepare: external networks beside {PUBLIC_NETWORK} (another run's): "
                  f"{', '.join(live)}; an AWS::EC2::EIP fails meanwhile, as in Heat "
                  f"(\"Expected 1 external network, found {len(live) + 1}\")",
                  file=sys.stderr)
    secret_id = credential_secret(conn, demo) if services["barbican"] == "True" else ""
    auth_url = demo["auth_url"].rstrip("/")
    conf = configparser.ConfigParser(interpolation=None)
    conf.optionxform = str
    conf["DEFAULT"] = {"log_dir": log_dir, "log_file": "tempest-debug.log",
                       "use_stderr": "False", "debug": "True"}
    conf["auth"] = {"admin_username": admin["username"], "admin_password": admin["password"],
                    "admin_project_name": admin["project_name"],
                    "admin_domain_name": "Default", "use_dynamic_credentials": "False"}
    conf["identity"] = {"uri_v3": auth_url, "auth_version": "v3", "region": "RegionOne",
                        "v3_endpoint_type": "public"}
    conf["identity-feature-enabled"] = {"api_v2": "False"}
    conf["compute"] = {"image_ref": image.id, "flavor_ref": flavor.id,
                       "flavor_ref_alt": minimal.id, "fixed_network_name": NETWORK}
    conf["network"] = {"project_network_cidr": CIDR,
                       "public_network_id": public.id if public else ""}
    conf["service_available"] = services
    # tempest assumes a cinder-backup; scripts/cloud/extras-up runs one (POSIX driver)
    conf["volume-feature-enabled"] = {
        "backup": str(services["cinder"] == "True" and backup_running(admin_conn))}
    conf["heat_plugin"] = {
        "auth_url": auth_url, "region": "RegionOne", "endpoint_type": "public",
        "catalog_type": "orchestration",
        "username": demo["username"], "password": demo["password"],
        "project_name": demo["project_name"],
        "user_domain_name": "Default", "project_domain_name": "Default",
        "admin_username": admin["username"], "admin_password": admin["password"],
        "admin_project_name": admin["project_name"],
        "image_ref": image_ref, "minimal_image_ref": MINIMAL_IMAGE,
        "instance_type": FLAVOR, "minimal_instance_type": MINIMAL_FLAVOR,
        "fixed_network_name": net.name, "fixed_subnet_name": SUBNET,
        "network_for_ssh": net.name,
        "floating_network_name": PUBLIC_NETWORK,
        "credential_secret_id": secret_id,
        "hidden_stack_tag": HIDDEN_STACK_TAG,
        # A full Debian guest boots in 1.5-4 min under TCG on the loaded 2-core host
        # (the plugin's own default is 1200 s).
        "build_interval": "1", "build_timeout": "900" if image_ref == DEBIAN_IMAGE else "300",
        "convergence_engine_enabled": "True",
        # heat-agents' notifier (not on PyPI): heatweb's copy of its protocol
        "heat_config_notify_script": str(Path(__file__).resolve().parent /
                                         "heat-config-notify"),
    }
    # cancel_update is part of heatweb's API; multi-cloud needs the Barbican secret.
    conf["heat_features_enabled"] = {"stack_cancel": "True",
                                     "multi_cloud": str(bool(secret_id))}
    conf["heatweb"] = {"heat_url": heat_url}  # for a reader of the file; tempest ignores it
    return conf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clouds", required=True)
    parser.add_argument("--heat-url", required=True)
    parser.add_argument("--conf", required=True)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--image-ref", default=IMAGE,
                        help=f"the plugin's image_ref (default {IMAGE}; {DEBIAN_IMAGE} for "
                             "the scenario tests that need cloud-init)")
    args = parser.parse_args()
    with open(args.clouds) as f:
        clouds = yaml.safe_load(f)["clouds"]
    conf = build(clouds, args.heat_url, args.log_dir, args.image_ref)
    with open(args.conf, "w") as f:
        conf.write(f)


if __name__ == "__main__":
    main()
