"""heatweb driving the real cloud: every effect checked directly in Nova, Glance and Neutron."""
import uuid

import pytest
from heatclient import exc as heat_exc
from openstack import exceptions as os_exceptions

from tests.openstack.conftest import wait_for, wait_stack
from tests.openstack.keystone_support import CLOUD_BASE

pytestmark = pytest.mark.openstack


def template(tag, *, server_props=None, metadata=None, other_user_data=""):
    """A network, subnet, port and image, a server on that port, one on the network."""
    server = {"image": {"get_resource": "image"}, "flavor": "m1.tiny",
              "name": f"{tag}-web", "networks": [{"port": {"get_resource": "port"}}],
              "metadata": metadata or {"role": "web"}, "user_data": "#!/bin/sh\necho hi\n",
              "user_data_format": "RAW", **(server_props or {})}
    return {
        "heat_template_version": "2016-10-14",
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {
                "name": f"{tag}-subnet", "network": {"get_resource": "net"},
                "cidr": "10.42.0.0/24"}},
            "port": {"type": "OS::Neutron::Port", "depends_on": ["subnet"], "properties": {
                "name": f"{tag}-port", "network": f"{tag}-net",  # by name, as Heat takes it
                "security_groups": ["default"]}},
            "image": {"type": "OS::Glance::Image", "properties": {
                "name": f"{tag}-image", "data": "not really a disk\n", "disk_format": "raw",
                "container_format": "bare"}},
            "web": {"type": "OS::Nova::Server", "properties": server},
            "sg": {"type": "OS::Neutron::SecurityGroup", "properties": {"name": f"{tag}-sg"}},
            "other": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
                "image": {"get_resource": "image"}, "flavor": "m1.tiny", "name": f"{tag}-other",
                "networks": [{"network": {"get_resource": "net"}}],
                "security_groups": [{"get_resource": "sg"}], "user_data": other_user_data}},
        },
        "outputs": {"address": {"value": {"get_attr": ["web", "first_address"]}},
                    "port_ip": {"value": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]}},
                    "web_port": {"value": {"get_attr": ["web", "addresses", f"{tag}-net", 0,
                                                        "port"]}},
                    "other_port": {"value": {"get_attr": ["other", "addresses", f"{tag}-net",
                                                          0, "port"]}}},
    }


def physical(heat, stack_id):
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}


def outputs(heat, stack_id):
    stack = heat.stacks.get(stack_id)
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def test_a_stack_of_network_port_image_and_servers_lives_in_the_cloud(member, cloud):
    heat, tag = member.heat, f"os{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag))["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    server = cloud.compute.get_server(ids["web"])
    assert (server.name, server.status) == (f"{tag}-web", "ACTIVE")
    assert server.metadata["role"] == "web"
    assert cloud.network.get_network(ids["net"]).name == f"{tag}-net"
    assert cloud.network.get_subnet(ids["subnet"]).cidr == "10.42.0.0/24"
    port = cloud.network.get_port(ids["port"])
    assert (port.name, port.device_id) == (f"{tag}-port", ids["web"])
    assert port.security_group_ids == [cloud.network.find_security_group(
        "default", ignore_missing=False).id]
    # Each Neutron object carries its creation key as a tag (the port's given in its POST,
    # which this cloud's ML2 takes: tag_ports_during_bulk_creation).
    for made in (port, cloud.network.get_network(ids["net"])):
        assert len([t for t in made.tags if t.startswith("heatweb-key:")]) == 1, made.tags
    # The port's tag came with its POST: Neutron logged no tag PUT for it.
    neutron_log = (CLOUD_BASE / "log" / "neutron-api-access.log").read_text(errors="replace")
    assert f"/v2.0/ports/{ids['port']}/tags" not in neutron_log
    assert cloud.image.get_image(ids["image"]).name == f"{tag}-image"
    address = port.fixed_ips[0]["ip_address"]
    # Each address carries its port, as Heat shows them; the port Nova made for the
    # other server has the server's security groups.
    other_port = outputs(heat, stack_id).pop("other_port")
    assert outputs(heat, stack_id) == {"address": address, "port_ip": address,
                                       "web_port": ids["port"], "other_port": other_port}
    assert cloud.network.get_port(other_port).device_id == ids["other"]
    assert cloud.network.get_port(other_port).security_group_ids == [ids["sg"]]
    assert server.addresses[f"{tag}-net"][0]["addr"] == address

    # Update in place: the server's name and metadata change, the server stays.
    heat.stacks.update(stack_id, template=template(tag, server_props={"name": f"{tag}-renamed"},
                                                   metadata={"role": "db"}))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    server = cloud.compute.get_server(ids["web"])
    assert server.name == f"{tag}-renamed"
    assert server.metadata["role"] == "db" and "heatweb_creation_key" in server.metadata
    key = server.metadata["heatweb_creation_key"]

    # Only the metadata changes: one PUT of the whole set, the creation key kept in it.
    heat.stacks.update(stack_id, template=template(tag, server_props={"name": f"{tag}-renamed"},
                                                   metadata={"tier": "db"}))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert cloud.compute.get_server(ids["web"]).metadata == {"tier": "db",
                                                             "heatweb_creation_key": key}

    # Update with replacement: new user_data is a new server; the old one is deleted.
    # The server on the port is replaced onto the same port (Nova detaches it first).
    heat.stacks.update(stack_id, template=template(
        tag, server_props={"name": f"{tag}-renamed", "user_data": "#!/bin/sh\necho v2\n"},
        metadata={"role": "db"}, other_user_data="#!/bin/sh\necho v2\n"))
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    new_ids = physical(heat, stack_id)
    new_id, new_web = new_ids["other"], new_ids["web"]
    assert new_id != ids["other"] and new_web != ids["web"]
    assert cloud.compute.get_server(new_id).status == "ACTIVE"
    assert cloud.compute.get_server(new_web).status == "ACTIVE"
    assert cloud.network.get_port(ids["port"]).device_id == new_web
    assert outputs(heat, stack_id)["address"] == address
    wait_for(lambda: cloud.compute.find_server(ids["other"]) is None, "the old server gone")
    wait_for(lambda: cloud.compute.find_server(ids["web"]) is None, "the old web server gone")

    # Suspend and resume reach Nova.
    heat.actions.suspend(stack_id)
    wait_stack(heat, stack_id, "SUSPEND_COMPLETE")
    assert {cloud.compute.get_server(i).status for i in (new_id, new_web)} == {"SUSPENDED"}
    heat.actions.resume(stack_id)
    wait_stack(heat, stack_id, "RESUME_COMPLETE")
    assert {cloud.compute.get_server(i).status for i in (new_id, new_web)} == {"ACTIVE"}

    # Delete removes every object.
    ids = physical(heat, stack_id)
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    for server_id in (ids["web"], ids["other"]):
        # Done when Nova says DELETED, as for Heat; its record may show so for a moment.
        server = cloud.compute.find_server(server_id)
        assert server is None or server.status == "DELETED", server
        wait_for(lambda: cloud.compute.find_server(server_id) is None, "the server gone")
    assert cloud.image.find_image(ids["image"]) is None
    for kind in ("port", "subnet", "network"):
        assert getattr(cloud.network, f"find_{kind}")(ids[kind if kind != "network" else "net"]) \
            is None


