"""Moving from Heat, end to end on the real cloud: upstream Heat 27 makes the stacks,
Heat is stopped, ``manage.py import_heat`` reads its database, and heatweb carries on.

Heat 27 (``scripts/heat-yardstick-up``, from the machine's shared venv of
tests/live/heat27) runs against the one-machine cloud; the demo member, with
python-heatclient, makes two stacks in it: ``web`` (a network, subnet, router on
an external network the test makes, a port, a server on it with a floating IP, a
volume attached to the server, a software config deployed to the server, a hidden
parameter, tags) and ``group`` (a network of its own, a ResourceGroup of two servers
on it and a nested ``OS::Heat::Stack`` holding a port), both made at once. Heat is
stopped, the cloud's objects counted with openstacksdk, and the stacks imported into
heatweb in Keystone mode. Through heatclient against heatweb: every stack (nested
ones too) shows Heat's status, outputs, resources with the same physical ids, and
events; an update is refused until the member re-authorises (a Keystone trust of
heatweb's is made); then the server's metadata is updated and the group scaled by
one, ``web`` is locked at level ``all`` (Nova's lock on the server) and unlocked, and
both are deleted. The cloud's objects are counted after each step: nothing
duplicated, nothing deleted before heatweb's own delete, nothing left after it.
"""
import json
import os
import subprocess
import time
import uuid

import pytest
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from openstack import exceptions as os_exceptions

from tests.conftest import ROOT
from tests.live.heat27.schema import BASE as HEAT27_BASE
from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.keystone_support import Cloud as KeystoneCloud, keystone_service

pytestmark = pytest.mark.openstack

# Heat's default auth_encryption_key (heat.conf sets none): it encrypted the server's
# redacted resource_data with it.
HEAT_KEY = "notgood but just long enough i t"

PORT_CHILD = {"heat_template_version": "2021-04-16",
              "parameters": {"net": {"type": "string"}, "name": {"type": "string"}},
              "resources": {"port": {"type": "OS::Neutron::Port", "properties": {
                  "name": {"get_param": "name"}, "network": {"get_param": "net"}}}},
              "outputs": {"port": {"value": {"get_resource": "port"}}}}


def web_template(tag):
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"public_net": {"type": "string"},
                       "db_password": {"type": "string", "hidden": True},
                       "role": {"type": "string", "default": "web"}},
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "name": f"{tag}-subnet", "network": {"get_resource": "net"},
                "cidr": "10.81.0.0/24"}},
            "router": {"type": "OS::Neutron::Router", "properties": {
                "name": f"{tag}-router",
                "external_gateway_info": {"network": {"get_param": "public_net"}}}},
            "interface": {"type": "OS::Neutron::RouterInterface", "properties": {
                "router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet"}}},
            "port": {"type": "OS::Neutron::Port", "properties": {
                "name": f"{tag}-web-port", "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "name": f"{tag}-web", "image": "heatweb-tiny", "flavor": "m1.tiny",
                "metadata": {"role": {"get_param": "role"}},
                "user_data_format": "SOFTWARE_CONFIG",
                "software_config_transport": "POLL_SERVER_HEAT",
                "networks": [{"port": {"get_resource": "port"}}]}},
            "fip": {"type": "OS::Neutron::FloatingIP", "depends_on": ["interface"],
                    "properties": {"floating_network": {"get_param": "public_net"},
                                   "port_id": {"get_resource": "port"}}},
            "spare_port": {"type": "OS::Neutron::Port", "properties": {
                "name": f"{tag}-spare-port", "network": {"get_resource": "net"},
                "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}},
            "spare_ip": {"type": "OS::Neutron::FloatingIP", "depends_on": ["interface"],
                         "properties": {"floating_network": {"get_param": "public_net"}}},
            "spare_association": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {
                "floatingip_id": {"get_resource": "spare_ip"},
                "port_id": {"get_resource": "spare_port"}}},
            "volume": {"type": "OS::Cinder::Volume",
                       "properties": {"name": f"{tag}-vol", "size": 1}},
            "attachment": {"type": "OS::Cinder::VolumeAttachment", "properties": {
                "instance_uuid": {"get_resource": "server"},
                "volume_id": {"get_resource": "volume"}}},
            "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
                "group": "script", "config": "#!/bin/sh\necho configured",
                "inputs": [{"name": "db_password"}]}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
                "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
                "signal_transport": "NO_SIGNAL",
                "input_values": {"db_password": {"get_param": "db_password"}}}}},
        "outputs": {"address": {"value": {"get_attr": ["fip", "floating_ip_address"]}},
                    "server": {"value": {"get_resource": "server"}},
                    "net": {"value": {"get_resource": "net"}}}}


