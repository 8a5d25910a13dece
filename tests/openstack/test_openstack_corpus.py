"""The template corpus (tests/corpus/templates, tests/live/test_corpus.py) on the real cloud:
each template validated, created to CREATE_COMPLETE through heatweb in Keystone mode with
the OpenStack driver, its outputs checked with the corpus's own checks, deleted and gone.

The cloud is given what a Heat user's cloud has: the images and flavors the templates
name (public, registered by the admin for the module and removed after) and an external
network (the admin's: the cloud's ``public``). The templates run in two projects of the
corpus's own: the ones that make networks in one, the others in a project with one
network, where servers given no ``networks`` go (Nova's default: the project's one
network). Each project's member runs
what a project member would; its admin (the admin role there) the Keystone and flavor ones.
The test plays the servers' agent as test_corpus does (Nova's fake driver runs no guest).

Only the templates that make cloud objects run here (``CLOUD_CASES``: a type other than
``OS::Heat::*`` in the template, its files or its environment); those of Heat's own types
only run in the embedded and distributed modes (tests/live/test_corpus.py): the cloud
has nothing to add to them.

Templates that cannot pass on this cloud for a reason of the cloud are in
``KNOWN_CLOUD_FAILURES`` with the reason and the failure they must show: they still run,
and their entry fails if they fail otherwise or pass.
"""
import dataclasses
import re
import time
import uuid
from pathlib import Path

import openstack
import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live import test_corpus as corpus
from tests.live.test_corpus import CASES, Launch, _failure_detail, read_case
from tests.openstack.keystone_support import Cloud as KeystoneCloud, keystone_service

pytestmark = pytest.mark.openstack

TIMEOUT = 300  # the real cloud, with the whole corpus building at once

# What a Heat user's cloud has and the corpus names: images and flavors.
IMAGES = ("cirros", "cirros-0.6.2-x86_64-disk", "ubuntu-22.04", "fedora-heat-agent",
          "fedora-39", "F18-x86_64-cfntools", "centos-stream-9")
FLAVORS = {"m1.tiny": (512, 1, 1), "m1.small": (2048, 1, 20), "m1.medium": (4096, 2, 40)}

# Templates a cloud admin runs: Keystone objects, flavors, provider networks.
ADMIN_TEMPLATES = {"keystone_project_user.yaml", "keypair_and_flavor.yaml",
                   "admin_configuration_stack.yaml"}
# Makes a shared network: every project sees it, so servers without ``networks`` would
# have two to choose from (and boot without one). It runs last, after the others are gone.
RUNS_ALONE = {"admin_configuration_stack.yaml"}

WEB_IMAGE = ("OS::Glance::WebImage has Glance download the image from its URL (web-download "
             "import): this cloud's Glance refuses the URI (\"does not pass filtering\"; the "
             "machine has no route to the Internet either), as it would refuse Heat's import.")
KNOWN_CLOUD_FAILURES = {
    "glance_image_server.yaml": (WEB_IMAGE, re.compile(
        r"cirros_image.*URI for web-download does not pass filtering", re.S)),
    "admin_configuration_stack.yaml": (WEB_IMAGE, re.compile(
        r"URI for web-download does not pass filtering")),
    "network_details.yaml": (
        "The port's dns_name needs Neutron's dns-integration extension, which this cloud's "
        "Neutron does not load: Neutron refuses the attribute, as it would Heat's request.",
        re.compile(r"node_port.*Unrecognized attribute\(s\) 'dns_name'", re.S)),
    "server_group_anti_affinity.yaml": (
        "Two servers in an anti-affinity server group need two compute hosts; this cloud has "
        "one (Nova's fake driver on one machine), so Nova's scheduler finds no host for the "
        "second and puts it in ERROR, as it would for Heat.",
        re.compile(r"Exhausted all hosts available|No valid host", re.I)),
}

def _makes_cloud_objects(case):
    """Whether a type other than Heat's own is in the template, its files or environment."""
    template, files, environment = read_case(case)
    return bool(CLOUD_TYPE.search(f"{template}{files}{environment}"))


CLOUD_TYPE = re.compile(r"\b(?:OS::(?!Heat::)[A-Z]\w*::\w+|AWS::\w+::\w+)")
CLOUD_CASES = [case for case in CASES if _makes_cloud_objects(case)]