def test_lock_all_is_enforced_by_the_cloud_and_unlock_restores_prior_state(member, cloud):
    heat, tag = member.heat, f"lk{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=tag, template=template(tag))["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)
    cloud.compute.lock_server(ids["other"], locked_reason="kept by ops")

    member.action(tag, stack_id, {"lock": {"level": "all"}, "reason": "DB maintenance"})
    wait_for(lambda: cloud.compute.get_server(ids["web"]).is_locked, "the server locked")
    web = cloud.compute.get_server(ids["web"])
    assert web.locked_reason == f"heatweb stack {tag} locked: DB maintenance"
    assert cloud.image.get_image(ids["image"]).is_protected is True
    with pytest.raises(os_exceptions.ConflictException, match="is locked"):
        cloud.compute.delete_server(ids["web"])
    with pytest.raises(os_exceptions.ForbiddenException):
        cloud.image.delete_image(ids["image"])
    assert cloud.compute.get_server(ids["other"]).locked_reason == "kept by ops"

    member.action(tag, stack_id, {"unlock": None})
    wait_for(lambda: not cloud.compute.get_server(ids["web"]).is_locked, "the server unlocked")
    wait_for(lambda: not cloud.image.get_image(ids["image"]).is_protected, "image unprotected")
    other = cloud.compute.get_server(ids["other"])
    assert (other.is_locked, other.locked_reason) == (True, "kept by ops")

    cloud.compute.unlock_server(ids["other"])
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")


def test_a_server_nova_puts_in_error_fails_with_novas_fault(member, cloud):
    heat, tag = member.heat, f"er{uuid.uuid4().hex[:6]}"
    body = {"heat_template_version": "2016-10-14", "resources": {"big": {
        "type": "OS::Nova::Server",
        "properties": {"image": "heatweb-tiny", "flavor": "m1.huge", "name": f"{tag}-big"}}}}
    stack_id = heat.stacks.create(stack_name=tag, template=body)["stack"]["id"]
    stack = wait_stack(heat, stack_id, "CREATE_FAILED")
    assert "Went to status ERROR due to \"Message: No valid host was found." in \
        stack.stack_status_reason
    server = cloud.compute.get_server(physical(heat, stack_id)["big"])
    assert server.status == "ERROR" and "No valid host" in server.fault["message"]
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")


