"""``manage.py issue_token USER --project NAME``: a new API token, for scripts and tests.

The endpoint it prints (``--json``) is on the URL the server runs at
(``heatweb/public_url.py``); ``--clouds-yaml FILE`` writes a clouds.yaml for
``openstack --os-cloud heatweb ...`` with the token.
"""
import json

from django.conf import settings
from django.core.management.base import BaseCommand

from heatweb.clouds import write_clouds_yaml
from heatweb.models import Role
from heatweb.tokens import token_issue


class Command(BaseCommand):
    help = ("Create the user, project and membership when missing and print a new API token "
            "(one line), or with --json the token, project id and v1 endpoint.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--project", required=True, help="project (tenant) name")
        parser.add_argument("--role", default=Role.MEMBER, choices=[r.value for r in Role])
        parser.add_argument("--ttl-hours", type=int, default=None,
                            help="hours until the token expires (0: never)")
        parser.add_argument("--public-url", default=None,
                            help="base URL of the service, for the endpoint")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--clouds-yaml", metavar="FILE", default=None,
                            help="also write a clouds.yaml (cloud 'heatweb') with the token")

    def handle(self, *args, **opts):
        raw, project = token_issue(username=opts["username"], project_name=opts["project"],
                                   role=opts["role"], ttl_hours=opts["ttl_hours"])
        base = (opts["public_url"] or settings.HEATWEB["PUBLIC_URL"]).rstrip("/")
        if opts["clouds_yaml"]:
            write_clouds_yaml(opts["clouds_yaml"], endpoint=f"{base}/v1/{project.pk}", token=raw)
        if not opts["json"]:
            self.stdout.write(raw)
            return
        self.stdout.write(json.dumps({
            "token": raw, "project_id": project.pk, "project_name": project.name,
            "user": opts["username"], "role": opts["role"],
            "endpoint": f"{base}/v1/{project.pk}"}))
