"""Issue 36: Magnum's Kubernetes cluster templates, as Magnum ships and sends them.

Magnum 22.0.0 (PyPI; its last release with the Heat drivers) is downloaded once into
``.cache/magnum`` and its ``k8s_fedora_coreos_v1`` templates are sent the way Magnum's
Heat driver sends them (``magnum/drivers/heat/driver.py``): heatclient's
``get_template_contents`` for the cluster template and its ``get_file`` fragments,
``environment_files`` naming Magnum's environments (their text in ``files``, no merged
``environment``), the parameters its template definition gives, then a scale and a resize
as ``PATCH`` updates (``existing``) of ``number_of_minions`` and ``minions_to_remove``.
The templates use ``yaql``, a parameter named twice and nested template resources.
"""
import ipaddress
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
from heatclient.common import template_utils

from tests.live.test_corpus import _stack_of, delete_and_wait, finish
from tests.live.test_stack_lifecycle import hc, wait_deleted, wait_stack  # noqa: F401

# What it covers (request parsing, templates) does not depend on the database or broker.
pytestmark = [pytest.mark.live, pytest.mark.embedded_only]

MAGNUM = "22.0.0"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "magnum"
TIMEOUT = 240

# Magnum's env files for a cluster template (template_def.add_*_env_file, in its order).
OCTAVIA_LB_WITH_VOLUMES = ["with_master_lb_octavia", "with_volume", "with_etcd_volume",
                           "enable_floating_ip", "enable_lb_floating_ip",
                           "with_private_network"]
NO_LB_NO_VOLUMES = ["no_master_lb", "no_volume", "no_etcd_volume", "enable_floating_ip",
                    "disable_lb_floating_ip", "with_private_network"]

EXTERNAL_NETWORK = """
heat_template_version: 2018-08-31
resources:
  public:
    type: OS::Neutron::ProviderNet
    properties: {name: public, network_type: flat, physical_network: public,
                 router_external: true}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 203.0.113.0/24, enable_dhcp: false}
"""


@pytest.fixture(scope="module")
def drivers():
    """Magnum's ``drivers`` folder of the release (downloaded once; no network: fails)."""
    root = CACHE / MAGNUM
    if not (root / "magnum" / "drivers").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        wheel = CACHE / f"magnum-{MAGNUM}-py3-none-any.whl"
        if not wheel.exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            f"magnum=={MAGNUM}", "-d", str(CACHE)], check=True, timeout=300)
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root, [n for n in archive.namelist()
                                      if n.startswith("magnum/drivers/")])
    return root / "magnum" / "drivers"


@pytest.fixture(scope="module")
def public(hc):
    """The external network Magnum's cluster template names (``external_network_id``)."""
    sid = hc.stacks.create(stack_name=f"public-{uuid.uuid4().hex[:6]}",
                           template=EXTERNAL_NETWORK)["stack"]["id"]
    wait_stack(hc, sid, "CREATE_COMPLETE")
    yield "public"
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)


def magnum_create(hc, drivers, env_names, **parameters):
    """``HeatDriver._create_stack``: the stack Magnum makes for a new cluster."""
    path = drivers / "k8s_fedora_coreos_v1" / "templates" / "kubecluster.yaml"
    files, template = template_utils.get_template_contents(str(path))
    env_paths = [str(drivers / "common" / "templates" / "environments" / f"{n}.yaml")
                 for n in env_names]
    environment_files = []
    env_map, _ = template_utils.process_multiple_environments_and_files(
        env_paths=env_paths, env_list_tracker=environment_files)
    files.update(env_map)
    params = {**cluster_parameters(), **parameters}
    validated = hc.stacks.validate(template=template, files=files,
                                   environment_files=environment_files, parameters=params)
    body = hc.stacks.create(stack_name=f"k8s-{uuid.uuid4().hex[:8]}", parameters=params,
                            environment_files=environment_files, template=template,
                            files=files, timeout_mins=60)
    return body["stack"]["id"], validated, environment_files