def test_check_reports_an_object_deleted_behind_heatwebs_back(member, cloud):
    heat, tag = member.heat, f"ck{uuid.uuid4().hex[:6]}"
    body = {"heat_template_version": "2016-10-14", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{tag}-net"}},
        "group": {"type": "OS::Neutron::SecurityGroup", "properties": {
            "name": f"{tag}-sg", "rules": [{"protocol": "tcp", "port_range_min": 22,
                                            "port_range_max": 22}]}},
        "out": {"type": "OS::Neutron::SecurityGroup", "properties": {
            "name": f"{tag}-out", "rules": [{"direction": "egress", "protocol": "tcp",
                                             "port_range_min": 443, "port_range_max": 443}]}},
        "members": {"type": "OS::Neutron::SecurityGroup", "properties": {
            "name": f"{tag}-members", "rules": [{"remote_mode": "remote_group_id"}]}}}}
    stack_id = heat.stacks.create(stack_name=tag, template=body)["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = physical(heat, stack_id)

    def rules(group):
        return sorted((r["direction"], r["ethertype"], r["protocol"], r["port_range_min"])
                      for r in cloud.network.get_security_group(ids[group]).security_group_rules)
    # As Heat: Neutron's default egress rules stay unless the template has an egress rule.
    assert rules("group") == [("egress", "IPv4", None, None), ("egress", "IPv6", None, None),
                              ("ingress", "IPv4", "tcp", 22)]
    assert rules("out") == [("egress", "IPv4", "tcp", 443)]
    # remote_mode remote_group_id naming no group: the group's own members (Heat's).
    members = cloud.network.get_security_group(ids["members"]).security_group_rules
    assert [(r["direction"], r["remote_group_id"], r["remote_ip_prefix"]) for r in members
            if r["direction"] == "ingress"] == [("ingress", ids["members"], None)]

    # An update reconciles (Heat's _update_rules): 22 goes, 80 comes, the defaults stay;
    # the egress-only group gets its ingress rule and keeps its own egress rule.
    body["resources"]["group"]["properties"]["rules"] = [
        {"protocol": "tcp", "port_range_min": 80, "port_range_max": 80}]
    body["resources"]["out"]["properties"]["rules"].append(
        {"protocol": "tcp", "port_range_min": 22, "port_range_max": 22})
    heat.stacks.update(stack_id, template=body)
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert rules("group") == [("egress", "IPv4", None, None), ("egress", "IPv6", None, None),
                              ("ingress", "IPv4", "tcp", 80)]
    assert rules("out") == [("egress", "IPv4", "tcp", 443), ("ingress", "IPv4", "tcp", 22)]

    cloud.network.delete_network(ids["net"])
    heat.actions.check(stack_id)
    stack = wait_stack(heat, stack_id, "CHECK_FAILED")
    assert f"The network {ids['net']} could not be found" in stack.stack_status_reason
    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")


OPTIONS_TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  network:
    type: string
    constraints: [{custom_constraint: neutron.network}]
  flavor:
    type: string
    default: m1.tiny
    constraints: [{custom_constraint: nova.flavor}]
  image:
    type: string
    default: heatweb-tiny
    constraints: [{custom_constraint: glance.image}]
  tags: {type: comma_delimited_list, default: "web,blue"}
resources:
  server:
    type: OS::Nova::Server
    properties:
      image: {get_param: image}
      flavor: {get_param: flavor}
      admin_pass: Pass-word-1
      config_drive: true
      tags: {get_param: tags}
      networks: [{network: {get_param: network}}]
"""


def test_server_options_and_custom_constraints_reach_nova(member, cloud):
    heat, tag = member.heat, f"os{uuid.uuid4().hex[:6]}"
    net = cloud.network.create_network(name=f"{tag}-net")
    cloud.network.create_subnet(network_id=net.id, cidr="10.43.0.0/24", ip_version=4)
    try:
        for bad in ({"network": f"{tag}-nowhere"}, {"network": net.id, "flavor": "m9.none"},
                    {"network": net.id, "image": f"{tag}-no-image"}):
            with pytest.raises(heat_exc.HTTPBadRequest) as caught:
                heat.stacks.validate(template=OPTIONS_TEMPLATE, parameters=bad)
            assert "Error validating value" in caught.value.error["error"]["message"]
        stack_id = heat.stacks.create(stack_name=tag, template=OPTIONS_TEMPLATE,
                                      parameters={"network": f"{tag}-net"})["stack"]["id"]
        wait_stack(heat, stack_id, "CREATE_COMPLETE")
        server = cloud.compute.get_server(physical(heat, stack_id)["server"])
        assert sorted(server.tags) == ["blue", "web"] and server.has_config_drive
        heat.stacks.update(stack_id, existing=True, parameters={"tags": "web,green"})
        wait_stack(heat, stack_id, "UPDATE_COMPLETE")
        assert sorted(cloud.compute.get_server(server.id).tags) == ["green", "web"]
        heat.stacks.delete(stack_id)
        wait_stack(heat, stack_id, "DELETE_COMPLETE")
    finally:
        wait_for(lambda: not list(cloud.network.ports(network_id=net.id)), "ports gone")
        cloud.network.delete_network(net.id)
