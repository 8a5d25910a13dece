"""The run's Keystone user and its projects on the one-machine cloud, for the benchmarks
that drive a real cloud (bench_direct's sides, bench_api's Heat side)."""
import uuid

import openstack
import requests
from django.core.management.base import CommandError


class Accounts:
    """The run's user and its projects (one per side: ``direct``, ``heatweb``, ``heat``),
    made by the cloud admin; ``delete`` removes them with whatever is left in them."""

    def __init__(self, admin, run, sides=("direct", "heatweb")):
        self.admin, self.run, self.sides = admin, run, sides
        self.password = uuid.uuid4().hex
        self.user = None
        self.projects = {}

    def create(self):
        member = self.admin.identity.find_role("member", ignore_missing=False)
        self.user = self.admin.identity.create_user(name=f"bench-direct-{self.run}",
                                                    password=self.password,
                                                    domain_id="default")
        for side in self.sides:
            project = self.admin.identity.create_project(name=f"bench-{side}-{self.run}",
                                                         domain_id="default")
            self.projects[side] = project
            self.admin.identity.assign_project_role_to_user(project, self.user, member)
            self.admin.set_compute_quotas(project.id, instances=-1, cores=-1, ram=-1)

    def connection(self, side, *, app_name):
        auth_url = self.admin.config.auth["auth_url"]
        # connect_retries: a connection the API's gunicorn reset is tried again (as
        # heatweb's driver does).
        return openstack.connect(load_yaml_config=False, load_envvars=False,
                                 connect_retries=3, auth_url=auth_url, username=self.user.name,
                                 password=self.password, project_id=self.projects[side].id,
                                 user_domain_id="default", app_name=app_name)

    def token(self, side):
        """A Keystone token of the user in ``side``'s project, and that project's id."""
        auth_url = self.admin.config.auth["auth_url"].rstrip("/")
        v3 = auth_url if auth_url.endswith("/v3") else auth_url + "/v3"
        project_id = self.projects[side].id
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": self.user.name, "password": self.password, "domain": {"id": "default"}}}},
            "scope": {"project": {"id": project_id}}}}
        resp = requests.post(f"{v3}/auth/tokens", json=body, timeout=30)
        if resp.status_code != 201:
            raise CommandError(f"Keystone refused the run's user a token: {resp.text[:300]}")
        return resp.headers["X-Subject-Token"], project_id

    def delete(self):
        """Everything left in the run's projects, then the projects and the user."""
        for project in self.projects.values():
            self._empty(project.id)
            self.admin.identity.delete_project(project, ignore_missing=True)
        if self.user is not None:
            self.admin.identity.delete_user(self.user, ignore_missing=True)

    def _empty(self, project_id):
        compute, network = self.admin.compute, self.admin.network
        # In pages: one page lists the servers' ports in one URL to Neutron.
        servers = list(compute.servers(all_projects=True, project_id=project_id, limit=20))
        for server in servers:
            compute.delete_server(server, ignore_missing=True)
        for server in servers:
            compute.wait_for_delete(server, wait=300)
        for port in network.ports(project_id=project_id):
            network.delete_port(port, ignore_missing=True)
        for subnet in network.subnets(project_id=project_id):
            network.delete_subnet(subnet, ignore_missing=True)
        for net in network.networks(project_id=project_id):
            network.delete_network(net, ignore_missing=True)
        for group in network.security_groups(project_id=project_id):
            network.delete_security_group(group, ignore_missing=True)