def group_template(tag):
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"count": {"type": "number", "default": 2}},
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-gnet"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "name": f"{tag}-gsubnet", "network": {"get_resource": "net"},
                "cidr": "10.82.0.0/24"}},
            "group": {"depends_on": ["subnet"],"type": "OS::Heat::ResourceGroup", "properties": {
                "count": {"get_param": "count"},
                "resource_def": {"type": "OS::Nova::Server", "properties": {
                    "name": f"{tag}-worker-%index%", "image": "heatweb-tiny",
                    "flavor": "m1.tiny", "networks": [{"network": {"get_resource": "net"}}]}}}},
            "sidecar": {"type": "OS::Heat::Stack", "depends_on": ["subnet"], "properties": {
                "template": json.dumps(PORT_CHILD),
                "parameters": {"net": {"get_resource": "net"}, "name": f"{tag}-sidecar-port"}}}},
        "outputs": {"workers": {"value": {"get_attr": ["group", "refs"]}},
                    "sidecar": {"value": {"get_attr": ["sidecar", "outputs", "port"]}}}}


# The cloud's objects ----------------------------------------------------------------

def census(admin_cloud, tag, public_id):
    """The ids of the cloud's objects of the test, by kind (each sorted)."""
    net = admin_cloud.network
    nets = [n for n in net.networks() if n.name in (f"{tag}-net", f"{tag}-gnet")]
    ports = [p.id for n in nets for p in net.ports(network_id=n.id)]
    ports += [p.id for p in net.ports(network_id=public_id)]  # gateway, floating IPs
    found = {
        "servers": [s.id for s in admin_cloud.compute.servers(all_projects=True)
                    if s.name.startswith(f"{tag}-")],
        "networks": [n.id for n in nets],
        "subnets": [s.id for s in net.subnets() if s.name in (f"{tag}-subnet", f"{tag}-gsubnet")],
        "routers": [r.id for r in net.routers() if r.name == f"{tag}-router"],
        "ports": ports,
        "floating_ips": [f.id for f in net.ips(floating_network_id=public_id)],
        "volumes": [v.id for v in admin_cloud.block_storage.volumes(all_projects=True)
                    if v.name == f"{tag}-vol"],
        "attachments": [f"{v.id}@{a['server_id']}"
                        for v in admin_cloud.block_storage.volumes(all_projects=True)
                        if v.name == f"{tag}-vol" for a in v.attachments],
    }
    return {kind: sorted(ids) for kind, ids in found.items()}


def heat_domain_records(admin_cloud):
    """Heat's own Keystone records: the projects and users of its stack-user domain."""
    domain = admin_cloud.identity.find_domain("heat")
    if domain is None:
        return set()
    return {("project", p.id) for p in admin_cloud.identity.projects(domain_id=domain.id)} | \
        {("user", u.id) for u in admin_cloud.identity.users(domain_id=domain.id)}


