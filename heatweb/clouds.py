"""A ``clouds.yaml`` for OpenStackClient with one of heatweb's own API tokens.

``openstack --os-cloud heatweb stack list`` then works with no other flag:
keystoneauth's ``admin_token`` plugin sends the token to the endpoint as it
is (no Keystone in the embedded mode), and heatclient's ``openstack stack``
commands and heatweb's plugin (heatweb-osc) talk to that endpoint.
"""
from pathlib import Path

import yaml

MARKER = "# Written by heatweb"
CLOUD = "heatweb"


def clouds_yaml(*, endpoint, token, cloud=CLOUD):
    """The file's text: one cloud named ``cloud`` for ``token`` at the v1 ``endpoint``."""
    config = {"clouds": {cloud: {
        "auth_type": "admin_token",
        "auth": {"endpoint": endpoint, "token": token},
        "orchestration_endpoint_override": endpoint}}}
    return (f"{MARKER} (manage.py bootstrap / issue_token --clouds-yaml): a heatweb API "
            f"token.\n# Use: openstack --os-cloud {cloud} stack list\n"
            + yaml.safe_dump(config, sort_keys=False))


def write_clouds_yaml(path, *, endpoint, token, cloud=CLOUD):
    """Write the file (owner-only: it holds a token); returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(clouds_yaml(endpoint=endpoint, token=token, cloud=cloud))
    return path


def written_by_heatweb(path):
    """True when ``path`` is absent or a file this module wrote (safe to write again)."""
    path = Path(path)
    if not path.exists():
        return True
    try:
        return path.read_text().startswith(MARKER)
    except OSError:
        return False
