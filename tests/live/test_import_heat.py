"""manage.py import_heat: heatweb takes over the stacks of a Heat 27 database.

The source is a scratch database with Heat 27's own schema (``heat-manage db_sync``)
and rows written by Heat's own DB API (tests/live/heat27): hidden parameters,
properties and ``resource_data`` encrypted as Heat encrypts them, a nested stack,
software configs and deployments, tags and events. Then, through python-heatclient
on the live service: the stacks show as Heat stored them; they lock and unlock at
level ``stacks``; an update, a delete or a lock at level ``all`` is refused until the
owner re-authorises, and works after. Bad inputs import nothing for their stack.
"""
import json
import re
import uuid

import psycopg
import pytest
from heatclient import exc as heat_exc

from tests.live.door import Browser, set_password
from tests.live.heat27.schema import ENCRYPTION_KEY, MARIADB, SERVER, HeatSchema
from tests.live.test_stack_lifecycle import wait_deleted, wait_stack

pytestmark = pytest.mark.live

VALUE_CHILD = {"heat_template_version": "2021-04-16",
               "parameters": {"x": {"type": "string"}},
               "resources": {"inner": {"type": "OS::Heat::Value",
                                       "properties": {"value": {"get_param": "x"}}}},
               "outputs": {"x": {"value": {"get_attr": ["inner", "value"]}}}}
APP = {"heat_template_version": "2021-04-16",
       "parameters": {"pw": {"type": "string", "hidden": True},
                      "size": {"type": "string", "default": "small"}},
       "resources": {
           "v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "size"}}},
           "secret": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "pw"}}},
           "rnd": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
           "cfg": {"type": "OS::Heat::SoftwareConfig",
                   "properties": {"group": "script", "config": "echo hi"}},
           "dep": {"type": "OS::Heat::SoftwareDeployment",
                   "properties": {"config": {"get_resource": "cfg"}, "server": "srv-1",
                                  "signal_transport": "NO_SIGNAL"}},
           "child": {"type": "OS::Heat::Stack",
                     "properties": {"template": json.dumps(VALUE_CHILD),
                                    "parameters": {"x": "in"}}}},
       "outputs": {"size": {"value": {"get_attr": ["v", "value"]}}}}
BAD_TYPE = {"heat_template_version": "2021-04-16",
            "resources": {"t": {"type": "Vendor::Made::Up"}}}
BAD_VERSION = {"heat_template_version": "2099-01-01",
               "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": 1}}}}
CONFIG_ID, DERIVED_ID, DEPLOYMENT_ID = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())


def _id():
    return str(uuid.uuid4())