def sweep(admin_cloud, tag, public_id, heat_records=()):
    """Best effort: remove what a failed run left of the test in the shared cloud, and
    Heat's stack-user projects and users the test's Heat made (heatweb leaves them)."""
    net = admin_cloud.network
    for kind, record_id in heat_records:
        try:
            (admin_cloud.identity.delete_project if kind == "project"
             else admin_cloud.identity.delete_user)(record_id, ignore_missing=True)
        except os_exceptions.SDKException:
            pass
    for call in (
            lambda: [admin_cloud.compute.delete_server(s, force=True)
                     for s in admin_cloud.compute.servers(all_projects=True)
                     if s.name.startswith(f"{tag}-")],
            lambda: [net.delete_ip(f) for f in net.ips(floating_network_id=public_id)],
            lambda: [admin_cloud.block_storage.delete_volume(v, force=True)
                     for v in admin_cloud.block_storage.volumes(all_projects=True)
                     if v.name == f"{tag}-vol"],
            lambda: [(net.remove_interface_from_router(r, subnet_id=s.id)
                      if s.name == f"{tag}-subnet" else None)
                     for r in net.routers() if r.name == f"{tag}-router"
                     for s in net.subnets()],
            lambda: [net.delete_router(r) for r in net.routers() if r.name == f"{tag}-router"],
            lambda: [net.delete_port(p) for n in net.networks()
                     if n.name in (f"{tag}-net", f"{tag}-gnet")
                     for p in net.ports(network_id=n.id)],
            lambda: [net.delete_network(n) for n in net.networks()
                     if n.name in (f"{tag}-net", f"{tag}-gnet")],
            lambda: net.delete_network(public_id)):
        for _ in range(20):
            try:
                call()
                break
            except os_exceptions.SDKException:
                time.sleep(2)


# Heat's side ------------------------------------------------------------------------

def heat_view(heat, stack_id):
    """What Heat shows of a stack and, by id, of every stack nested in it."""
    stack = heat.stacks.get(stack_id)
    resources = heat.resources.list(stack_id)
    view = {stack_id: {
        "name": stack.stack_name, "status": stack.stack_status,
        "outputs": {o["output_key"]: o["output_value"] for o in stack.outputs or []},
        "resources": {r.resource_name: (r.physical_resource_id, r.resource_status,
                                        r.resource_type) for r in resources},
        "events": [(e.resource_name, e.resource_status, e.physical_resource_id)
                   for e in heat.events.list(stack_id, sort_dir="asc", limit=1000)]}}
    for res in resources:
        if res.resource_type in ("OS::Heat::ResourceGroup", "OS::Heat::Stack"):
            view.update(heat_view(heat, res.physical_resource_id))
    return view


@pytest.fixture(scope="module")
def from_heat(tmp_path_factory, admin_cloud, cloud):
    """Heat 27 up, the stacks made, Heat's view read, Heat down; a sweep at the end."""
    base = tmp_path_factory.mktemp("heat27")
    tag = f"mig{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "HEATWEB_HEAT_VENV": str(HEAT27_BASE / "venv")}
    public = admin_cloud.network.create_network(
        name=f"{tag}-public", is_router_external=True, provider_network_type="flat",
        provider_physical_network=tag)
    admin_cloud.network.create_subnet(network_id=public.id, cidr="172.31.29.0/24",
                                      ip_version=4, is_dhcp_enabled=False,
                                      name=f"{tag}-public-subnet")
    made = {"tag": tag, "public": public.id, "heat_records": set()}
    keystone_before = heat_domain_records(admin_cloud)
    started = time.monotonic()
    try:
        up = subprocess.run([str(ROOT / "scripts" / "heat-yardstick-up"), str(base)], env=env,
                            capture_output=True, text=True, timeout=900)
        assert up.returncode == 0, up.stdout[-2000:] + up.stderr[-2000:]
        made["heat_db"] = (base / "heat-db").read_text().strip()
        heat = heat_client.Client("1", token=cloud.auth_token, endpoint=(
            f"{(base / 'heat-url').read_text().strip()}/{cloud.current_project_id}"))
        try:
            web = heat.stacks.create(
                stack_name=f"{tag}-web", template=web_template(tag), tags="from-heat,web",
                parameters={"public_net": public.id, "db_password": "s3cret-pw"})["stack"]["id"]
            group = heat.stacks.create(stack_name=f"{tag}-group", template=group_template(tag),
                                       tags="from-heat")["stack"]["id"]
            wait_stack(heat, web, "CREATE_COMPLETE")
            wait_stack(heat, group, "CREATE_COMPLETE")
            made.update(web=web, group=group, view={**heat_view(heat, web),
                                                   **heat_view(heat, group)})
            made["deployment"] = heat.resources.get(web, "deployment").physical_resource_id
        finally:
            subprocess.run([str(ROOT / "scripts" / "heat-yardstick-down"), str(base)],
                           capture_output=True, timeout=120)
        made["heat_seconds"] = time.monotonic() - started
        made["heat_records"] = heat_domain_records(admin_cloud) - keystone_before - {
            ("user", u.id) for u in [admin_cloud.identity.find_user("heat_domain_admin")] if u}
        yield made
    finally:
        sweep(admin_cloud, tag, public.id, made["heat_records"])