def cluster_parameters():
    """What Magnum's template definition gives for a cluster (its values, not defaults)."""
    return dict(
        is_cluster_stack=True, master_role="master", worker_role="worker",
        external_network="public", fixed_network_name="private", master_image="cirros",
        minion_image="cirros", master_flavor="m1.small", minion_flavor="m1.small",
        number_of_masters=1, number_of_minions=1, boot_volume_size=0, boot_volume_type="",
        etcd_volume_type="", docker_volume_type="", docker_volume_size=5,
        etcd_volume_size=2, discovery_url="https://discovery.etcd.io/" + uuid.uuid4().hex,
        region_name="RegionOne", username="demo", verify_ca=True,
        cluster_uuid=str(uuid.uuid4()), magnum_url="http://127.0.0.1:9511/v1",
        trustee_domain_id=uuid.uuid4().hex, trustee_user_id=uuid.uuid4().hex,
        trustee_username="trustee", trustee_password="secret", trust_id=uuid.uuid4().hex,
        auth_url="http://127.0.0.1:5000/v3", cloud_provider_enabled=True, openstack_ca="",
        nodes_affinity_policy="soft-anti-affinity", pods_network_cidr="10.100.0.0/16",
        kube_service_account_key="key", kube_service_account_private_key="private-key",
        project_id=uuid.uuid4().hex, max_node_count=3, ssh_key_name="")


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def is_address(value):
    ipaddress.ip_address(value)
    return True


def minion_servers(hc, sid):
    group = hc.resources.get(sid, "kube_minions")
    members = hc.resources.list(group.physical_resource_id)
    return {m.resource_name: hc.stacks.get(m.physical_resource_id) for m in members}


def test_a_cluster_with_an_octavia_api_and_volumes_is_made_scaled_and_resized(
        hc, drivers, public):
    sid, validated, environment_files = magnum_create(hc, drivers, OCTAVIA_LB_WITH_VOLUMES)
    # Validate takes the environment files too: Magnum's registry is in its answer.
    registry = validated["Environment"]["resource_registry"]
    assert registry["Magnum::Optional::Neutron::LBaaS::LoadBalancer"] == \
        "OS::Octavia::LoadBalancer"
    assert registry["Magnum::Optional::Cinder::Volume"] == "OS::Cinder::Volume"
    # The parameter named twice is one parameter, with the last definition's default.
    assert validated["Parameters"]["fixed_subnet_cidr"]["Default"] == "10.0.0.0/24"

    stack = finish(hc, sid, timeout=TIMEOUT)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = outputs_of(stack)
    # The API is the load balancer's floating IP; a master and a minion, each addressed.
    assert is_address(out["api_address"])
    assert len(out["kube_masters"]) == 1 and is_address(out["kube_masters"][0])
    assert len(out["kube_minions"]) == 1 and is_address(out["kube_minions"][0])
    assert len(out["kube_minions_private"]) == 1
    assert out["registry_address"] == "localhost:5000"
    types = {r.resource_name: r.resource_type for r in hc.resources.list(sid)}
    assert types["api_lb"] == "file:///" + str(
        drivers / "common" / "templates" / "lb_api.yaml").lstrip("/")
    # Resources keep the template's type names; the registry made them Octavia's and
    # Cinder's (the load balancer has Octavia's VIP, the volumes are attached).
    nested = {r.resource_type: r for r in hc.resources.list(sid, nested_depth=3)}
    assert {"Magnum::Optional::Neutron::LBaaS::PoolMember", "Magnum::Optional::Cinder::Volume",
            "Magnum::Optional::Etcd::VolumeAttachment", "OS::Heat::SoftwareDeployment"} \
        <= set(nested)
    lb = nested["Magnum::Optional::Neutron::LBaaS::LoadBalancer"]
    lb = hc.resources.get(_stack_of(lb), lb.resource_name)
    assert is_address(lb.attributes["vip_address"])
    volume = nested["Magnum::Optional::Cinder::Volume"]
    volume = hc.resources.get(_stack_of(volume), volume.resource_name)
    assert volume.attributes["size"] == "5" and volume.attributes["attachments"]  # Heat: str
    # The stored environment is the files' merge (what Heat keeps for the stack).
    environment = hc.stacks.environment(sid)
    assert environment["resource_registry"]["Magnum::NetworkSwitcher"].endswith(
        "network_switcher_private.yaml")
    assert environment["parameters"]["number_of_minions"] == 1

    # Magnum's scale (``_update_stack``): a PATCH with number_of_minions only.
    hc.stacks.update(sid, existing=True, parameters={"number_of_minions": 2},
                     disable_rollback=True)
    stack = finish(hc, sid, timeout=TIMEOUT)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    out = outputs_of(stack)
    assert len(out["kube_minions"]) == 2 and len(set(out["kube_minions_private"])) == 2
    before = minion_servers(hc, sid)
    assert sorted(before) == ["0", "1"]

    # Magnum's resize (``_resize_stack``) removes the node it names by its Nova id.
    server_of = {name: outputs_of(s)["OS::stack_id"] for name, s in before.items()}
    hc.stacks.update(sid, existing=True, disable_rollback=True,
                     parameters={"number_of_minions": 1, "minions_to_remove": [server_of["0"]]})
    stack = finish(hc, sid, timeout=TIMEOUT)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    after = minion_servers(hc, sid)
    assert sorted(after) == ["1"]
    assert outputs_of(after["1"])["OS::stack_id"] == server_of["1"]
    assert len(outputs_of(stack)["kube_minions"]) == 1
    delete_and_wait(hc, sid, timeout=TIMEOUT)