def _spec(project_id, suffix, ids=(CONFIG_ID, DERIVED_ID, DEPLOYMENT_ID)):
    """The Heat stacks of the test: one importable tree (with a nested stack) and one
    stack per bad input (``ids``: of the software config, its derived config and the
    deployment)."""
    config_id, derived_id, deployment_id = ids
    app, child = _id(), _id()
    ok = {"id": app, "root": app, "name": f"imp-app-{suffix}", "tenant": project_id,
          "username": f"alice-{suffix}", "template": APP,
          "parameters": {"pw": "hunter22", "size": "small"}, "encrypt_hidden": ["pw"],
          "encrypt_properties": True, "tags": ["from-heat", "prod"],
          "resources": [
              {"name": "v", "physical_id": "v-phys", "properties": {"value": "small"},
               "attributes": {"value": "small"}, "metadata": {"note": "kept"}},
              {"name": "secret", "physical_id": "s-phys", "properties": {"value": "hunter22"}},
              {"name": "rnd", "physical_id": f"imp-app-{suffix}-rnd-x1",
               "properties": {"length": 8}, "attributes": {"value": "Zq8Lm2Pa"},
               "data": {"value": ["Zq8Lm2Pa", True]}},
              {"name": "cfg", "physical_id": config_id,
               "properties": {"group": "script", "config": "echo hi"}},
              {"name": "dep", "physical_id": deployment_id, "requires": ["cfg"],
               "properties": {"config": config_id, "server": "srv-1",
                              "signal_transport": "NO_SIGNAL"}},
              {"name": "child", "physical_id": child, "requires": ["v"],
               "data": {"nested_stack_id": [child, False]}}],
          "events": [{"resource_name": "v", "resource_action": "CREATE",
                      "resource_status": "IN_PROGRESS", "resource_type": "OS::Heat::Value",
                      "physical_resource_id": "", "resource_status_reason": "state changed"},
                     {"resource_name": "v", "resource_action": "CREATE",
                      "resource_status": "COMPLETE", "resource_type": "OS::Heat::Value",
                      "physical_resource_id": "v-phys",
                      "resource_status_reason": "state changed"}],
          "software_configs": [{"id": config_id, "name": "cfg", "group": "script",
                                "config": {"config": "echo hi", "inputs": [], "outputs": [],
                                           "options": {}}},
                               {"id": derived_id, "name": f"imp-app-{suffix}-dep-x2",
                                "group": "script",
                                "config": {"config": "echo hi", "options": {}, "outputs": [],
                                           "inputs": [{"name": "deploy_server_id",
                                                       "type": "String", "value": "srv-1"}]}}],
          "software_deployments": [{"id": deployment_id, "config_id": derived_id,
                                    "server_id": "srv-1", "input_values": {"a": 1},
                                    "output_values": {"result": "done"}, "action": "CREATE",
                                    "status": "COMPLETE", "status_reason": "Outputs received"}]}
    nested = {"id": child, "root": app, "name": f"imp-app-{suffix}-child-abc",
              "tenant": project_id, "username": f"alice-{suffix}", "template": VALUE_CHILD,
              "parameters": {"x": "in"}, "owner_id": app, "parent_resource_name": "child",
              "nested_depth": 1,
              "resources": [{"name": "inner", "physical_id": "i-phys",
                             "properties": {"value": "in"}, "attributes": {"value": "in"}}]}
    busy, orphan, typed, versioned = _id(), _id(), _id(), _id()
    value = {"heat_template_version": "2021-04-16",
             "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": 1}}}}
    bad = [
        {"id": busy, "root": busy, "name": f"imp-busy-{suffix}", "tenant": project_id,
         "template": value, "state": "UPDATE_IN_PROGRESS",
         "resources": [{"name": "v", "physical_id": "b", "state": "UPDATE_IN_PROGRESS"}]},
        {"id": orphan, "root": orphan, "name": f"imp-orphan-{suffix}", "tenant": project_id,
         "template": {"heat_template_version": "2021-04-16",
                      "resources": {"child": {"type": "OS::Heat::Stack",
                                              "properties": {"template": json.dumps(VALUE_CHILD),
                                                             "parameters": {"x": "y"}}}}},
         "resources": [{"name": "child", "physical_id": _id()}]},
        {"id": typed, "root": typed, "name": f"imp-type-{suffix}", "tenant": project_id,
         "template": BAD_TYPE, "resources": [{"name": "t", "physical_id": "t"}]},
        {"id": versioned, "root": versioned, "name": f"imp-version-{suffix}",
         "tenant": project_id, "template": BAD_VERSION,
         "resources": [{"name": "v", "physical_id": "v"}]}]
    return [ok, nested, *bad]


@pytest.fixture(scope="module")
def heat_db(live_service):
    schema = HeatSchema(f"heatweb_import_src_{live_service.port}").create()
    yield schema
    schema.drop()


@pytest.fixture(scope="module")
def imported(live_service, heat_db):
    """Heat's rows written, then a dry run, the import, and a second import."""
    suffix = uuid.uuid4().hex[:6]
    project = f"heatproj-{suffix}"
    alice = live_service.issue_token(f"alice-{suffix}", project)
    spec = _spec(alice["project_id"], suffix)
    heat_db.store(spec)
    args = ("import_heat", "--heat-database", heat_db.url,
            "--auth-encryption-key", ENCRYPTION_KEY, "--project", project)
    dry = live_service.manage(*args, "--dry-run")
    first = live_service.manage(*args)
    second = live_service.manage(*args)
    late = _id()  # made in Heat after the first import: the next run takes only it
    heat_db.store([{"id": late, "root": late, "name": f"imp-late-{suffix}",
                    "tenant": alice["project_id"], "username": f"alice-{suffix}",
                    "template": {"heat_template_version": "2021-04-16"}}])
    third = live_service.manage(*args)
    return {"suffix": suffix, "project": project, "alice": alice, "spec": spec,
            "dry": dry, "first": first, "second": second, "third": third, "late": late}


def _client(info):
    from heatclient import client

    return client.Client("1", endpoint=info["endpoint"], token=info["token"])


def _line(output, name):
    return next(line for line in output.splitlines() if line.startswith(name + " "))


def test_dry_run_lists_what_would_be_imported_and_skipped_and_why(imported):
    dry, s = imported["dry"], imported["suffix"]
    assert dry.returncode == 0, dry.stderr
    assert _line(dry.stdout, f"imp-app-{s}").split()[4] == "import"
    assert "2 stack(s), 7 resource(s)" in _line(dry.stdout, f"imp-app-{s}")
    busy = _line(dry.stdout, f"imp-busy-{s}")
    assert " skip " in busy and f"stack imp-busy-{s} is UPDATE_IN_PROGRESS in Heat" in busy
    assert "has no row in Heat's database" in _line(dry.stdout, f"imp-orphan-{s}")
    assert "Vendor::Made::Up" in _line(dry.stdout, f"imp-type-{s}")
    assert "2099-01-01" in _line(dry.stdout, f"imp-version-{s}")
    assert "import: 1, skip: 4" in dry.stdout
    assert f"imp-app-{s}-child" not in dry.stdout  # a nested stack is its root's


