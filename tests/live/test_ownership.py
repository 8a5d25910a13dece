"""One owner per cloud object, through python-heatclient against the live service: another
project cannot take over (and so delete) a stack's objects, an adopt or ``external_id`` of
an object another resource holds is 409 and stores nothing, and a stack locked at level
``all`` is not changed through its objects by another stack or by the software
deployment and config APIs. Each case checks the victim's objects in the cloud (the
simulated cloud's own tables), not only heatweb's rows."""
import uuid

import pytest
from heatclient import exc as heat_exc

from tests.conftest import ServiceDatabase
from tests.live.test_stack_lifecycle import wait_stack

pytestmark = pytest.mark.live

VICTIM = {
    "heat_template_version": "2016-10-14",
    "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.77.0.0/24"}},
        "router": {"type": "OS::Neutron::Router"},
        "router_port": {"type": "OS::Neutron::RouterInterface",
                        "properties": {"router": {"get_resource": "router"},
                                       "subnet": {"get_resource": "subnet"}}},
        "secgroup": {"type": "OS::Neutron::SecurityGroup"},
        "port": {"type": "OS::Neutron::Port", "depends_on": ["subnet"],
                 "properties": {"network": {"get_resource": "net"}}},
        "qos": {"type": "OS::Neutron::QoSPolicy"},
        "lb": {"type": "OS::Octavia::LoadBalancer",
               "properties": {"vip_subnet": {"get_resource": "subnet"}}},
        "listener": {"type": "OS::Octavia::Listener", "properties": {
            "loadbalancer": {"get_resource": "lb"}, "protocol": "HTTP", "protocol_port": 80}},
        "pool": {"type": "OS::Octavia::Pool", "properties": {
            "listener": {"get_resource": "listener"}, "lb_algorithm": "ROUND_ROBIN",
            "protocol": "HTTP"}},
        "server": {"type": "OS::Nova::Server",
                   "properties": {"image": "cirros", "flavor": "m1.tiny",
                                  "user_data_format": "SOFTWARE_CONFIG"}},
        "image": {"type": "OS::Glance::Image",
                  "properties": {"container_format": "bare", "disk_format": "raw",
                                 "data": "bytes"}},
        "config": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"group": "script", "config": "echo victim"}},
        "deployment": {"type": "OS::Heat::SoftwareDeployment",
                       "properties": {"config": {"get_resource": "config"},
                                      "server": {"get_resource": "server"},
                                      "signal_transport": "NO_SIGNAL"}},
    },
}
ADOPTABLE = ("server", "image", "net", "router", "config", "deployment")


@pytest.fixture(scope="module")
def db(live_service):
    database = ServiceDatabase(live_service)
    yield database
    database.close()


@pytest.fixture(scope="module")
def project(live_service):
    """Two members of project A (the victim's owner and a colleague) and a member of B."""
    name = f"own-a-{uuid.uuid4().hex[:6]}"
    return {"owner": live_service.heat(f"a1-{uuid.uuid4().hex[:6]}", name),
            "colleague": live_service.heat(f"a2-{uuid.uuid4().hex[:6]}", name),
            "other": live_service.heat(f"b1-{uuid.uuid4().hex[:6]}",
                                       f"own-b-{uuid.uuid4().hex[:6]}")}


def _victim(hc):
    name = f"victim{uuid.uuid4().hex[:6]}"
    stack_id = hc.stacks.create(stack_name=name, template=VICTIM)["stack"]["id"]
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    ids = {r.resource_name: r.physical_resource_id for r in hc.resources.list(stack_id)}
    return stack_id, ids


def _action(hc, stack_id, body):
    resp = hc.http_client.post(f"/stacks/{hc.stacks.get(stack_id).stack_name}/{stack_id}/actions",
                               data=body)
    assert resp.status_code == 200


def _lock(hc, stack_id, level):
    _action(hc, stack_id, {"lock": {"level": level}, "reason": "maintenance"})
    wait_stack(hc, stack_id, "LOCK_COMPLETE")


def _unlock(hc, stack_id):
    _action(hc, stack_id, {"unlock": None})
    wait_stack(hc, stack_id, "UNLOCK_COMPLETE")