# Templates of a service this cloud's catalog lacks (the catalog's service type): heatweb's
# validate answers ResourceTypeUnavailable, as Heat's does on a cloud without it.
SERVICE_MISSING = {"designate_zone_records.yaml": "dns"}

# What a Heat user passes where the template's default names what this cloud has not.
KEY_NAME = "corpus-key"
CLOUD_PARAMETERS = {"hello_world.yaml": {"key_name": KEY_NAME}}  # default: heat_key


def _tags_as_nova_lists_them(check, template_order):
    """Nova keeps a server's tags as a set and lists them sorted; the server's ``show``
    (Heat's too) is Nova's answer. The same tags, then the corpus's check as it is."""
    def cloud_check(out):
        assert sorted(out["show"]["tags"]) == sorted(template_order), out["show"]["tags"]
        return check({**out, "show": {**out["show"], "tags": list(template_order)}})
    return cloud_check


# Where the real cloud answers differently from the simulated one, as it would to Heat.
CLOUD_CHECKS = {
    "server_properties.yaml": _tags_as_nova_lists_them(
        next(c.check for c in CASES if c.template == "server_properties.yaml"),
        ["web", "corpus"]),
}


def _token(v3, username, password, project_id):
    import requests

    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": username, "password": password, "domain": {"name": "Default"}}}},
        "scope": {"project": {"id": project_id}}}}
    resp = requests.post(f"{v3}/auth/tokens", json=body, timeout=30)
    assert resp.status_code == 201, resp.text
    return resp.headers["X-Subject-Token"]


@pytest.fixture(scope="module")
def catalog(admin_cloud):
    """The corpus's images and flavors, as a cloud operator registers them."""
    made_images, made_flavors = [], []
    for name in IMAGES:
        if admin_cloud.image.find_image(name) is None:
            image = admin_cloud.image.create_image(
                name=name, data=b"\0" * 1024, disk_format="raw", container_format="bare",
                visibility="public", allow_duplicates=True)
            made_images.append(image.id)
    for name, (ram, vcpus, disk) in FLAVORS.items():
        if admin_cloud.compute.find_flavor(name) is None:
            made_flavors.append(admin_cloud.compute.create_flavor(
                name=name, ram=ram, vcpus=vcpus, disk=disk, is_public=True).id)
    yield
    for image_id in made_images:
        admin_cloud.image.delete_image(image_id, ignore_missing=True)
    for flavor_id in made_flavors:
        admin_cloud.compute.delete_flavor(flavor_id, ignore_missing=True)


class Project:
    """A project of the corpus's own, without quotas, with a member and an admin (the admin
    role in it); ``network``: its one private network, or None."""

    def __init__(self, admin_cloud, tag, *, with_network):
        self.cloud, self.tag = admin_cloud, tag
        identity = admin_cloud.identity
        self.project = identity.create_project(name=f"{tag}-project", domain_id="default")
        admin_cloud.set_compute_quotas(self.project.id, instances=-1, cores=-1, ram=-1)
        admin_cloud.set_network_quotas(self.project.id, network=-1, subnet=-1, port=-1,
                                       router=-1, floatingip=-1, security_group=-1,
                                       security_group_rule=-1)
        self.password = uuid.uuid4().hex
        self.users = {}
        for who, role in (("member", "member"), ("admin", "admin")):
            user = identity.create_user(name=f"{tag}-{who}", password=self.password,
                                        default_project_id=self.project.id,
                                        domain_id="default")
            identity.assign_project_role_to_user(self.project, user, identity.find_role(role))
            self.users[who] = user
        self.network = None
        if with_network:
            self.network = admin_cloud.network.create_network(
                name=f"{tag}-private", project_id=self.project.id)
            admin_cloud.network.create_subnet(
                network_id=self.network.id, cidr="10.250.0.0/24", ip_version=4,
                project_id=self.project.id)

    def connect(self, who):
        """openstacksdk as the project's ``who``."""
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=KeystoneCloud().v3, username=f"{self.tag}-{who}",
                           password=self.password, user_domain_name="Default",
                           project_id=self.project.id)
        return openstack.connection.Connection(session=session.Session(auth=auth),
                                               region_name="RegionOne", connect_retries=3)

    def heat(self, service, who):
        token = _token(KeystoneCloud().v3, f"{self.tag}-{who}", self.password, self.project.id)
        return heat_client_module.Client("1", endpoint=f"{service.url}/v1/{self.project.id}",
                                         token=token)

    def remove(self):
        purge_project(self.cloud, self.project.id)
        for who in self.users:
            conn = self.connect(who)
            for keypair in conn.compute.keypairs():
                conn.compute.delete_keypair(keypair, ignore_missing=True)
        for user in self.users.values():
            self.cloud.identity.delete_user(user, ignore_missing=True)
        self.cloud.identity.delete_project(self.project, ignore_missing=True)


