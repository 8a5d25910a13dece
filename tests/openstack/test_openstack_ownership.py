"""One owner per cloud object on the real cloud (Keystone mode, the OpenStack driver): a
member of another project cannot adopt (and so delete) a stack's server, because Nova,
asked with that member's own token, does not show it to them; an adopt of a server
another stack holds is 409 and stores nothing; a stack locked at level ``all`` takes no
new software deployment and keeps its software config. The server is checked in Nova,
through openstacksdk, not only in heatweb's rows."""
import uuid

import openstack
import pytest

from tests.openstack.keystone_support import Cloud, Heat, keystone_service

pytestmark = pytest.mark.openstack


def _template(name):
    return {"heat_template_version": "2016-10-14", "resources": {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"{name}-net"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": "net"}, "cidr": "10.44.0.0/24"}},
        "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"], "properties": {
            "image": "heatweb-tiny", "flavor": "m1.tiny", "name": f"{name}-server",
            "user_data_format": "SOFTWARE_CONFIG",
            "networks": [{"network": {"get_resource": "net"}}]}},
        "config": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"group": "script", "config": "echo owned"}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
            "signal_transport": "NO_SIGNAL"}}}}


def _adopt(server_id):
    return {"template": {"heat_template_version": "2016-10-14", "resources": {"server": {
        "type": "OS::Nova::Server", "properties": {"image": "heatweb-tiny",
                                                   "flavor": "m1.tiny"}}}},
        "resources": {"server": {"resource_id": server_id, "type": "OS::Nova::Server"}}}


def test_a_server_is_held_by_its_stack_on_the_real_cloud(request, tmp_path_factory):
    cloud = Cloud()
    service = keystone_service(request.config, tmp_path_factory)
    token, body = cloud.token("heatweb-demo-member")
    demo = Heat(service, token, body["project"]["id"])
    alt_token, alt_body = cloud.token("heatweb-alt-member")
    alt = Heat(service, alt_token, alt_body["project"]["id"])
    nova = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    name = f"own{uuid.uuid4().hex[:6]}"
    path = demo.create(name, _template(name))
    demo.wait(path, "CREATE_COMPLETE", timeout=240)
    ids = {r["resource_name"]: r["physical_resource_id"]
           for r in demo.call("GET", f"{path}/resources").json()["resources"]}

    # Another project: Nova does not show the server to alt's member: 404, nothing stored.
    thief = f"thief{uuid.uuid4().hex[:6]}"
    refused = alt.call("POST", "/stacks", {"stack_name": thief,
                                           "adopt_stack_data": _adopt(ids["server"])})
    assert refused.status_code == 404, refused.text
    assert refused.json()["error"]["type"] == "EntityNotFound"
    assert alt.call("GET", f"/stacks/{thief}").status_code == 404

    # The same project: the server is held by the stack: 409, nothing stored.
    taker = f"taker{uuid.uuid4().hex[:6]}"
    refused = demo.call("POST", "/stacks", {"stack_name": taker,
                                            "adopt_stack_data": _adopt(ids["server"])})
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["type"] == "ObjectHeld"
    assert f"held by resource server of stack {name}" in refused.json()["error"]["message"]
    assert demo.call("GET", f"/stacks/{taker}").status_code == 404

    # Locked at level all: no new deployment to the server, the config stays.
    assert demo.call("POST", f"{path}/actions",
                     {"lock": {"level": "all"}, "reason": "maintenance"}).status_code == 200
    demo.wait(path, "LOCK_COMPLETE", timeout=240)
    before = demo.call("GET", f"/software_deployments/metadata/{ids['server']}").json()
    config = demo.call("POST", "/software_configs", {"group": "script", "config": "echo x"})
    assert config.status_code == 200, config.text
    refused = demo.call("POST", "/software_deployments", {
        "config_id": config.json()["software_config"]["id"], "server_id": ids["server"],
        "action": "CREATE", "status": "IN_PROGRESS"})
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["type"] == "StackLocked"
    assert demo.call("GET", f"/software_deployments/metadata/{ids['server']}").json() == before
    refused = demo.call("DELETE", f"/software_configs/{ids['config']}")
    assert refused.status_code == 409, refused.text
    assert demo.call("GET", f"/software_configs/{ids['config']}").status_code == 200
    assert nova.compute.get_server(ids["server"]).status == "ACTIVE"

    assert demo.call("POST", f"{path}/actions", {"unlock": None}).status_code == 200
    demo.wait(path, "UNLOCK_COMPLETE", timeout=240)
    assert demo.call("DELETE", f"/software_configs/{config.json()['software_config']['id']}") \
        .status_code == 204
    assert demo.call("DELETE", path).status_code == 204
    demo.wait(path, "DELETE_COMPLETE", timeout=240)
    assert nova.compute.find_server(ids["server"]) is None or \
        nova.compute.get_server(ids["server"]).status in ("DELETED", "SOFT_DELETED")
