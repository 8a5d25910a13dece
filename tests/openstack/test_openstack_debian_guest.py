"""The full Debian guest: cloud-init unpacks Heat's SOFTWARE_CONFIG user data, and
heatweb's agent applies Heat's three kinds of software config, in one real server polling
heatweb's CloudFormation metadata API (``POLL_SERVER_CFN``) as os-collect-config would.

A server of the image ``heatweb-debian-guest`` boots (Nova's guest driver,
docs/guests.md) Debian bookworm from a disk: systemd, cloud-init reading Nova's config
drive, heat-cfntools, puppet, and ``softwareconfig/agent`` of this repository started by a
systemd unit. heatweb gives Nova the server's ``user_data`` as Heat's multipart MIME
(``user_data_format: SOFTWARE_CONFIG``): the template's own user_data is multipart
here, a shell script (cloud-init runs it) and the agent's poll interval as JSON, each
added as a part of its own as Heat does; its ``cfn-init-data`` part carries
os-collect-config's ``cfn`` settings (heatweb's ``/v1/`` and the server's EC2 key pair,
its stack user's credential in Keystone). Nothing on the host runs an agent: the
deployments complete only because the guest's agent read them with EC2-signed
``DescribeStackResource`` requests (Keystone checked each signature), ran them with the
``script``, ``cfn-init`` and ``puppet`` hooks and signalled back (``CFN_SIGNAL``) through
QEMU's 127.0.0.1 forwards.
"""
import json
import time
import uuid
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

import openstack
import pytest

from tests.openstack.conftest import wait_stack
from tests.openstack.test_openstack_agent_guests import POLL, TIMEOUT, network, tell
from tests.openstack.test_openstack_agent_guests import listener  # noqa: F401 - the fixture
from tests.openstack.test_openstack_guests import qemu_guests

pytestmark = pytest.mark.openstack

DEBIAN_IMAGE = "heatweb-debian-guest"


def user_data(listener):
    """Multipart user data: a script for cloud-init, the agent's poll interval as JSON."""
    script = ("#!/bin/sh\n"
              # the part handler of Heat's MIME wrote the server's metadata part here
              + tell(listener,
                     "user_data $(hostname) $(cat /var/lib/heat-cfntools/cfn-init-data)"))
    settings = {"heatweb_agent": {"interval": POLL}}
    mime = MIMEMultipart()
    for text, subtype, filename in ((script, "x-shellscript", "hello.sh"),
                                    (json.dumps(settings), "plain", "agent.json")):
        part = MIMEText(text, subtype)
        part.add_header("Content-Disposition", "attachment", filename=filename)
        mime.attach(part)
    return mime.as_string()