def test_heatweb_carries_on_with_heats_stacks(request, tmp_path_factory, from_heat, member,
                                              admin_cloud, cloud):
    tag, public, view = from_heat["tag"], from_heat["public"], from_heat["view"]
    web, group = from_heat["web"], from_heat["group"]
    before = census(admin_cloud, tag, public)
    assert (len(before["servers"]), len(before["floating_ips"]), len(before["volumes"]),
            len(before["attachments"])) == (3, 2, 1, 1), before
    associated = {f.id: f.port_id for f in admin_cloud.network.ips(floating_network_id=public)}
    assert associated[view[web]["resources"]["spare_ip"][0]] == \
        view[web]["resources"]["spare_port"][0]
    heat_ids = {kind: sorted(pid for stack in view.values()
                             for pid, _, rtype in stack["resources"].values()
                             if rtype == type_name)
                for kind, type_name in (("servers", "OS::Nova::Server"),
                                        ("volumes", "OS::Cinder::Volume"),
                                        ("floating_ips", "OS::Neutron::FloatingIP"),
                                        ("routers", "OS::Neutron::Router"))}
    assert {k: before[k] for k in heat_ids} == heat_ids

    # The member is known to heatweb (a first request), then the operator imports.
    heat = member.heat
    list(heat.stacks.list())
    project = cloud.current_project_id
    service = keystone_service(request.config, tmp_path_factory)  # the member's heatweb
    args = ("import_heat", "--heat-database", from_heat["heat_db"], "--project", project,
            "--auth-encryption-key", HEAT_KEY)
    t0 = time.monotonic()
    dry = service.manage(*args, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "import: 2" in dry.stdout, dry.stdout
    done = service.manage(*args)
    import_seconds = time.monotonic() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    assert "imported: 2" in done.stdout, done.stdout
    again = service.manage(*args)
    assert "already imported: 2" in again.stdout, again.stdout
    assert census(admin_cloud, tag, public) == before  # the import only read

    # Every stack, nested ones too, as Heat showed it.
    # Heat's floating IP association's physical id is its own row's id, naming nothing in
    # the cloud: heatweb's is the floating IP's, as for the associations it makes.
    spare = view[web]["resources"]["spare_association"]
    assert spare[0].isdigit()
    view[web]["resources"]["spare_association"] = \
        (view[web]["resources"]["spare_ip"][0], *spare[1:])
    for stack_id, heat_saw in view.items():
        stack = heat.stacks.get(stack_id)
        assert (stack.stack_name, stack.stack_status) == (heat_saw["name"], heat_saw["status"])
        assert {o["output_key"]: o["output_value"] for o in stack.outputs or []} == \
            heat_saw["outputs"], stack.stack_name
        assert {r.resource_name: (r.physical_resource_id, r.resource_status, r.resource_type)
                for r in heat.resources.list(stack_id)} == heat_saw["resources"]
        assert [(e.resource_name, e.resource_status, e.physical_resource_id)
                for e in heat.events.list(stack_id, sort_dir="asc", limit=1000)] == \
            heat_saw["events"], stack.stack_name
    web_stack = heat.stacks.get(web)
    assert sorted(web_stack.tags) == ["from-heat", "web"]
    assert web_stack.parameters["db_password"] == "******"
    assert heat.software_deployments.get(from_heat["deployment"]).status == "COMPLETE"

    # Waiting for the owner's consent: no update; then the member re-authorises.
    with pytest.raises(heat_exc.HTTPForbidden) as refused:
        heat.stacks.update(web, existing=True, parameters={"role": "app"})
    assert "imported from Heat" in str(refused.value)
    keystone = KeystoneCloud()
    trusts_before = set(keystone.trusts(cloud.current_user_id))
    for stack_id, name in ((web, f"{tag}-web"), (group, f"{tag}-group")):
        member.action(name, stack_id, {"reauthorise": None})
    assert len(set(keystone.trusts(cloud.current_user_id)) - trusts_before) == 2

    # An update of each: the server's metadata, the group scaled by one.
    server_id = view[web]["resources"]["server"][0]
    heat.stacks.update(web, existing=True, parameters={"role": "app"})
    wait_stack(heat, web, "UPDATE_COMPLETE")
    assert admin_cloud.compute.get_server_metadata(server_id).metadata == {"role": "app"}
    heat.stacks.update(group, existing=True, parameters={"count": 3})
    wait_stack(heat, group, "UPDATE_COMPLETE")
    workers = {o["output_key"]: o["output_value"]
               for o in heat.stacks.get(group).outputs}["workers"]
    assert len(workers) == 3 and workers[:2] == view[group]["outputs"]["workers"]

    # A lock at level all sets Nova's lock on the server; the unlock lifts it.
    member.action(f"{tag}-web", web, {"lock": {"level": "all"}, "reason": "migration check"})
    wait_stack(heat, web, "LOCK_COMPLETE")
    assert admin_cloud.compute.get_server(server_id).is_locked
    member.action(f"{tag}-web", web, {"unlock": None})
    wait_stack(heat, web, "UNLOCK_COMPLETE")
    assert not admin_cloud.compute.get_server(server_id).is_locked

    # Nothing Heat made was deleted or duplicated; the one new server is the group's.
    after = census(admin_cloud, tag, public)
    for kind, ids in before.items():
        if kind in ("servers", "ports"):
            assert set(ids) <= set(after[kind]), kind
        else:
            assert after[kind] == ids, kind
    assert set(after["servers"]) - set(before["servers"]) == {workers[2]}
    assert len(after["ports"]) == len(before["ports"]) + 1  # the new worker's

    # heatweb deletes both; the cloud keeps nothing of them.
    heat.stacks.delete(group)
    heat.stacks.delete(web)
    wait_for(lambda: _gone(heat, group), "the group stack's delete", timeout=240)
    wait_for(lambda: _gone(heat, web), "the web stack's delete", timeout=240)
    left = census(admin_cloud, tag, public)
    assert left == {kind: [] for kind in before}, left
    # Heat's own Keystone records of the stacks: the server's stack user (its id in the
    # server's resource data, imported with it) goes with the server, as Heat deletes it;
    # the project per stack in Heat's stack-user domain stays (docs/migration.md: the
    # operator removes them with Heat's domain admin); the fixture's sweep does here.
    records = from_heat["heat_records"]
    projects = {r for r in records if r[0] == "project"}
    users = records - projects
    assert projects and users
    assert projects <= heat_domain_records(admin_cloud)
    assert not users & heat_domain_records(admin_cloud)
    print(f"\nmigration figures: Heat up and its stacks made in {from_heat['heat_seconds']:.0f} s;"
          f" import {import_seconds:.1f} s; before {({k: len(v) for k, v in before.items()})};"
          f" after the update {({k: len(v) for k, v in after.items()})};"
          f" Heat's stack-user projects left: {len(projects)}, its users deleted:"
          f" {len(users)}")


def _gone(heat, stack_id):
    try:
        return heat.stacks.get(stack_id).stack_status == "DELETE_COMPLETE"
    except heat_exc.HTTPNotFound:
        return True