def test_import_then_second_run_imports_nothing_again(imported):
    first, second, s = imported["first"], imported["second"], imported["suffix"]
    assert first.returncode == 0, first.stderr
    assert _line(first.stdout, f"imp-app-{s}").split()[4] == "imported"
    assert "imported: 1, skip: 4" in first.stdout
    assert second.returncode == 0, second.stderr
    assert "already imported" in _line(second.stdout, f"imp-app-{s}")
    assert "already imported: 1, skip: 4" in second.stdout
    third = imported["third"]
    assert _line(third.stdout, f"imp-late-{s}").split()[4] == "imported"
    assert "imported: 1, already imported: 1, skip: 4" in third.stdout
    hc = _client(imported["alice"])
    names = [st.stack_name for st in hc.stacks.list()]
    assert names.count(f"imp-app-{s}") == 1 and names.count(f"imp-late-{s}") == 1
    assert not [n for n in names if n.startswith(("imp-busy", "imp-orphan", "imp-type",
                                                  "imp-version"))]


def test_stack_shows_as_heat_stored_it(imported):
    hc, s, spec = _client(imported["alice"]), imported["suffix"], imported["spec"]
    app = spec[0]
    stack = hc.stacks.get(app["id"])
    assert (stack.stack_name, stack.stack_status) == (f"imp-app-{s}", "CREATE_COMPLETE")
    assert stack.tags == ["from-heat", "prod"]
    assert stack.parameters["pw"] == "******"  # hidden stays hidden
    assert stack.parameters["size"] == "small"
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == {"size": "small"}
    resources = {r.resource_name: r for r in hc.resources.list(app["id"])}
    assert {n: r.physical_resource_id for n, r in resources.items()} == \
        {r["name"]: r["physical_id"] for r in app["resources"]}
    assert {r.resource_status for r in resources.values()} == {"CREATE_COMPLETE"}
    assert hc.resources.metadata(app["id"], "v") == {"note": "kept"}
    assert hc.resources.get(app["id"], "rnd").attributes["value"] == "Zq8Lm2Pa"
    events = [(e.resource_name, e.resource_status, e.physical_resource_id)
              for e in hc.events.list(app["id"], sort_dir="asc")]
    assert events == [("v", "CREATE_IN_PROGRESS", ""), ("v", "CREATE_COMPLETE", "v-phys")]
    nested = hc.stacks.get(spec[1]["id"])
    assert nested.parent == app["id"] and nested.stack_status == "CREATE_COMPLETE"
    assert resources["child"].physical_resource_id == spec[1]["id"]
    assert hc.software_configs.get(CONFIG_ID).config == "echo hi"
    assert hc.software_configs.get(DERIVED_ID).inputs[0]["value"] == "srv-1"
    deployment = hc.software_deployments.get(DEPLOYMENT_ID)
    assert (deployment.server_id, deployment.output_values, deployment.status) == \
        ("srv-1", {"result": "done"}, "COMPLETE")
    template = hc.stacks.template(app["id"])
    assert template["resources"]["child"]["type"] == "OS::Heat::Stack"


def _action(hc, stack, body):
    return hc.http_client.post(f"/stacks/{stack.stack_name}/{stack.id}/actions", data=body)


def test_consent_needed_then_given(live_service, imported):
    hc, app = _client(imported["alice"]), imported["spec"][0]
    stack = hc.stacks.get(app["id"])
    _action(hc, stack, {"lock": {"level": "stacks"}, "reason": "moving"})
    wait_stack(hc, app["id"], "LOCK_COMPLETE")
    _action(hc, stack, {"unlock": None})
    wait_stack(hc, app["id"], "UNLOCK_COMPLETE")
    with pytest.raises(heat_exc.HTTPForbidden) as refused:
        _action(hc, stack, {"lock": {"level": "all"}})
    assert "imported from Heat" in str(refused.value)
    with pytest.raises(heat_exc.HTTPForbidden) as refused:
        hc.stacks.update(app["id"], existing=True, parameters={"size": "large"})
    assert "waits for its owner's consent" in str(refused.value)
    assert '{"reauthorise": null}' in str(refused.value)
    with pytest.raises(heat_exc.HTTPForbidden):
        hc.stacks.delete(app["id"])
    bob = _client(live_service.issue_token(f"bob-{imported['suffix']}", imported["project"]))
    with pytest.raises(heat_exc.HTTPForbidden) as refused:
        _action(bob, stack, {"reauthorise": None})
    assert "Only the owner" in str(refused.value)

    _action(hc, stack, {"reauthorise": None})
    hc.stacks.update(app["id"], existing=True, parameters={"size": "large"})
    done = wait_stack(hc, app["id"], "UPDATE_COMPLETE")
    assert {o["output_key"]: o["output_value"] for o in done.outputs} == {"size": "large"}
    assert done.parameters["pw"] == "******"
    hc.stacks.delete(app["id"])
    wait_deleted(hc, app["id"])