def template(name, member, listener):
    return {"heat_template_version": "2016-10-14",
            "parameters": {"greeting": {"type": "string", "default": "hello"}},
            "resources": {
                **network(name, "10.51.0.0/24"),
                "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"],
                           "properties": {
                               "image": DEBIAN_IMAGE, "flavor": "m1.small",
                               "name": f"{name}-server",
                               "networks": [{"network": {"get_resource": "net"}}],
                               "user_data_format": "SOFTWARE_CONFIG",
                               "software_config_transport": "POLL_SERVER_CFN",
                               "user_data": user_data(listener)}},
                "app": {"type": "OS::Heat::SoftwareComponent", "properties": {
                    "configs": [{"actions": ["CREATE"], "tool": "script", "config": (
                        "#!/bin/sh\n"
                        'echo "$greeting from $(hostname), $(. /etc/os-release; '
                        'echo $PRETTY_NAME)"\n'
                        'printf %s "$(systemctl is-active heatweb-agent)"'
                        ' > "$heat_outputs_path.unit"\n'
                        + tell(listener, "CREATE $greeting $(hostname)"))}],
                    "inputs": [{"name": "greeting"}], "outputs": [{"name": "unit"}]}},
                "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
                    "config": {"get_resource": "app"}, "server": {"get_resource": "server"},
                    "signal_transport": "CFN_SIGNAL",
                    "input_values": {"greeting": {"get_param": "greeting"}}}},
                # Heat's test_server_software_config's other two groups: a cfn-init file
                # (NO_SIGNAL, named to run first), a puppet manifest reading it.
                "init": {"type": "OS::Heat::StructuredConfig", "properties": {
                    "group": "cfn-init", "inputs": [{"name": "bar"}],
                    "config": {"config": {"files": {"/tmp/cfn-init-foo": {
                        "content": {"get_input": "bar"}, "mode": "000644"}}}}}},
                "init_deployment": {"type": "OS::Heat::StructuredDeployment", "properties": {
                    "name": "10_init", "config": {"get_resource": "init"},
                    "server": {"get_resource": "server"}, "signal_transport": "NO_SIGNAL",
                    "input_values": {"bar": "barrr"}}},
                "manifest": {"type": "OS::Heat::SoftwareConfig", "properties": {
                    "group": "puppet", "inputs": [{"name": "foo"}],
                    "outputs": [{"name": "result"}], "config": (
                        "file {'output_result':\n  ensure => file,\n"
                        "  path => \"$::heat_outputs_path.result\",\n"
                        "  content => \"$::foo and ${file('/tmp/cfn-init-foo')} on "
                        "$::deploy_server_id during $::deploy_action\",\n}\n")}},
                "puppet_deployment": {"type": "OS::Heat::SoftwareDeployment",
                                      "depends_on": ["init_deployment"], "properties": {
                    "name": "20_puppet", "config": {"get_resource": "manifest"},
                    "server": {"get_resource": "server"}, "signal_transport": "CFN_SIGNAL",
                    "input_values": {"foo": "fooooo"}}}}}


def test_a_debian_guest_runs_its_user_data_with_cloud_init_and_polls_cfn_metadata(
        member, listener):
    heat, name = member.heat, f"dg{uuid.uuid4().hex[:6]}"
    nova = openstack.connect(cloud="heatweb-demo-member", connect_retries=3)
    stack_id = heat.stacks.create(stack_name=name, timeout_mins=TIMEOUT // 60,
                                  template=template(name, member, listener))["stack"]["id"]
    started = time.monotonic()
    wait_stack(heat, stack_id, "CREATE_COMPLETE", timeout=TIMEOUT)
    print(f"Debian guest: CREATE_COMPLETE {time.monotonic() - started:.0f} s after the create")
    server_id = heat.resources.get(stack_id, "server").physical_resource_id
    assert set(qemu_guests({server_id})) == {server_id}  # a real QEMU, no agent on the host
    host = f"{name}-server"
    deployment_id = heat.resources.get(stack_id, "deployment").physical_resource_id
    assert heat.software_deployments.get(deployment_id).output_values == {
        "unit": "active",
        "deploy_stdout": f"hello from {host}, Debian GNU/Linux 12 (bookworm)\n",
        "deploy_stderr": "", "deploy_status_code": 0}
    puppet = heat.software_deployments.get(
        heat.resources.get(stack_id, "puppet_deployment").physical_resource_id).output_values
    assert (puppet["result"], puppet["deploy_status_code"], puppet["deploy_stderr"]) == (
        f"fooooo and barrr on {server_id} during CREATE", 0, "")
    # cloud-init ran the script part (once), after the part handler wrote the metadata part:
    # os-collect-config's cfn settings, as the server's metadata gives them
    cfn = heat.resources.metadata(stack_id, "server")["os-collect-config"]
    said = [b for b in listener.bodies if b.startswith(f"user_data {host} ")]
    assert len(said) == 1 and json.loads(said[0].split(" ", 2)[2]) == {
        "deployments": [], "os-collect-config": cfn}
    assert f"CREATE hello {host}" in listener.bodies
    console = nova.compute.get_server_console_output(server_id)["output"]
    assert "switch_root to /dev/vda" in console and "booted, cloud-init done" in console, \
        console[-3000:]

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE", timeout=TIMEOUT)
    assert qemu_guests({server_id}) == {}
