"""A server's user_data as Nova gets it: Heat's SOFTWARE_CONFIG and HEAT_CFNTOOLS multipart
MIME, RAW as it is."""
import email
import json

from django.conf import settings
from django.test import override_settings

from stacks.resources.server_user_data import nova_user_data


def parts(user_data):
    message = email.message_from_string(user_data)
    assert message.get_content_type() == "multipart/mixed"
    return [(p.get_content_type(), p.get_filename(), p.get_payload())
            for p in message.get_payload()]


def test_software_config_user_data_is_heats_multipart_mime():
    found = parts(nova_user_data({"user_data_format": "SOFTWARE_CONFIG",
                                  "user_data": "#!/bin/sh\necho hi\n"}, project_id=None))
    # Heat 27's parts, types and names, in its order
    assert [(t, n) for t, n, _ in found] == [
        ("text/cloud-config", "cloud-config"), ("text/cloud-boothook", "boothook.sh"),
        ("text/part-handler", "part-handler.py"), ("text/plain", ""),
        ("text/x-cfninitdata", "cfn-init-data")]
    assert "output: {all: '| tee -a /var/log/cloud-init-output.log'}" in found[0][2]
    assert found[1][2].startswith("#!/bin/sh\n") and found[1][2].endswith("exit 0\n")
    assert "def handle_part(data, ctype, filename, payload):" in found[2][2]
    assert found[3][2] == "#!/bin/sh\necho hi\n"
    assert json.loads(found[4][2]) == {"deployments": []}


def test_a_multipart_user_data_gives_each_of_its_parts():
    inner = ('Content-Type: multipart/mixed; boundary="b"\nMIME-Version: 1.0\n\n'
             '--b\nContent-Type: text/x-shellscript\n'
             'Content-Disposition: attachment; filename="a.sh"\n\n#!/bin/sh\necho a\n'
             '--b\nContent-Type: text/cloud-config\n'
             'Content-Disposition: attachment; filename="b.cfg"\n\nruncmd: [ls]\n--b--\n')
    found = parts(nova_user_data({"user_data_format": "SOFTWARE_CONFIG", "user_data": inner},
                                 project_id=None))
    assert [(t, n) for t, n, _ in found][3:5] == [("text/x-shellscript", "a.sh"),
                                                  ("text/cloud-config", "b.cfg")]
    assert found[3][2] == "#!/bin/sh\necho a"  # the line break before a boundary is its own


def test_raw_user_data_goes_as_it_is():
    assert nova_user_data({"user_data_format": "RAW", "user_data": "#!/bin/sh\n"},
                          project_id=None) == "#!/bin/sh\n"


@override_settings(PUBLIC_URL="https://heat.example.com:8004",
                   HEATWEB={**settings.HEATWEB, "CFN_METADATA_SERVER_URL": ""})
def test_heat_cfntools_user_data_is_heats_multipart_mime():
    """Heat's default format: the user_data is cfn-userdata, which loguserdata.py runs;
    the template's metadata is cfn-init-data; the metadata server and boto's config."""
    init = {"AWS::CloudFormation::Init": {"config": {"files": {"/tmp/x": {"content": "x"}}}}}
    found = parts(nova_user_data({"user_data": "#!/bin/sh\necho hi\n"}, project_id=None,
                                 metadata=init))
    assert [(t, n) for t, n, _ in found] == [
        ("text/cloud-config", "cloud-config"), ("text/cloud-boothook", "boothook.sh"),
        ("text/part-handler", "part-handler.py"), ("text/x-cfninitdata", "cfn-userdata"),
        ("text/x-shellscript", "loguserdata.py"), ("text/x-cfninitdata", "cfn-init-data"),
        ("text/x-cfninitdata", "cfn-metadata-server"), ("text/x-cfninitdata", "cfn-boto-cfg")]
    assert found[3][2] == "#!/bin/sh\necho hi\n"
    assert found[4][2].startswith("#!/usr/bin/env python3\n")
    assert 'os.path.join(VAR, "cfn-userdata")' in found[4][2]
    assert json.loads(found[5][2]) == init
    assert found[6][2] == "https://heat.example.com:8004/v1/"
    assert found[7][2] == ("[Boto]\ndebug = 0\nis_secure = False\n"
                           "https_validate_certificates = 1\ncfn_region_name = heat\n"
                           "cfn_region_endpoint = heat.example.com")
    assert "user:" not in found[0][2] and "useradd" not in found[1][2]
    # No metadata: no cfn-init-data part, as Heat's.
    empty = parts(nova_user_data({"user_data_format": "HEAT_CFNTOOLS"}, project_id=None))
    assert [n for _, n, _ in empty] == ["cloud-config", "boothook.sh", "part-handler.py",
                                        "cfn-userdata", "loguserdata.py",
                                        "cfn-metadata-server", "cfn-boto-cfg"]
    assert empty[3][2] == ""


@override_settings(HEATWEB={**settings.HEATWEB,
                            "CFN_METADATA_SERVER_URL": "http://cfn.example.com:8000"})
def test_an_instances_user_and_a_configured_metadata_server():
    found = parts(nova_user_data({"user_data": ""}, project_id=None, instance_user="ec2-user"))
    assert found[0][2].endswith("user: ec2-user\n")
    assert found[1][2].startswith("#!/bin/sh\nid -u ec2-user >/dev/null 2>&1 || "
                                  "useradd -m ec2-user\n")
    assert "NOPASSWD: ALL" in found[1][2] and found[1][2].endswith("exit 0\n")
    assert found[5][2] == "http://cfn.example.com:8000/v1/"  # no metadata: 7 parts
