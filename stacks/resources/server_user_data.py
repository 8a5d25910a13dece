"""A server's ``user_data`` as Nova gets it, by ``user_data_format`` (Heat's
``build_userdata``).

``RAW`` gives the template's ``user_data`` as it is. ``SOFTWARE_CONFIG`` and
``HEAT_CFNTOOLS`` (Heat's default) give Heat's multipart MIME for cloud-init, part by
part as Heat 27 makes it. ``SOFTWARE_CONFIG``:

1. ``text/cloud-config`` (``cloud-config``): cloud-init's output to
   ``/var/log/cloud-init-output.log`` as well as the console;
2. ``text/cloud-boothook`` (``boothook.sh``): heat-cfntools' ``/opt/aws/bin`` links
   where heat-cfntools is installed, always exit 0;
3. ``text/part-handler`` (``part-handler.py``): a cloud-init part handler writing each
   ``text/x-cfninitdata`` part to ``/var/lib/heat-cfntools/NAME`` and
   ``/var/lib/cloud/data/NAME``;
4. the template's ``user_data``: each part of it when it is itself multipart, else one
   ``text/plain`` part without a file name (cloud-init runs it when it starts with
   ``#!``, reads it as cloud-config when it starts with ``#cloud-config``);
5. ``text/x-cfninitdata`` (``cfn-init-data``): the server's metadata at its create as
   JSON (``{"deployments": []}``, and for a ``POLL_SERVER_CFN`` server
   ``os-collect-config``'s ``cfn`` settings with its EC2 key pair, as Heat's).

``HEAT_CFNTOOLS`` (for heat-cfntools: ``cfn-init`` reads ``cfn-init-data``, ``cfn-hup``
and ``cfn-push-stats`` the metadata server and boto config):

1.–3. the same three parts (an ``AWS::EC2::Instance`` adds its ``ec2-user``: a ``user:``
   line in the cloud-config, and the boothook makes the user with passwordless sudo);
4. ``text/x-cfninitdata`` (``cfn-userdata``): the template's ``user_data``, which the
   part handler writes to ``/var/lib/heat-cfntools/cfn-userdata``;
5. ``text/x-shellscript`` (``loguserdata.py``): runs that file, its output logged to
   ``/var/log/heat-provision.log``, and touches
   ``/var/lib/heat-cfntools/provision-finished`` when it succeeds;
6. ``cfn-init-data``: the resource's template metadata (``AWS::CloudFormation::Init``
   ...) as JSON, when it has some;
7. ``cfn-metadata-server``: the metadata server's URL (Heat's
   ``heat_metadata_server_url``: ``HEATWEB_CFN_METADATA_SERVER_URL``, else heatweb's public
   URL), ending in ``/v1/``;
8. ``cfn-boto-cfg``: boto's ``[Boto]`` section naming that server's host
   (``cfn_region_name = heat``, ``is_secure = False``, ``https_validate_certificates = 1``:
   Heat's defaults of ``instance_connection_is_secure`` and
   ``instance_connection_https_validate_certificates``).

The texts of the cloud-config, the boothook, the part handler and ``loguserdata.py``
are heatweb's; what they do is what Heat's do.
"""
import email
import json
import os
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings

from heatweb.api import as_uuid
from stacks.resources.backends import ServiceInterface

# ``softwareconfig.services`` (its ``config_text``), registered when that app is ready.
software_configs = ServiceInterface("software config services")

CLOUD_CONFIG = """#cloud-config
# Everything cloud-init's scripts print also goes to a log file.
output: {all: '| tee -a /var/log/cloud-init-output.log'}
"""

BOOTHOOK = """#!/bin/sh
# heat-cfntools' /opt/aws/bin links, where heat-cfntools is installed.
if command -v cfn-create-aws-symlinks >/dev/null 2>&1; then
    cfn-create-aws-symlinks
fi
exit 0
"""

# The user an AWS::EC2::Instance's cloud-init makes, for a cloud-init too old to read
# the cloud-config's ``user:`` (Heat's boothook does the same, bug 1257410).
BOOTHOOK_USER = """id -u {user} >/dev/null 2>&1 || useradd -m {user}
printf '%s\\tALL=(ALL)\\tNOPASSWD: ALL\\n' {user} >> /etc/sudoers
"""

LOGUSERDATA = """#!/usr/bin/env python3
# Runs the template's user_data (cfn-userdata, written by the part handler); what it
# prints goes to /var/log/heat-provision.log; provision-finished marks a success.
import datetime
import os
import subprocess
import sys

VAR = "/var/lib/heat-cfntools"


def main():
    script = os.path.join(VAR, "cfn-userdata")
    with open("/var/log/heat-provision.log", "a") as log:
        os.chmod("/var/log/heat-provision.log", 0o600)
        log.write("Provision began: %s\\n" % datetime.datetime.now())
        log.flush()
        try:
            os.chmod(script, 0o700)
            code = subprocess.call([script], stdout=log, stderr=log)
        except OSError as error:
            # An empty or non-executable user_data is no failure (Heat's ENOEXEC).
            code = 0 if error.errno == 8 else 71
            log.write("Could not run the user data: %s\\n" % error)
        log.write("Provision done: %s\\n" % datetime.datetime.now())
        if code:
            log.write("Provision failed with exit code %s\\n" % code)
            return code
    with open(os.path.join(VAR, "provision-finished"), "a"):
        os.utime(os.path.join(VAR, "provision-finished"), None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
"""

