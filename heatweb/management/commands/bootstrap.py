"""``manage.py bootstrap``: first-run setup of the embedded mode (idempotent).

Creates the Django superuser ``admin`` (password from HEATWEB_ADMIN_PASSWORD,
else generated once and kept in ``var/admin-password.txt``), the ``admin``
project with an admin membership, a fresh API token, and a clouds.yaml for
it (``DATA_DIR/clouds.yaml``; with ``--user-clouds-yaml``, as ``./run`` does,
also ``~/.config/openstack/clouds.yaml`` when there is none or heatweb wrote
it), so ``openstack --os-cloud heatweb stack list`` works with no flags.
"""
import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from heatweb.clouds import CLOUD, write_clouds_yaml, written_by_heatweb
from heatweb.models import Role
from heatweb.tokens import token_issue


class Command(BaseCommand):
    help = ("Create the admin user and project, print an API token and write a clouds.yaml "
            "for it (safe to run again).")

    def add_arguments(self, parser):
        parser.add_argument("--user-clouds-yaml", action="store_true",
                            help="also write ~/.config/openstack/clouds.yaml when absent "
                                 "(or written by heatweb before)")

    def handle(self, *args, **opts):
        password = self._password()
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username="admin", defaults={"is_staff": True, "is_superuser": True})
        if created or os.environ.get("HEATWEB_ADMIN_PASSWORD"):
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
        token, project = token_issue(username="admin", project_name="admin", role=Role.ADMIN)
        base = settings.HEATWEB["PUBLIC_URL"].rstrip("/")
        endpoint = f"{base}/v1/{project.pk}"
        clouds = write_clouds_yaml(settings.DATA_DIR / "clouds.yaml", endpoint=endpoint,
                                   token=token)
        found = self._user_clouds(clouds, endpoint, token) if opts["user_clouds_yaml"] \
            else None
        use = "" if found else f"export OS_CLIENT_CONFIG_FILE={clouds}\n  "
        self.stdout.write(f"""
heatweb is set up (embedded mode: SQLite + filesystem broker under {settings.DATA_DIR}).

  web:          {base}/
  Django admin: {base}/admin/   user admin, password {password}
  project:      admin ({project.pk})
  API token:    {token}
  endpoint:     {endpoint}
  clouds.yaml:  {clouds}{f" (and {found})" if found else ""}

Try it with OpenStack's own CLI (python-openstackclient, in .venv), cloud "{CLOUD}":

  {use}export OS_CLOUD={CLOUD} PATH="$PWD/.venv/bin:$PATH"
  openstack stack create -t examples/hello.yaml hello --wait
  openstack stack list
  openstack stack lock hello --level stacks --reason "maintenance"
  openstack stack delete -y hello   # refused: the stack is locked
  openstack stack unlock hello
""")

    @staticmethod
    def _user_clouds(clouds, endpoint, token):
        """~/.config/openstack/clouds.yaml (found with no flag) when it is heatweb's to write."""
        path = Path.home() / ".config" / "openstack" / "clouds.yaml"
        if not written_by_heatweb(path):
            return None
        return write_clouds_yaml(path, endpoint=endpoint, token=token)

    def _password(self):
        given = os.environ.get("HEATWEB_ADMIN_PASSWORD")
        if given:
            return given
        path = settings.DATA_DIR / "admin-password.txt"
        if path.exists():
            return path.read_text().strip()
        password = secrets.token_urlsafe(12)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(password + "\n")
        path.chmod(0o600)
        return password