def purge_project(admin_cloud, project_id):
    """Whatever a failed stack left in the project: its servers, routers, ports, networks
    and security groups (best effort: the shared cloud keeps nothing of the module)."""
    compute, network = admin_cloud.compute, admin_cloud.network
    servers = list(compute.servers(all_projects=True, project_id=project_id))
    for server in servers:
        compute.delete_server(server, ignore_missing=True)
    for server in servers:
        try:
            compute.wait_for_delete(server, wait=120)
        except Exception:  # noqa: BLE001 - best effort
            pass
    for router in network.routers(project_id=project_id):
        for port in network.ports(device_id=router.id):
            try:
                network.remove_interface_from_router(router, port_id=port.id)
            except Exception:  # noqa: BLE001 - the gateway port is not an interface
                pass
        network.update_router(router, external_gateway_info={})
        network.delete_router(router, ignore_missing=True)
    for kind in ("ips", "ports", "networks", "security_groups"):
        for item in getattr(network, kind)(project_id=project_id):
            if kind == "security_groups" and item.name == "default":
                continue
            try:
                getattr(network, f"delete_{kind[:-1] if kind != 'ips' else 'ip'}")(
                    item, ignore_missing=True)
            except Exception:  # noqa: BLE001 - best effort
                pass


@pytest.fixture(scope="module")
def external_network(admin_cloud):
    """The cloud's external network, as an operator provides it: DevStack's ``public``
    (scripts/cloud/bootstrap.py, 127.42.0.0/24). Not one of the module's own: a second
    external network makes every ``AWS::EC2::EIP`` made on the cloud meanwhile fail, in Heat
    as in heatweb ("Expected 1 external network, found 2"; heat-tempest-plugin's
    test_server_cfn_init)."""
    public = admin_cloud.network.find_network("public")
    assert public is not None and public.is_router_external
    return public


@pytest.fixture(scope="module")
def projects(admin_cloud, catalog, external_network):
    """The corpus's two projects (removed before the external network their routers use);
    the default project's member has the key pair ``corpus-key``."""
    tag = f"oscorpus{uuid.uuid4().hex[:6]}"
    made = {}
    try:
        made["default"] = Project(admin_cloud, f"{tag}d", with_network=True)
        made["nets"] = Project(admin_cloud, f"{tag}n", with_network=False)
        made["default"].connect("member").compute.create_keypair(name=KEY_NAME)
        yield made
    finally:
        for project in made.values():
            project.remove()


@pytest.fixture(scope="module")
def users(request, tmp_path_factory, projects):
    """python-heatclient as each project's member and admin: ``{(project, who): client}``."""
    service = keystone_service(request.config, tmp_path_factory)
    return {(name, who): project.heat(service, who)
            for name, project in projects.items() for who in ("member", "admin")}


def _user(case):
    return ("nets" if corpus.makes_networks(case) else "default",
            "admin" if case.template in ADMIN_TEMPLATES else "member")


class CloudLaunch:
    """test_corpus's Launch, each case as its user; the cases in RUNS_ALONE start when
    their test does."""

    def __init__(self, users, external_network):
        self.launches = {user: Launch(hc, external_network) for user, hc in users.items()}
        self.later = {}

    def start(self, cases):
        cases = [dataclasses.replace(c, parameters={
            **c.parameters, **CLOUD_PARAMETERS.get(c.template, {})}) for c in cases]
        for user, launch in self.launches.items():
            launch.start([c for c in cases if _user(c) == user
                          and c.template not in RUNS_ALONE])
        self.later = {c.template: c for c in cases if c.template in RUNS_ALONE}
        return self

    def result(self, case):
        launch = self.launches[_user(case)]
        if case.template in self.later:
            launch.start([self.later.pop(case.template)])
        return launch.done[case.template].result(timeout=TIMEOUT)

    def agent_of(self, case, stack_id):
        return self.launches[_user(case)].agent_of(stack_id)


