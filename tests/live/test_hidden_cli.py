"""A hidden parameter's value never shows in what ``openstack stack ...`` prints
(python-heatclient's OSC plugin, unchanged): the stack, its environment, resources,
events, outputs it does not publish, and files (a resource's metadata is what the
in-instance agent reads, and is left as Heat leaves it). Issue 40's crawl of the pages,
for the CLI."""
import json
import uuid

import pytest

from tests.live import test_osc_commands as osc

pytestmark = pytest.mark.live

osc_home = osc.osc_home  # the CLI's HOME of its own for this module too


@pytest.fixture(scope="module")
def member(live_service):
    return live_service.issue_token(f"hcli-{uuid.uuid4().hex[:6]}",
                                    f"hcli-{uuid.uuid4().hex[:6]}")


def test_no_cli_output_shows_a_hidden_value(member, tmp_path):
    marker = f"hid{uuid.uuid4().hex[:12]}"
    template = {
        "heat_template_version": "2016-10-14",
        "parameters": {"secret": {"type": "string", "hidden": True},
                       "plain": {"type": "string", "default": "seen"}},
        "resources": {
            "holder": {"type": "OS::Heat::Value",
                       "properties": {"value": {"list_join": [":", ["user",
                                                                    {"get_param": "secret"}]]}}},
            "tagged": {"type": "OS::Heat::None",
                       "metadata": {"note": {"get_param": "secret"}},
                       "properties": {"note": {"get_param": "secret"}}},
            "rand": {"type": "OS::Heat::RandomString", "properties": {"length": 8}}},
        "outputs": {"plain_out": {"value": {"get_param": "plain"}}}}
    (tmp_path / "t.yaml").write_text(json.dumps(template))
    (tmp_path / "env.yaml").write_text(json.dumps({"parameters": {"secret": marker}}))
    name = f"hcli{uuid.uuid4().hex[:6]}"
    shown = osc.cli_json(member, "stack", "create", "-t", str(tmp_path / "t.yaml"),
                         "-e", str(tmp_path / "env.yaml"), "--wait", name, tmp=tmp_path)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert osc.cli_json(member, "stack", "show", name)["parameters"]["secret"] == "******"

    commands = [
        ("stack", "show", name), ("stack", "show", name, "-f", "json"),
        ("stack", "environment", "show", name), ("stack", "resource", "list", name),
        ("stack", "resource", "list", name, "--long"),
        ("stack", "resource", "show", name, "holder"),
        ("stack", "resource", "show", name, "tagged"),
        ("stack", "event", "list", name), ("stack", "event", "list", name, "-f", "json"), ("stack", "output", "list", name),
        ("stack", "output", "show", name, "--all"), ("stack", "file", "list", name),
        ("stack", "list"),
    ]
    for args in commands:
        done = osc.cli(member, *args)
        assert marker not in done.stdout + done.stderr, f"openstack {' '.join(args)}"
    # A resource's metadata is left as the template made it, as by Heat: the in-instance
    # agent reads a server's deployments there (Heat's collector: `resource metadata`).
    assert marker in osc.cli(member, "stack", "resource", "metadata", name, "tagged").stdout
    # What it printed is the stack's, masked: not an empty answer.
    assert "******" in osc.cli(member, "stack", "environment", "show", name).stdout
    assert "user:******" in osc.cli(member, "stack", "resource", "show", name, "holder").stdout
    osc.cli(member, "stack", "delete", "--yes", "--wait", name)