def _alive(db, ids):
    """Which of the victim's objects the simulated cloud (or heatweb, for software
    configs and deployments) still has."""
    found = {}
    for name, sql in (("server", "SELECT COUNT(*) FROM stacks_simserver WHERE id = %s AND "
                                 "deleted_at IS NULL"),
                      ("image", "SELECT COUNT(*) FROM stacks_simimage WHERE id = %s AND "
                                "deleted_at IS NULL"),
                      ("net", "SELECT COUNT(*) FROM stacks_simobject WHERE id = %s AND "
                              "deleted_at IS NULL"),
                      ("router", "SELECT COUNT(*) FROM stacks_simobject WHERE id = %s AND "
                                 "deleted_at IS NULL"),
                      ("config", "SELECT COUNT(*) FROM softwareconfig_softwareconfig "
                                 "WHERE REPLACE(CAST(id AS TEXT), '-', '') = %s"),
                      ("deployment", "SELECT COUNT(*) FROM softwareconfig_softwaredeployment "
                                     "WHERE REPLACE(CAST(id AS TEXT), '-', '') = %s")):
        wanted = ids[name].replace("-", "") if name in ("config", "deployment") else ids[name]
        found[name] = db.rows(sql, wanted)[0][0] == 1
    return found


def _adopt_data(ids, names):
    template = {"heat_template_version": "2016-10-14", "resources": {
        name: VICTIM["resources"][name] for name in names}}
    for name in names:  # what it names of the victim's, by id
        props = template["resources"][name].get("properties") or {}
        template["resources"][name] = {
            "type": template["resources"][name]["type"],
            "properties": {k: ids[v["get_resource"]] if isinstance(v, dict) else v
                           for k, v in props.items()}}
    return {"template": template, "environment": {"parameters": {}},
            "resources": {name: {"resource_id": ids[name],
                                 "type": VICTIM["resources"][name]["type"]}
                          for name in names}}


def _stacks_named(hc, prefix):
    return [s.stack_name for s in hc.stacks.list() if s.stack_name.startswith(prefix)]


def test_another_project_cannot_adopt_my_objects_and_so_never_deletes_them(project, db):
    owner, other = project["owner"], project["other"]
    stack_id, ids = _victim(owner)
    for name in ADOPTABLE:
        taker = f"thief{uuid.uuid4().hex[:6]}"
        with pytest.raises(heat_exc.HTTPNotFound) as refused:
            other.stacks.create(stack_name=taker, adopt_stack_data=_adopt_data(ids, [name]))
        assert refused.value.error["error"]["type"] == "EntityNotFound"
        assert ids[name] in str(refused.value)
        assert _stacks_named(other, taker) == []
    # Nor as an external resource.
    taker = f"thief{uuid.uuid4().hex[:6]}"
    with pytest.raises(heat_exc.HTTPNotFound):
        other.stacks.create(stack_name=taker, template={
            "heat_template_version": "2016-10-14", "resources": {"s": {
                "type": "OS::Nova::Server", "external_id": ids["server"],
                "properties": {"image": "cirros", "flavor": "m1.tiny"}}}})
    assert _stacks_named(other, taker) == []
    assert all(_alive(db, ids).values())
    owner.stacks.delete(stack_id)
    wait_stack(owner, stack_id, "DELETE_COMPLETE")


@pytest.mark.parametrize("level", [None, "stacks", "all"])
def test_an_adopt_of_an_object_another_stack_holds_is_409_and_stores_nothing(project, db, level):
    owner, colleague = project["owner"], project["colleague"]
    stack_id, ids = _victim(owner)
    if level:
        _lock(owner, stack_id, level)
    for name in ADOPTABLE:
        taker = f"taker{uuid.uuid4().hex[:6]}"
        with pytest.raises(heat_exc.HTTPConflict) as refused:
            colleague.stacks.create(stack_name=taker, adopt_stack_data=_adopt_data(ids, [name]))
        assert refused.value.error["error"]["type"] == "ObjectHeld"
        victim_name = owner.stacks.get(stack_id).stack_name
        assert f"is held by resource {name} of stack {victim_name}" in str(refused.value)
        assert _stacks_named(colleague, taker) == []
    taker = f"taker{uuid.uuid4().hex[:6]}"
    with pytest.raises(heat_exc.HTTPConflict):
        colleague.stacks.create(stack_name=taker, template={
            "heat_template_version": "2016-10-14", "resources": {"n": {
                "type": "OS::Neutron::Net", "external_id": ids["net"]}}})
    assert _stacks_named(colleague, taker) == []
    assert all(_alive(db, ids).values())
    assert owner.stacks.get(stack_id).stack_status == ("LOCK_COMPLETE" if level
                                                       else "CREATE_COMPLETE")
    if level:
        _unlock(owner, stack_id)
    owner.stacks.delete(stack_id)
    wait_stack(owner, stack_id, "DELETE_COMPLETE")
    assert not any(_alive(db, ids).values())