@pytest.fixture(scope="module")
def launched(users, external_network, request):
    return CloudLaunch(users, external_network.id).start(corpus.selected_cases(request))


def finish(hc, stack_id, agent=None):
    return corpus.finish(hc, stack_id, timeout=TIMEOUT, interval=1, agent=agent)


def delete_and_wait(hc, stack_id):
    corpus.delete_and_wait(hc, stack_id, timeout=TIMEOUT, interval=1)


def _physical(hc, stack_id):
    return [(r.resource_type, r.physical_resource_id)
            for r in hc.resources.list(stack_id, nested_depth=3) if r.physical_resource_id]


def _gone_from_the_cloud(admin_cloud, physical):
    """What of the stack's servers, networks, ports and images is still in the cloud."""
    finders = {"OS::Nova::Server": admin_cloud.compute.find_server,
               "OS::Neutron::Net": admin_cloud.network.find_network,
               "OS::Neutron::Port": admin_cloud.network.find_port,
               "OS::Neutron::Router": admin_cloud.network.find_router,
               "OS::Glance::WebImage": admin_cloud.image.find_image}
    left = []
    for type_name, physical_id in physical:
        finder = finders.get(type_name)
        if finder is not None and finder(physical_id, ignore_missing=True) is not None:
            left.append(f"{type_name} {physical_id}")
    return left


@pytest.mark.parametrize("case", CLOUD_CASES, ids=[c.template for c in CLOUD_CASES])
def test_corpus_template_on_the_cloud(users, launched, admin_cloud, case):
    hc = users[_user(case)]
    step, value = launched.result(case)
    service = SERVICE_MISSING.get(case.template)
    if service and not any(s.type == service for s in admin_cloud.identity.services()):
        error = getattr(value, "error", None) or {}
        assert step == "validate" and \
            error.get("error", {}).get("type") == "ResourceTypeUnavailable", (step, value)
        pytest.xfail(f"this cloud's catalog has no {service} service")
    assert step == "created", f"{step} refused {case.template}: {value}"
    try:
        _create_check_delete(hc, value, admin_cloud, case, launched.agent_of(case, value))
    finally:
        _deleted_anyway(hc, value)


def _create_check_delete(hc, stack_id, admin_cloud, case, agent):
    stack = finish(hc, stack_id, agent)
    detail = f"{stack.stack_status}: {stack.stack_status_reason} " \
             f"[{_failure_detail(hc, stack_id)}]"
    if case.template in KNOWN_CLOUD_FAILURES:
        why, signature = KNOWN_CLOUD_FAILURES[case.template]
        assert stack.stack_status == "CREATE_FAILED" and signature.search(detail), \
            f"listed as a known cloud failure ({why}) but {detail}"
        delete_and_wait(hc, stack_id)
        pytest.xfail(f"known cloud failure: {why}")
    assert stack.stack_status == "CREATE_COMPLETE", detail
    errors = {o["output_key"]: o["output_error"] for o in stack.outputs if o.get("output_error")}
    assert not errors, errors
    outputs = {o["output_key"]: o.get("output_value") for o in stack.outputs}
    check = CLOUD_CHECKS.get(case.template, case.check)
    if check is not None:
        verdict = check(outputs)
        assert verdict is None or verdict, outputs
    physical = _physical(hc, stack_id)
    delete_and_wait(hc, stack_id)
    deadline = time.monotonic() + 60  # Nova finishes a server's delete on its own time
    while (left := _gone_from_the_cloud(admin_cloud, physical)) and \
            time.monotonic() < deadline:
        time.sleep(2)
    assert not left, f"still in the cloud after the delete: {left}"


def _deleted_anyway(hc, stack_id):
    """A stack whose test failed is deleted too (best effort; the failure is reported)."""
    try:
        if hc.stacks.get(stack_id).stack_status != "DELETE_COMPLETE":
            delete_and_wait(hc, stack_id)
    except heat_exc.HTTPNotFound:
        pass
    except Exception:  # noqa: BLE001 - the test's own failure is what counts
        pass


