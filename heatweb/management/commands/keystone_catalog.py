"""``manage.py keystone_catalog``: register heatweb in Keystone's catalog.

As Heat registers itself: service type ``orchestration``, endpoints
``<public URL>/v1/%(tenant_id)s`` (public, internal, admin), so OpenStack's
own tools (``openstack stack ...``) find heatweb with plain ``OS_*``
credentials. Run it as a cloud admin (``OS_*`` in the environment, as for
``openstack``); without ``OS_AUTH_URL`` it uses heatweb's service user.
Running it again changes nothing, or moves the endpoints to a new URL.
"""
import json
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from heatweb import keystone

SERVICE_TYPE = "orchestration"
INTERFACES = ("public", "internal", "admin")


def _admin_session():
    env = os.environ
    if not env.get("OS_AUTH_URL"):
        return keystone.service_session()
    auth = v3.Password(auth_url=env["OS_AUTH_URL"], username=env.get("OS_USERNAME"),
                       password=env.get("OS_PASSWORD"),
                       project_name=env.get("OS_PROJECT_NAME"),
                       user_domain_name=env.get("OS_USER_DOMAIN_NAME", "Default"),
                       project_domain_name=env.get("OS_PROJECT_DOMAIN_NAME", "Default"))
    return ks_session.Session(auth=auth, timeout=30)


class Command(BaseCommand):
    help = "Register heatweb in Keystone's catalog as the orchestration service."

    def add_arguments(self, parser):
        parser.add_argument("--public-url", default=None,
                            help="heatweb's base URL (default: HEATWEB_PUBLIC_URL)")
        parser.add_argument("--name", default="heatweb", help="the service's name")
        parser.add_argument("--region", default=None, help="default: KEYSTONE_REGION")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        base = (opts["public_url"] or settings.HEATWEB["PUBLIC_URL"]).rstrip("/")
        region = opts["region"] or settings.KEYSTONE["REGION"]
        url = f"{base}/v1/%(tenant_id)s"
        session = _admin_session()
        try:
            service = self._service(session, opts["name"])
            changes = self._endpoints(session, service["id"], url=url, region=region)
        except ks_exc.ClientException as error:
            raise CommandError(f"Keystone refused: {error}") from None
        if opts["json"]:
            self.stdout.write(json.dumps({"service_id": service["id"], "url": url,
                                          "region": region, "changes": changes}))
        else:
            for line in changes or ["catalog already up to date"]:
                self.stdout.write(line)

    @staticmethod
    def _service(session, name):
        found = session.get(f"{keystone.identity_url()}/services",
                            params={"type": SERVICE_TYPE}).json()["services"]
        service = next((s for s in found if s.get("name") == name), None)
        if service is None:
            service = session.post(f"{keystone.identity_url()}/services", json={"service": {
                "name": name, "type": SERVICE_TYPE, "description": "heatweb orchestration",
                "enabled": True}}).json()["service"]
        return service

    @staticmethod
    def _endpoints(session, service_id, *, url, region):
        endpoints_url = f"{keystone.identity_url()}/endpoints"
        have = session.get(endpoints_url, params={"service_id": service_id}).json()["endpoints"]
        changes = []
        for interface in INTERFACES:
            mine = [e for e in have if e["interface"] == interface
                    and e.get("region_id") in (region, None)]
            if not mine:
                session.post(endpoints_url, json={"endpoint": {
                    "service_id": service_id, "interface": interface, "url": url,
                    "region_id": region, "enabled": True}})
                changes.append(f"created {interface} endpoint {url}")
                continue
            for endpoint in mine:
                if endpoint["url"] != url:
                    session.patch(f"{endpoints_url}/{endpoint['id']}",
                                  json={"endpoint": {"url": url}})
                    changes.append(f"moved {interface} endpoint to {url}")
        return changes