def test_an_object_let_go_can_be_adopted_and_is_then_deleted_by_its_new_holder(project, db):
    owner, colleague = project["owner"], project["colleague"]
    template = {"heat_template_version": "2016-10-14", "resources": {"server": {
        "type": "OS::Nova::Server", "deletion_policy": "Retain",
        "properties": {"image": "cirros", "flavor": "m1.tiny"}}}}
    name = f"retain{uuid.uuid4().hex[:6]}"
    stack_id = owner.stacks.create(stack_name=name, template=template)["stack"]["id"]
    wait_stack(owner, stack_id, "CREATE_COMPLETE")
    server = owner.resources.get(stack_id, "server").physical_resource_id
    holds = "SELECT COUNT(*) FROM stacks_cloudhold WHERE kind = 'server' AND physical_id = %s"
    assert db.rows(holds, server)[0][0] == 1
    owner.stacks.delete(stack_id)
    wait_stack(owner, stack_id, "DELETE_COMPLETE")
    assert db.rows(holds, server)[0][0] == 0  # retained: let go, still in the cloud
    assert _alive(db, {**{k: "x" for k in ADOPTABLE}, "server": server})["server"]
    adopter = f"adopter{uuid.uuid4().hex[:6]}"
    adopted = colleague.stacks.create(stack_name=adopter, adopt_stack_data={
        "template": {"heat_template_version": "2016-10-14", "resources": {"server": {
            "type": "OS::Nova::Server", "properties": {"image": "cirros", "flavor": "m1.tiny"}}}},
        "resources": {"server": {"resource_id": server, "type": "OS::Nova::Server"}}})
    wait_stack(colleague, adopted["stack"]["id"], "ADOPT_COMPLETE")
    assert db.rows(holds, server)[0][0] == 1
    colleague.stacks.delete(adopted["stack"]["id"])
    wait_stack(colleague, adopted["stack"]["id"], "DELETE_COMPLETE")
    assert db.rows("SELECT COUNT(*) FROM stacks_simserver WHERE id = %s AND deleted_at IS NULL",
                   server)[0][0] == 0


@pytest.mark.parametrize("level", ["stacks", "all"])
def test_a_locked_server_takes_no_new_software_through_the_api(project, level):
    owner = project["owner"]
    stack_id, ids = _victim(owner)
    before = owner.software_deployments.metadata(ids["server"])
    shown = owner.resources.metadata(stack_id, "server")
    config = owner.software_configs.create(group="script", config="echo intruder", name="x")
    _lock(owner, stack_id, level)
    if level == "all":
        with pytest.raises(heat_exc.HTTPConflict) as refused:
            owner.software_deployments.create(config_id=config.id, server_id=ids["server"],
                                              action="CREATE", status="IN_PROGRESS")
        assert refused.value.error["error"]["type"] == "StackLocked"
        assert "is locked at level all" in str(refused.value)
        assert owner.software_deployments.metadata(ids["server"]) == before
        assert owner.resources.metadata(stack_id, "server") == shown
        assert not owner.software_deployments.list(server_id=ids["server"])[1:]
    else:  # level stacks protects the stack's definition, not its objects
        made = owner.software_deployments.create(config_id=config.id, server_id=ids["server"],
                                                 action="CREATE", status="COMPLETE")
        owner.software_deployments.delete(made.id)
    # The config a locked stack holds is not deleted, at any level.
    with pytest.raises(heat_exc.HTTPConflict) as refused:
        owner.software_configs.delete(ids["config"])
    assert refused.value.error["error"]["type"] == "StackLocked"
    assert owner.software_configs.get(ids["config"]).id == ids["config"]
    owner.software_configs.delete(config.id)
    _unlock(owner, stack_id)
    owner.stacks.delete(stack_id)
    wait_stack(owner, stack_id, "DELETE_COMPLETE")