def test_a_cluster_without_a_load_balancer_takes_the_masters_address(hc, drivers, public):
    sid, validated, _ = magnum_create(hc, drivers, NO_LB_NO_VOLUMES, number_of_masters=1)
    assert validated["Environment"]["resource_registry"][
        "Magnum::Optional::Neutron::LBaaS::LoadBalancer"] == "OS::Heat::None"
    stack = finish(hc, sid, timeout=TIMEOUT)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = outputs_of(stack)
    # No load balancer: the API address is the master's own floating IP.
    assert out["api_address"] == out["kube_masters"][0]
    # The load balancer is OS::Heat::None here: nothing with a VIP.
    nested = {r.resource_type: r for r in hc.resources.list(sid, nested_depth=3)}
    lb = nested["Magnum::Optional::Neutron::LBaaS::LoadBalancer"]
    assert "vip_address" not in hc.resources.get(_stack_of(lb), lb.resource_name).attributes
    delete_and_wait(hc, sid, timeout=TIMEOUT)


def test_environment_files_merge_after_the_parameters_as_heats_engine(hc):
    """Heat's rules: the request's environment is ignored, its parameters come first and
    each file overrides them in order, or merges by its parameter_merge_strategies."""
    template = """
heat_template_version: 2018-08-31
parameters:
  name: {type: string, default: x}
  tags: {type: comma_delimited_list, default: []}
  count: {type: number, default: 0}
resources:
  value:
    type: OS::Heat::Value
    properties: {value: {list_join: ["/", [{get_param: name}, {get_param: count},
                                            {list_join: [",", {get_param: tags}]}]]}}
outputs:
  value: {value: {get_attr: [value, value]}}
"""
    files = {
        "one.yaml": "parameters: {count: 1}\n",
        "two.yaml": ("parameter_merge_strategies: {tags: merge, name: merge}\n"
                     "parameters: {name: two, tags: [b]}\n"),
        "three.yaml": "parameter_merge_strategies: {tags: overwrite}\nparameters: {tags: [c]}\n",
    }
    sid = hc.stacks.create(stack_name=f"envfiles-{uuid.uuid4().hex[:6]}", template=template,
                           files=files, environment_files=["one.yaml", "two.yaml"],
                           environment={"parameters": {"name": "ignored"}},
                           parameters={"name": "given", "count": 5, "tags": ["a"]}
                           )["stack"]["id"]
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    # name: "given" joined with "two"; count: one.yaml's; tags: ["a"] extended by ["b"].
    assert outputs_of(stack)["value"] == "giventwo/1/a,b"
    # A later file may not change a parameter's strategy (three overwrites what two merges).
    with pytest.raises(Exception) as refused:
        hc.stacks.create(stack_name=f"envfiles-{uuid.uuid4().hex[:6]}", template=template,
                         files=files, environment_files=["two.yaml", "three.yaml"])
    assert "Conflicting merge strategy 'overwrite' for parameter 'tags' in file " \
        "'three.yaml'" in str(refused.value)
    with pytest.raises(Exception) as refused:
        hc.stacks.create(stack_name=f"envfiles-{uuid.uuid4().hex[:6]}", template=template,
                         files=files, environment_files=["missing.yaml"])
    assert "missing.yaml is not in the request's files" in str(refused.value)
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