def test_not_a_heat_database_or_a_newer_schema_is_refused(live_service, heat_db):
    done = live_service.manage("import_heat", "--heat-database", f"{SERVER}/postgres")
    assert done.returncode != 0 and "not a Heat database" in done.stderr
    name = f"{heat_db.name}_newer"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(f"{SERVER}/{name}", autocommit=True) as conn:
            for table in ("stack", "raw_template", "resource", "event"):
                conn.execute(f"CREATE TABLE {table} (id text)")
            conn.execute("CREATE TABLE alembic_version (version_num varchar(32))")
            conn.execute("INSERT INTO alembic_version VALUES ('0123abcdef99')")
        done = live_service.manage("import_heat", "--heat-database", f"{SERVER}/{name}")
        assert done.returncode != 0
        assert "schema revision 0123abcdef99, not one of Heat 27's" in done.stderr
    finally:
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_stack_page_offers_the_consent_and_gives_it(live_service, imported):
    hc, late = _client(imported["alice"]), imported["late"]
    username = f"alice-{imported['suffix']}"
    set_password(live_service, username)
    browser = Browser(live_service, username)
    page = browser.session.get(f"{live_service.url}/stacks/{late}/")
    assert 'id="action-reauthorise"' in page.text and "Imported from Heat" in page.text
    # The buttons the door would refuse are refused on the page, with the door's reason.
    assert f'href="/stacks/{late}/delete"' not in page.text
    assert re.search(r'id="why-delete" role="tooltip">Stack imp-late-\w+ was imported from '
                     r"Heat and waits for its owner&#x27;s consent", page.text), page.text[:2000]
    with pytest.raises(heat_exc.HTTPForbidden):
        hc.stacks.delete(late)
    assert browser.page_action(late, "reauthorise") == \
        [f"Stack imp-late-{imported['suffix']} re-authorised."]
    page = browser.session.get(f"{live_service.url}/stacks/{late}/")
    assert 'id="action-reauthorise"' not in page.text
    hc.stacks.delete(late)
    wait_deleted(hc, late)


@pytest.mark.embedded_only  # the source's database is what differs, not heatweb's
def test_a_heat_database_on_mariadb_is_imported(live_service):
    """Heat 27's schema made by ``heat-manage db_sync`` on MariaDB and rows written by
    Heat's DB API there: the same tree imports as from PostgreSQL (read with PyMySQL)."""
    schema = HeatSchema(f"heatweb_import_maria_{live_service.port}", mariadb=True).create()
    try:
        assert schema.url.startswith(MARIADB)
        suffix = uuid.uuid4().hex[:6]
        project = f"heatmaria-{suffix}"
        alice = live_service.issue_token(f"alice-{suffix}", project)
        config, derived, deployment = _id(), _id(), _id()
        spec = _spec(alice["project_id"], suffix, ids=(config, derived, deployment))
        schema.store(spec)
        done = live_service.manage("import_heat", "--heat-database", schema.url,
                                   "--auth-encryption-key", ENCRYPTION_KEY, "--project", project)
        assert done.returncode == 0, done.stderr
        assert "imported: 1, skip: 4" in done.stdout, done.stdout
        assert "stack imp-busy-%s is UPDATE_IN_PROGRESS in Heat" % suffix in done.stdout
        hc, app = _client(alice), spec[0]
        stack = hc.stacks.get(app["id"])
        assert (stack.stack_status, stack.tags) == ("CREATE_COMPLETE", ["from-heat", "prod"])
        assert stack.parameters["pw"] == "******"
        assert {o["output_key"]: o["output_value"] for o in stack.outputs} == {"size": "small"}
        assert {r.resource_name: r.physical_resource_id for r in hc.resources.list(app["id"])} \
            == {r["name"]: r["physical_id"] for r in app["resources"]}
        assert hc.resources.get(app["id"], "rnd").attributes["value"] == "Zq8Lm2Pa"
        assert hc.stacks.get(spec[1]["id"]).parent == app["id"]
        assert hc.software_deployments.get(deployment).output_values == {"result": "done"}
        assert len(list(hc.events.list(app["id"]))) == 2
    finally:
        schema.drop()