# What another stack's resource may do to a locked stack's objects: {case: (template
# resources of the second stack, given the victim's physical ids)}.
def _changer(case, ids):
    resources = {
        "deployment": {"d": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": ids["config"], "server": ids["server"],
            "signal_transport": "NO_SIGNAL"}}},
        "router_interface": {
            "n": {"type": "OS::Neutron::Net"},
            "s": {"type": "OS::Neutron::Subnet",
                  "properties": {"network": {"get_resource": "n"}, "cidr": "10.78.0.0/24"}},
            "i": {"type": "OS::Neutron::RouterInterface",
                  "properties": {"router": ids["router"], "subnet": {"get_resource": "s"}}}},
        "extra_route": {"r": {"type": "OS::Neutron::ExtraRoute", "properties": {
            "router_id": ids["router"], "destination": "10.99.0.0/24",
            "nexthop": "10.77.0.9"}}},
        "security_group_rule": {"r": {"type": "OS::Neutron::SecurityGroupRule", "properties": {
            "security_group": ids["secgroup"], "protocol": "tcp", "port_range_min": 22,
            "port_range_max": 22}}},
        "volume_attachment": {
            "v": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
            "a": {"type": "OS::Cinder::VolumeAttachment", "properties": {
                "instance_uuid": ids["server"], "volume_id": {"get_resource": "v"}}}},
        "trunk": {"t": {"type": "OS::Neutron::Trunk", "properties": {"port": ids["port"]}}},
        "qos_rule": {"r": {"type": "OS::Neutron::QoSBandwidthLimitRule",
                           "properties": {"policy": ids["qos"], "max_kbps": 1000}}},
        "pool_member": {"m": {"type": "OS::Octavia::PoolMember", "properties": {
            "pool": ids["pool"], "address": "10.77.0.50", "protocol_port": 80}}},
        "listener_on_lb": {"l": {"type": "OS::Octavia::Listener", "properties": {
            "loadbalancer": ids["lb"], "protocol": "HTTP", "protocol_port": 8080}}},
        # Only a reference: a port on the locked stack's network is not a change of it.
        "port_on_network": {"p": {"type": "OS::Neutron::Port",
                                  "properties": {"network": ids["net"]}}},
    }[case]
    return {"heat_template_version": "2016-10-14", "resources": resources}


CHANGES = ("deployment", "router_interface", "extra_route", "security_group_rule",
           "volume_attachment", "trunk", "qos_rule", "pool_member", "listener_on_lb")


@pytest.fixture(scope="module")
def locked_victims(project):
    """A victim locked at level ``all`` and one at level ``stacks``."""
    owner = project["owner"]
    made = {}
    for level in ("all", "stacks"):
        stack_id, ids = _victim(owner)
        _lock(owner, stack_id, level)
        made[level] = (stack_id, ids)
    yield made
    for stack_id, _ in made.values():
        _unlock(owner, stack_id)
        owner.stacks.delete(stack_id)
    for stack_id, _ in made.values():
        wait_stack(owner, stack_id, "DELETE_COMPLETE")


@pytest.mark.parametrize("case", [*CHANGES, "port_on_network"])
def test_what_another_stack_may_do_to_a_locked_stacks_objects(project, locked_victims, case):
    owner = project["owner"]
    for level, (stack_id, ids) in locked_victims.items():
        name = f"changer{uuid.uuid4().hex[:6]}"
        changer = owner.stacks.create(stack_name=name, template=_changer(case, ids))["stack"]["id"]
        refused = level == "all" and case in CHANGES
        stack = wait_stack(owner, changer, "CREATE_FAILED" if refused else "CREATE_COMPLETE")
        if refused:
            assert "StackLocked" in stack.stack_status_reason
            victim_name = owner.stacks.get(stack_id).stack_name
            assert f"Stack {victim_name} is locked at level all" in stack.stack_status_reason
            if case == "deployment":
                assert owner.software_deployments.list(server_id=ids["server"])[1:] == []
        assert owner.stacks.get(stack_id).stack_status == "LOCK_COMPLETE"
        owner.stacks.delete(changer)
        wait_stack(owner, changer, "DELETE_COMPLETE")


@pytest.mark.parametrize("case", ["deployment", "router_interface", "security_group_rule",
                                  "volume_attachment"])
def test_another_projects_stack_cannot_change_my_objects(project, db, case):
    owner, other = project["owner"], project["other"]
    stack_id, ids = _victim(owner)
    name = f"changer{uuid.uuid4().hex[:6]}"
    changer = other.stacks.create(stack_name=name, template=_changer(case, ids))["stack"]["id"]
    stack = wait_stack(other, changer, "CREATE_FAILED")
    assert "EntityNotFound" in stack.stack_status_reason and "could not be found" in \
        stack.stack_status_reason
    assert owner.stacks.get(stack_id).stack_name not in stack.stack_status_reason
    other.stacks.delete(changer)
    wait_stack(other, changer, "DELETE_COMPLETE")
    assert all(_alive(db, ids).values())
    owner.stacks.delete(stack_id)
    wait_stack(owner, stack_id, "DELETE_COMPLETE")