PART_HANDLER = """#part-handler
# Writes each text/x-cfninitdata part where heat-cfntools and os-collect-config read it.
import datetime
import os


def list_types():
    return ["text/x-cfninitdata"]


def handle_part(data, ctype, filename, payload):
    if ctype == "__begin__":
        os.makedirs("/var/lib/heat-cfntools", 0o700, exist_ok=True)
        return
    if ctype == "__end__":
        return
    with open("/var/log/part-handler.log", "a") as log:
        log.write("%s filename:%s, ctype:%s\\n" % (datetime.datetime.now(), filename, ctype))
    if ctype == "text/x-cfninitdata":
        for directory in ("/var/lib/heat-cfntools", "/var/lib/cloud/data"):
            with open(os.path.join(directory, filename), "w") as f:
                f.write(payload)
"""


def text_part(content, filename, subtype=None, *, always_named=True):
    """One text attachment as Heat makes them (``make_subpart``, and ``MultipartMime``'s
    parts with ``always_named=False``: no disposition without a file name): the subtype
    from the file name when none is given, us-ascii or else utf-8."""
    if subtype is None:
        subtype = os.path.splitext(filename or "")[0]
    content = content or ""
    try:
        content.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    msg = MIMEText(content, _subtype=subtype, _charset=charset) if subtype else \
        MIMEText(content, _charset=charset)
    if filename or always_named:
        msg.add_header("Content-Disposition", "attachment", filename=filename)
    return msg


def _cloud_init_parts(instance_user=None):
    config, boothook = CLOUD_CONFIG, BOOTHOOK
    if instance_user:
        config += f"user: {instance_user}\n"
        head, _, tail = boothook.partition("\n")
        boothook = f"{head}\n{BOOTHOOK_USER.format(user=instance_user)}{tail}"
    return [(config, "cloud-config"), (boothook, "boothook.sh", "cloud-boothook"),
            (PART_HANDLER, "part-handler.py")]


def cfn_metadata_server_url():
    """Heat's ``get_cfn_metadata_server_url``: the configured URL, with ``/v1`` if it has
    none, ending in ``/``."""
    url = settings.HEATWEB.get("CFN_METADATA_SERVER_URL") or settings.PUBLIC_URL
    if "/v1" not in url:
        url = url.rstrip("/") + "/v1"
    return url if url.endswith("/") else url + "/"


def cfntools_user_data(user_data, metadata, *, instance_user=None):
    """Heat's ``HEAT_CFNTOOLS`` multipart MIME around ``user_data``."""
    url = cfn_metadata_server_url()
    boto = "\n".join(["[Boto]", "debug = 0", "is_secure = False",
                      "https_validate_certificates = 1", "cfn_region_name = heat",
                      f"cfn_region_endpoint = {urlsplit(url).hostname}"])
    attachments = [*_cloud_init_parts(instance_user),
                   (user_data or "", "cfn-userdata", "x-cfninitdata"),
                   (LOGUSERDATA, "loguserdata.py", "x-shellscript")]
    if metadata:
        attachments.append((json.dumps(metadata), "cfn-init-data", "x-cfninitdata"))
    attachments += [(url, "cfn-metadata-server", "x-cfninitdata"),
                    (boto, "cfn-boto-cfg", "x-cfninitdata")]
    return _multipart(tuple(attachments))


def software_config_user_data(user_data, metadata):
    """Heat's ``SOFTWARE_CONFIG`` multipart MIME around ``user_data``."""
    attachments = _cloud_init_parts()
    parts = None
    try:
        parts = email.message_from_string(user_data or "")
    except Exception:  # noqa: BLE001 - any unparsable text is one part, as Heat's
        pass
    if parts is not None and parts.is_multipart():
        for part in parts.get_payload():
            attachments.append((part.get_payload(), part.get_filename(),
                                part.get_content_subtype()))
    else:
        attachments.append((user_data or "", ""))
    if metadata:
        attachments.append((json.dumps(metadata), "cfn-init-data", "x-cfninitdata"))
    return _multipart(tuple(attachments))


@lru_cache(maxsize=64)
def _multipart(attachments):
    """The multipart MIME text of ``((content, filename[, subtype]), ...)``.

    Made once for the same parts: the email package's generator (header folding,
    boundary search) cost more than half of a server create's CPU, and the servers
    of one template (a group, a stack of many) mostly get the same parts. They then
    share their boundary too, which only needs to be absent from the parts.
    """
    return MIMEMultipart(_subparts=[text_part(*a) for a in attachments]).as_string()


def named_config_text(properties, project_id):
    """A ``RAW`` or ``SOFTWARE_CONFIG`` server's ``user_data`` that names a software config
    of its project (``{get_resource: boot_config}``) is that config's text, as Heat's
    server reads it; any other ``user_data`` stays as it is."""
    user_data = properties.get("user_data")
    if properties.get("user_data_format") not in ("RAW", "SOFTWARE_CONFIG") \
            or as_uuid(user_data) is None:
        return user_data
    text = software_configs.config_text(project_id, user_data)
    return user_data if text is None else text


def nova_user_data(properties, *, project_id, metadata=None, instance_user=None,
                   boot_metadata=None):
    """What Nova gets as the server's user_data (None: none), for a server of
    ``project_id``. ``metadata``: the
    resource's template metadata; ``instance_user``: the user cloud-init makes
    (``HEAT_CFNTOOLS`` only, as Heat's); ``boot_metadata``: a ``SOFTWARE_CONFIG`` server's
    ``cfn-init-data`` (default ``{"deployments": []}``)."""
    user_data = named_config_text(properties, project_id)
    user_data_format = properties.get("user_data_format") or "HEAT_CFNTOOLS"
    if user_data_format == "SOFTWARE_CONFIG":
        return software_config_user_data(user_data, boot_metadata or {"deployments": []})
    if user_data_format == "HEAT_CFNTOOLS":
        return cfntools_user_data(user_data, metadata, instance_user=instance_user)
    return user_data