def test_the_corpus_is_the_live_corpus():
    """Every corpus template is run here; the lists name only corpus templates."""
    on_disk = {p.name for p in (Path(__file__).resolve().parents[1] / "corpus" /
                                "templates").glob("*.yaml")}
    assert {c.template for c in CASES} == on_disk
    # the templates left out make nothing in the cloud: Heat's own types only
    assert len(CLOUD_CASES) >= 40 and "hello_world.yaml" in {c.template for c in CLOUD_CASES}
    assert "string_functions.yaml" not in {c.template for c in CLOUD_CASES}
    assert set(KNOWN_CLOUD_FAILURES) | ADMIN_TEMPLATES | RUNS_ALONE | set(CLOUD_CHECKS) | \
        set(CLOUD_PARAMETERS) | set(SERVICE_MISSING) <= \
        on_disk



def test_a_server_without_networks_joins_the_projects_one_network(users, projects,
                                                                  admin_cloud):
    """Nova's default, as Heat leaves it to Nova: a server given no ``networks`` is on the
    one network its project has (heatweb used to ask Nova for no network at all)."""
    hc, project = users["default", "member"], projects["default"]
    template = {"heat_template_version": "2018-08-31", "resources": {"server": {
        "type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}}},
        "outputs": {"ip": {"value": {"get_attr": ["server", "first_address"]}}}}
    stack_id = hc.stacks.create(stack_name=f"{project.tag}-default-net",
                                template=template)["stack"]["id"]
    stack = finish(hc, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = hc.resources.get(stack_id, "server").physical_resource_id
    ports = list(admin_cloud.network.ports(device_id=server_id))
    assert [p.network_id for p in ports] == [project.network.id]
    assert stack.outputs[0]["output_value"] == ports[0].fixed_ips[0]["ip_address"]
    assert stack.outputs[0]["output_value"].startswith("10.250.0.")
    delete_and_wait(hc, stack_id)


def test_server_metadata_that_is_not_a_string_goes_to_nova_as_json(users, projects,
                                                                   admin_cloud):
    """Heat serializes metadata values that are not strings (hello_world's ``db_port``);
    Nova refuses anything but strings."""
    hc = users["default", "member"]
    template = {"heat_template_version": "2018-08-31", "resources": {"server": {
        "type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny",
            "metadata": {"db_port": 50000, "roles": ["web"], "debug": True,
                         "name": "web"}}}}}
    stack_id = hc.stacks.create(stack_name=f"{projects['default'].tag}-metadata",
                                template=template)["stack"]["id"]
    stack = finish(hc, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server = admin_cloud.compute.get_server(
        hc.resources.get(stack_id, "server").physical_resource_id)
    assert {k: v for k, v in server.metadata.items() if not k.startswith("heatweb")} == \
        {"db_port": "50000", "roles": '["web"]', "debug": "true", "name": "web"}
    delete_and_wait(hc, stack_id)


def test_a_web_image_glance_refuses_fails_with_glances_words(users, projects, admin_cloud):
    """Glance refuses the web-download import at once; the image fails with its message
    and no queued image is left (openstacksdk's create_image swallowed the refusal, and
    the resource waited for an image that would never come)."""
    hc, name = users["default", "member"], f"{projects['default'].tag}-web-image"
    template = {"heat_template_version": "2018-08-31", "resources": {"image": {
        "type": "OS::Glance::WebImage", "properties": {
            "name": name, "container_format": "bare", "disk_format": "qcow2",
            "location": "https://download.cirros-cloud.net/0.6.2/cirros.img"}}}}
    stack_id = hc.stacks.create(stack_name=name, template=template)["stack"]["id"]
    stack = finish(hc, stack_id)
    assert stack.stack_status == "CREATE_FAILED"
    assert stack.stack_status_reason == (
        "Resource CREATE failed: ResourceFailure: resources.image: URI for web-download "
        "does not pass filtering: https://download.cirros-cloud.net/0.6.2/cirros.img "
        "(HTTP 400)")
    assert admin_cloud.image.find_image(name) is None
    delete_and_wait(hc, stack_id)
