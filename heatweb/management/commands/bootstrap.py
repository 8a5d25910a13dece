"""``manage.py bootstrap``: first-run setup of the embedded mode (idempotent).

Creates the Django superuser ``admin`` (password from HEATWEB_ADMIN_PASSWORD,
else generated once and kept in ``var/admin-password.txt``), the ``admin``
project with an admin membership, and prints a fresh API token with
ready-to-paste commands.
"""
import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from heatweb.models import Role
from heatweb.tokens import token_issue


class Command(BaseCommand):
    help = "Create the admin user and project and print an API token (safe to run again)."

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
        self.stdout.write(f"""
heatweb is set up (embedded mode: SQLite + filesystem broker under {settings.DATA_DIR}).

  web:          {base}/
  Django admin: {base}/admin/   user admin, password {password}
  project:      admin ({project.pk})
  API token:    {token}
  endpoint:     {endpoint}

Try it with python-heatclient's `heat` command (installed in .venv):

  export OS_AUTH_TOKEN={token} HEAT_URL={endpoint}
  .venv/bin/heat stack-create -f examples/hello.yaml hello
  .venv/bin/heat stack-list
  .venv/bin/heat action-lock hello --level stacks --reason "maintenance"
""")

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
