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
tempest and the plugin skip the tests that need it. With Barbican, the multi-cloud
test gets its ``credential_secret_id``: a secret of the demo member holding an
application credential of theirs, as Heat's docs describe it. DevStack's ``public``
external network (scripts/cloud/bootstrap.py) is the floating network. No test is
skipped by name here.
"""
import argparse
import configparser
import json
import sys

import openstack
import yaml

IMAGE = "heatweb-tiny"  # bootstrap.py's public image (a fake record in Nova)
# bootstrap.py's guest image: its servers boot as real busybox guests that run their
# user_data (docs/guests.md). The plugin's minimal image: the tests that boot one run
# a shell user_data (the multi-signal wait condition curls its handle 25 times).
MINIMAL_IMAGE = "heatweb-guest"
FLAVOR, MINIMAL_FLAVOR = "m1.small", "m1.tiny"
NETWORK, SUBNET, CIDR = "heat-net", "heat-subnet", "10.0.77.0/24"
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


def available_services(admin_conn):
    """tempest's ``[service_available]``: True for what the cloud's catalog has."""
    types = {service.type for service in admin_conn.identity.services()}
    return {**{name: "True" for name in RUNNING},
            **{name: str(any(t in types for t in wanted))
               for name, wanted in OPTIONAL.items()}}


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


def build(clouds, heat_url, log_dir):
    admin, demo = clouds["heatweb-admin"]["auth"], clouds["heatweb-demo-member"]["auth"]
    conn = connect(demo)
    image = conn.image.find_image(IMAGE)
    guest_image = conn.image.find_image(MINIMAL_IMAGE)
    flavor = conn.compute.find_flavor(FLAVOR)
    minimal = conn.compute.find_flavor(MINIMAL_FLAVOR)
    if not (image and guest_image and flavor and minimal):
        sys.exit(f"the cloud lacks the images {IMAGE}/{MINIMAL_IMAGE} or the flavors "
                 f"{FLAVOR}/{MINIMAL_FLAVOR}")
    net = ensure_network(conn)
    admin_conn = connect(admin)
    services = available_services(admin_conn)
    public = admin_conn.network.find_network(PUBLIC_NETWORK)
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
    # scripts/cloud/extras-up runs no cinder-backup (tempest assumes one)
    conf["volume-feature-enabled"] = {"backup": "False"}
    conf["heat_plugin"] = {
        "auth_url": auth_url, "region": "RegionOne", "endpoint_type": "public",
        "catalog_type": "orchestration",
        "username": demo["username"], "password": demo["password"],
        "project_name": demo["project_name"],
        "user_domain_name": "Default", "project_domain_name": "Default",
        "admin_username": admin["username"], "admin_password": admin["password"],
        "admin_project_name": admin["project_name"],
        "image_ref": IMAGE, "minimal_image_ref": MINIMAL_IMAGE,
        "instance_type": FLAVOR, "minimal_instance_type": MINIMAL_FLAVOR,
        "fixed_network_name": net.name, "fixed_subnet_name": SUBNET,
        "network_for_ssh": net.name,
        "floating_network_name": PUBLIC_NETWORK,
        "credential_secret_id": secret_id,
        "hidden_stack_tag": HIDDEN_STACK_TAG,
        "build_interval": "1", "build_timeout": "300",
        "convergence_engine_enabled": "True",
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
    args = parser.parse_args()
    with open(args.clouds) as f:
        clouds = yaml.safe_load(f)["clouds"]
    conf = build(clouds, args.heat_url, args.log_dir)
    with open(args.conf, "w") as f:
        conf.write(f)


if __name__ == "__main__":
    main()
