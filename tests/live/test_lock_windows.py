"""Maintenance windows (issue 16): locks that expire, lock history, lock preview, locks that heal.

Through python-heatclient's HTTP client and heatweb's ``heat`` command,
against a live service of its own whose engines sweep every second (an
expired lock whose unlock failed is retried by the sweep; physical locks
are verified every three seconds).
"""
import json
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from heatclient import exc

from tests.conftest import LiveService
from tests.live.door import openstack_command

pytestmark = pytest.mark.live

SERVER_AND_IMAGE = {"heat_template_version": "2016-10-14", "resources": {
    "image": {"type": "OS::Glance::Image", "properties": {"location": "http://img/x.qcow2"}},
    "server": {"type": "OS::Nova::Server",
               "properties": {"image": {"get_resource": "image"}, "flavor": "m1.small"}}}}


NESTED = {"heat_template_version": "2016-10-14", "resources": {
    **SERVER_AND_IMAGE["resources"],
    "kept": {"type": "OS::Glance::Image", "properties": {"location": "http://img/y.qcow2",
                                                         "protected": True}},
    "word": {"type": "OS::Heat::RandomString"},
    "child": {"type": "OS::Heat::Stack", "properties": {"template": json.dumps({
        "heat_template_version": "2016-10-14", "resources": {
            "inner": {"type": "OS::Heat::RandomString"},
            "inner_image": {"type": "OS::Glance::Image",
                            "properties": {"location": "http://img/z.qcow2"}}}})}}}}


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = LiveService(tmp_path_factory.mktemp("windows"), name="windows",
                      HEATWEB_HEARTBEAT="0.5", HEATWEB_SWEEP_EVERY_BEATS="2",
                      HEATWEB_LOCK_VERIFY_SECONDS="3").start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def info(service):
    return service.issue_token(f"win-{uuid.uuid4().hex[:6]}", f"win-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def hc(info):
    from heatclient import client

    return client.Client("1", endpoint=info["endpoint"], token=info["token"])


def create(hc, template=SERVER_AND_IMAGE):
    name = f"w{uuid.uuid4().hex[:8]}"
    stack_id = hc.stacks.create(stack_name=name, template=template)["stack"]["id"]
    wait(hc, f"{name}/{stack_id}", "CREATE_COMPLETE")
    return f"{name}/{stack_id}"


def show(hc, ident):
    return hc.http_client.get(f"/stacks/{ident}").json()["stack"]


def wait(hc, ident, state, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack = show(hc, ident)
        if stack["stack_status"] == state:
            return stack
        time.sleep(0.2)
    raise AssertionError(f"{ident}: {show(hc, ident)['stack_status']} "
                         f"({show(hc, ident)['stack_status_reason']}), wanted {state}")


def action(hc, ident, body):
    return hc.http_client.post(f"/stacks/{ident}/actions", data=body)


def history(hc, ident, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return hc.http_client.get(f"/stacks/{ident}/locks?{query}").json()["locks"]


def events(hc, ident):
    return [e.resource_status_reason for e in hc.events.list(ident)]


def cloud(service, code):
    """Run ``code`` against the live service's cloud driver (``c``); its last printed line as JSON."""
    script = "import json\nfrom stacks.cloud import get_cloud_driver\nc = get_cloud_driver()\n" + code
    done = service.manage("shell", "-c", script)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def physical(hc, ident):
    res = {r.resource_name: r.physical_resource_id for r in hc.resources.list(ident)}
    return res["server"], res["image"]


def protection(service, server, image):
    return cloud(service, f"print(json.dumps([c.server_get('{server}')['locked'], "
                          f"c.image_get('{image}')['protected']]))")


def refused(call, status, fragment):
    with pytest.raises(exc.HTTPException) as error:
        call()
    assert error.value.code == status, error.value
    text = f"{error.value} {json.dumps(getattr(error.value, 'error', None))}"
    assert fragment in text, text


# Locks that expire ---------------------------------------------------------------------------

def test_a_lock_for_three_seconds_unlocks_itself_and_the_history_shows_both(hc, service):
    ident = create(hc)
    server, image = physical(hc, ident)
    # 20 s: long enough that the lock's state and the cloud's protection are seen
    # before it expires on a loaded machine (3 s was over before them).
    action(hc, ident, {"lock": {"level": "all", "duration": "20s"}, "reason": "patching"})
    locked = wait(hc, ident, "LOCK_COMPLETE")
    expires = datetime.strptime(locked["lock_expires_at"], "%Y-%m-%dT%H:%M:%SZ")
    locked_at = datetime.strptime(locked["locked_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert timedelta(seconds=19) <= expires - locked_at <= timedelta(seconds=21)
    assert protection(service, server, image) == [True, True]
    unlocked = wait(hc, ident, "UNLOCK_COMPLETE", timeout=60)
    assert unlocked["locked"] is False and unlocked["lock_expires_at"] is None
    assert protection(service, server, image) == [False, False]
    assert any("lock window closed" in r and "expiry set by" in r for r in events(hc, ident))
    expiry, lock = history(hc, ident)
    assert (lock["kind"], lock["level"], lock["reason"]) == ("lock", "all", "patching")
    assert lock["expires_at"] == locked["lock_expires_at"] and lock["user"] == locked["locked_by"]
    assert (expiry["kind"], expiry["user"], expiry["level"]) == ("expiry", "the engine", "all")
    assert "lock window closed" in expiry["detail"] and expiry["held_seconds"] >= 19


def test_a_lock_until_a_time_and_a_relock_without_one(hc):
    ident = create(hc)
    until = (datetime.now(timezone.utc) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    action(hc, ident, {"lock": {"level": "stacks", "expires_at": until}})
    assert wait(hc, ident, "LOCK_COMPLETE")["lock_expires_at"] == until
    # Old bodies keep working: a relock to change the level ends the window.
    action(hc, ident, {"lock": {"level": "all"}})
    relocked = wait(hc, ident, "LOCK_COMPLETE")
    assert (relocked["lock_level"], relocked["lock_expires_at"]) == ("all", None)
    assert [r["kind"] for r in history(hc, ident)] == ["relock", "lock"]


def test_bad_windows_are_refused_before_the_state_is_asked(hc):
    ident = create(hc, {"heat_template_version": "2016-10-14",
                        "resources": {"n": {"type": "OS::Heat::None"}}})
    past = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for lock, fragment in [({"duration": "forever"}, "Invalid lock duration"),
                           ({"duration": "0s"}, "Invalid lock duration"),
                           ({"duration": "100000w"}, "at most"),
                           ({"expires_at": "tomorrow"}, "ISO 8601"),
                           ({"expires_at": past}, "not in the future"),
                           ({"expires_at": past, "duration": "1h"}, "not both"),
                           ({"until": "1h"}, "Unknown lock option")]:
        refused(lambda: action(hc, ident, {"lock": lock}), 400, fragment)
    assert show(hc, ident)["stack_status"] == "CREATE_COMPLETE"


def test_an_expired_lock_on_a_lock_failed_stack_is_unlocked_and_reported(hc, service):
    ident = create(hc)
    cloud(service, "from stacks.cloud.simulated import SimulatedCloud\n"
                   "SimulatedCloud.inject_fault('server_lock', 'lock service down')\n"
                   "print('{}')")
    action(hc, ident, {"lock": {"level": "all", "duration": "15s"}})
    wait(hc, ident, "LOCK_FAILED")
    wait(hc, ident, "UNLOCK_COMPLETE", timeout=60)
    reasons = events(hc, ident)
    assert any("lock window closed" in r and "the lock had failed" in r
               and "lock service down" in r for r in reasons), reasons
    assert [r["kind"] for r in history(hc, ident)] == ["expiry", "lock"]


def test_an_expired_lock_whose_unlock_fails_is_retried(hc, service):
    ident = create(hc)
    server, image = physical(hc, ident)
    cloud(service, "from stacks.cloud.simulated import SimulatedCloud\n"
                   "SimulatedCloud.inject_fault('server_unlock', 'unlock refused once')\n"
                   "print('{}')")
    action(hc, ident, {"lock": {"level": "all", "duration": "2s"}})
    wait(hc, ident, "LOCK_COMPLETE")
    wait(hc, ident, "UNLOCK_COMPLETE", timeout=40)
    assert protection(service, server, image) == [False, False]
    tries = [r for r in history(hc, ident, sort_dir="asc") if r["kind"] == "expiry"]
    assert len(tries) == 2 and "attempt 2" in tries[1]["detail"], tries
    assert "unlock refused once" in tries[1]["detail"]


# Lock history --------------------------------------------------------------------------------

def test_history_records_refusals_and_pages(hc, info):
    ident = create(hc, {"heat_template_version": "2016-10-14",
                        "resources": {"n": {"type": "OS::Heat::None"}}})
    action(hc, ident, {"lock": {"level": "stacks"}, "reason": "audit"})
    wait(hc, ident, "LOCK_COMPLETE")
    refused(lambda: action(hc, ident, {"suspend": None}), 409, "StackLocked")
    refused(lambda: hc.stacks.delete(ident), 409, "StackLocked")
    action(hc, ident, {"unlock": None})
    wait(hc, ident, "UNLOCK_COMPLETE")
    records = history(hc, ident)
    assert [r["kind"] for r in records] == ["unlock", "refusal", "refusal", "lock"]
    assert records[0]["held_seconds"] is not None and records[0]["reason"] == "audit"
    assert {records[1]["detail"].split(":")[0], records[2]["detail"].split(":")[0]} == \
        {"delete refused", "suspend refused"}
    assert all(r["user"] == records[-1]["user"] for r in records)
    first = history(hc, ident, limit=2)
    rest = history(hc, ident, limit=2, marker=first[-1]["id"])
    assert [r["id"] for r in first + rest] == [r["id"] for r in records]
    assert [r["id"] for r in history(hc, ident, sort_dir="asc")] == \
        [r["id"] for r in reversed(records)]
    refused(lambda: history(hc, ident, marker="nope"), 400, "Marker")
    shown = openstack_command(info, "stack", "lock", "history", ident.split("/")[0])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("refusal") == 2 and "audit" in shown.stdout


def test_locked_now_lists_the_project_and_only_admins_see_every_project(hc, service, info):
    ident = create(hc, {"heat_template_version": "2016-10-14",
                        "resources": {"n": {"type": "OS::Heat::None"}}})
    action(hc, ident, {"lock": {"level": "stacks", "duration": "1h"}, "reason": "freeze"})
    wait(hc, ident, "LOCK_COMPLETE")
    locked = hc.http_client.get("/locks").json()["locked_stacks"]
    mine = [s for s in locked if s["id"] == ident.split("/")[1]]
    assert len(mine) == 1 and mine[0]["lock_reason"] == "freeze" and mine[0]["lock_expires_at"]
    assert mine[0]["locked_by"] == show(hc, ident)["locked_by"]
    refused(lambda: hc.http_client.get("/locks?all_projects=true"), 403, "cloud admin")
    admin = service.heat(f"adm-{uuid.uuid4().hex[:6]}", f"admp-{uuid.uuid4().hex[:6]}",
                         role="admin")
    everywhere = admin.http_client.get("/locks?all_projects=true").json()["locked_stacks"]
    assert ident.split("/")[1] in {s["id"] for s in everywhere}
    listed = openstack_command(info, "stack", "lock", "list")
    assert listed.returncode == 0 and ident.split("/")[0] in listed.stdout, listed.stderr
    action(hc, ident, {"unlock": None})
    wait(hc, ident, "UNLOCK_COMPLETE")


def test_openstack_command_locks_for_a_while(hc, info):
    ident = create(hc, {"heat_template_version": "2016-10-14",
                        "resources": {"n": {"type": "OS::Heat::None"}}})
    name = ident.split("/")[0]
    done = openstack_command(info, "stack", "lock", name, "--level", "stacks", "--expires-in",
                             "15s", "--reason", "cli window")
    assert done.returncode == 0, done.stderr
    assert wait(hc, ident, "LOCK_COMPLETE")["lock_expires_at"]
    wait(hc, ident, "UNLOCK_COMPLETE", timeout=60)
    bad = openstack_command(info, "stack", "lock", name, "--expires-in", "soon")
    assert bad.returncode == 1 and "Invalid lock duration" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# Lock preview ---------------------------------------------------------------------------------

def _objects(preview):
    return {(o["stack_name"], o["resource_name"]): o for o in preview["objects"]}


def test_preview_lists_exactly_what_a_level_all_lock_then_locks(hc, service, info):
    ident = create(hc, NESTED)
    name = ident.split("/")[0]
    child = next(s for s in hc.stacks.list(show_nested=True) if s.parent == ident.split("/")[1])
    before = hc.http_client.get(f"/stacks/{ident}/locks/preview?level=all").json()["preview"]
    assert [(s["stack_name"], s["nested"], s["locked"]) for s in before["stacks"]] == \
        [(name, False, False), (child.stack_name, True, False)]
    objects = _objects(before)
    assert set(objects) == {(name, "image"), (name, "kept"), (name, "server"),
                            (child.stack_name, "inner_image")}
    assert {k[1]: o["protected_now"] for k, o in objects.items()} == \
        {"image": False, "kept": True, "server": False, "inner_image": False}
    assert {(c["stack_name"], c["resource_name"]): c["why"] for c in before["cannot_lock"]} == \
        {(name, "word"): "takes no physical lock",
         (child.stack_name, "inner"): "takes no physical lock"}
    stacks_only = hc.http_client.get(f"/stacks/{ident}/locks/preview?level=stacks").json()
    assert stacks_only["preview"]["objects"] == [] and len(stacks_only["preview"]["stacks"]) == 2
    refused(lambda: hc.http_client.get(f"/stacks/{ident}/locks/preview?level=x"), 400, "level")
    dry = openstack_command(info, "stack", "lock", name, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Nothing was locked" in dry.stderr and "inner_image" in dry.stdout
    assert show(hc, ident)["stack_status"] == "CREATE_COMPLETE"

    action(hc, ident, {"lock": {"level": "all"}})
    wait(hc, ident, "LOCK_COMPLETE")
    ids = [o["physical_resource_id"] for o in objects.values()]
    kinds = [o["object"].split()[0] for o in objects.values()]
    now = cloud(service, "print(json.dumps([c.server_get(i)['locked'] if k == 'server' else "
                         f"c.image_get(i)['protected'] for k, i in zip({kinds!r}, {ids!r})]))")
    assert now == [True] * len(ids)
    after = hc.http_client.get(f"/stacks/{ident}/locks/preview?level=all").json()["preview"]
    assert set(_objects(after)) == set(objects)
    assert all(o["protected_now"] and o["held_by_lock"] for o in after["objects"])
    assert all(s["locked"] for s in after["stacks"])


# Locks that heal ------------------------------------------------------------------------------

def test_a_server_unlocked_in_the_cloud_is_locked_again_and_the_event_names_it(hc, service):
    ident = create(hc)
    server, image = physical(hc, ident)
    action(hc, ident, {"lock": {"level": "all"}})
    wait(hc, ident, "LOCK_COMPLETE")
    cloud(service, f"c.server_unlock('{server}')\nc.image_protect('{image}', False)\n"
                   "print('{}')")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and protection(service, server, image) != [True, True]:
        time.sleep(0.5)
    assert protection(service, server, image) == [True, True]
    reasons = events(hc, ident)
    for what in (f"server {server}", f"image {image}"):
        healed = [r for r in reasons if what in r and "removed outside heatweb" in r]
        assert len(healed) == 1 and "locked it again" in healed[0], reasons
    heals = [r for r in history(hc, ident) if r["kind"] == "heal"]
    assert len(heals) == 2 and {h["user"] for h in heals} == {"the engine"}
    assert show(hc, ident)["stack_status"] == "LOCK_COMPLETE"
    action(hc, ident, {"unlock": None})
    wait(hc, ident, "UNLOCK_COMPLETE")
    assert protection(service, server, image) == [False, False]


def test_verify_on_demand_through_the_api_and_the_command(hc, service, info):
    ident = create(hc)
    server, image = physical(hc, ident)
    refused(lambda: hc.http_client.post(f"/stacks/{ident}/locks/verify"), 409, "LOCK_COMPLETE")
    action(hc, ident, {"lock": {"level": "all"}})
    wait(hc, ident, "LOCK_COMPLETE")
    # The engines' own sweep (every 3 s here) would heal it first: mark the stack verified
    # an hour from now, so the sweep leaves it to the API's verification.
    cloud(service, "from datetime import timedelta\nfrom django.utils import timezone\n"
                   "from stacks.models import Stack\n"
                   f"Stack.objects.filter(pk='{ident.split('/')[1]}').update("
                   "lock_verified_at=timezone.now() + timedelta(hours=1))\n"
                   f"c.server_unlock('{server}')\nprint('{{}}')")
    found = hc.http_client.post(f"/stacks/{ident}/locks/verify").json()["findings"]
    assert [(f["resource_name"], f["object"], f["healed"]) for f in found] == \
        [("server", f"server {server}", True)]
    assert protection(service, server, image) == [True, True]
    done = openstack_command(info, "stack", "lock", "verify", ident.split("/")[0])
    assert done.returncode == 0, done.stderr


def test_lock_healing_reports_drift_found_while_locked(hc, service):
    """Metadata changed behind a locked stack's back is reported by the engines' periodic
    check: a drift report and one line in the lock history (not one per sweep)."""
    ident = create(hc)
    server, _ = physical(hc, ident)
    action(hc, ident, {"lock": {"level": "all"}})
    wait(hc, ident, "LOCK_COMPLETE")
    cloud(service, f"c.server_update('{server}', metadata={{'role': 'changed'}})\n"
                   "print('{}')")
    deadline = time.monotonic() + 30
    found = []
    while time.monotonic() < deadline and not found:
        found = [r["detail"] for r in history(hc, ident) if r["kind"] == "heal"
                 and (r["detail"] or "").startswith("Drift found while locked")]
        time.sleep(0.5)
    assert found == ["Drift found while locked: server MODIFIED (metadata)"]
    report = hc.http_client.get(f"/stacks/{ident}/drift").json()["drift"]
    assert report["stack_drift_status"] == "DRIFTED" and report["user"] == "the engine"
    time.sleep(4)  # more sweeps: the same drift is not recorded again
    assert len([r for r in history(hc, ident)
                if (r["detail"] or "").startswith("Drift found")]) == 1
    assert show(hc, ident)["stack_status"] == "LOCK_COMPLETE"
    action(hc, ident, {"unlock": None})
    wait(hc, ident, "UNLOCK_COMPLETE")


# Fleet locks ----------------------------------------------------------------------------------

NONE = {"heat_template_version": "2016-10-14", "resources": {"n": {"type": "OS::Heat::None"}}}
SLOW = {"heat_template_version": "2016-10-14", "resources": {
    "slow": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 30}}}}


def test_a_fleet_lock_of_five_stacks_where_one_is_in_progress_locks_four(hc, info):
    tag = f"fleet-{uuid.uuid4().hex[:6]}"
    idents = []
    for _ in range(4):
        name = f"f{uuid.uuid4().hex[:8]}"
        stack_id = hc.stacks.create(stack_name=name, template=NONE, tags=tag)["stack"]["id"]
        idents.append(f"{name}/{stack_id}")
    for ident in idents:
        wait(hc, ident, "CREATE_COMPLETE")
    busy_name = f"f{uuid.uuid4().hex[:8]}"
    busy = f"{busy_name}/" + hc.stacks.create(stack_name=busy_name, template=SLOW,
                                              tags=tag)["stack"]["id"]
    results = hc.http_client.post("/fleet/actions", data={
        "lock": {"level": "stacks", "duration": "1h"}, "reason": "fleet window",
        "tag": tag}).json()["results"]
    outcomes = {r["stack_name"]: (r["outcome"], r["status"]) for r in results}
    assert outcomes == {**{i.split("/")[0]: ("started", 200) for i in idents},
                        busy_name: ("refused", 409)}
    refusal = next(r for r in results if r["stack_name"] == busy_name)["error"]
    assert refusal["type"] == "ActionInProgress"
    locked = [wait(hc, ident, "LOCK_COMPLETE") for ident in idents]
    assert {(s["lock_reason"], s["lock_level"]) for s in locked} == {("fleet window", "stacks")}
    assert len({s["lock_expires_at"] for s in locked}) == 1  # one window for the fleet
    assert show(hc, busy)["stack_status"] == "CREATE_IN_PROGRESS"

    named = hc.http_client.post("/fleet/actions", data={
        "unlock": None, "stacks": [idents[0].split("/")[0], "no-such-stack"]}).json()["results"]
    assert [(r["asked"], r["outcome"], r["status"]) for r in named] == \
        [(idents[0].split("/")[0], "started", 200), ("no-such-stack", "refused", 404)]
    wait(hc, idents[0], "UNLOCK_COMPLETE")
    done = openstack_command(info, "stack", "fleet", "unlock", "--tag", tag)
    assert done.returncode == 1, done.stderr  # the busy stack (and the unlocked one) refused
    assert done.stdout.count("started") == 3 and "in progress" in done.stdout, done.stdout
    for ident in idents[1:]:
        wait(hc, ident, "UNLOCK_COMPLETE")
    relocked = openstack_command(info, "stack", "fleet", "lock", "--name", "f*", "--tag", tag,
                                 "--level", "stacks", "--expires-in", "1h",
                                 *[i.split("/")[0] for i in idents])
    assert relocked.stdout.count("started") == 4, relocked.stdout + relocked.stderr
    refused(lambda: hc.http_client.post("/fleet/actions", data={"lock": None}), 400,
            "Name the stacks")
    refused(lambda: hc.http_client.post("/fleet/actions", data={
        "lock": {"duration": "never"}, "tag": tag}), 400, "Invalid lock duration")
    refused(lambda: hc.http_client.post("/fleet/actions", data={
        "suspend": None, "tag": tag}), 400, "lock or unlock")
    hc.stacks.delete(busy)


# Scheduled windows ----------------------------------------------------------------------------

def _at(seconds):
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def windows(hc, ident):
    return hc.http_client.get(f"/stacks/{ident}/lock_windows").json()["lock_windows"]


def wait_window(hc, ident, window_id, state, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = next(w for w in windows(hc, ident) if w["id"] == window_id)
        if found["state"] == state:
            return found
        time.sleep(0.2)
    raise AssertionError(f"window {window_id} is {found}, wanted {state}")


def test_a_window_in_the_future_locks_and_unlocks_on_time(hc):
    ident = create(hc, NONE)
    starts, ends = _at(4), _at(9)
    window = hc.http_client.post(f"/stacks/{ident}/lock_windows", data={
        "starts_at": starts, "ends_at": ends, "level": "stacks",
        "reason": "nightly backup"}).json()["lock_window"]
    assert (window["state"], window["starts_at"], window["ends_at"]) == \
        ("scheduled", starts, ends)
    assert show(hc, ident)["stack_status"] == "CREATE_COMPLETE"
    locked = wait(hc, ident, "LOCK_COMPLETE", timeout=30)
    assert (locked["lock_reason"], locked["lock_level"], locked["lock_expires_at"]) == \
        ("nightly backup", "stacks", ends)
    assert wait_window(hc, ident, window["id"], "active")
    assert datetime.strptime(locked["locked_at"], "%Y-%m-%dT%H:%M:%SZ") >= \
        datetime.strptime(starts, "%Y-%m-%dT%H:%M:%SZ")
    wait(hc, ident, "UNLOCK_COMPLETE", timeout=30)
    wait_window(hc, ident, window["id"], "done")
    assert [r["kind"] for r in history(hc, ident)] == ["expiry", "lock"]


def test_a_window_over_an_update_waits_and_then_locks(hc):
    template = {"heat_template_version": "2016-10-14",
                "parameters": {"v": {"type": "string", "default": "a"}},
                "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {
                    "value": {"get_param": "v"}, "action_wait_secs": {"update": 6}}}}}
    ident = create(hc, template)
    hc.stacks.update(ident, existing=True, parameters={"v": "b"})
    wait(hc, ident, "UPDATE_IN_PROGRESS")
    window = hc.http_client.post(f"/stacks/{ident}/lock_windows", data={
        "starts_at": _at(1), "ends_at": _at(120)}).json()["lock_window"]
    waiting = wait_window(hc, ident, window["id"], "waiting", timeout=20)
    assert waiting["note"] == "waits for the UPDATE in progress to end"
    assert any(f"Lock window {window['id']} waits for the UPDATE in progress to end" in r
               for r in events(hc, ident))
    wait(hc, ident, "LOCK_COMPLETE", timeout=60)
    assert [e.resource_status for e in hc.events.list(ident) if e.resource_name == "r"]
    assert wait_window(hc, ident, window["id"], "active")["note"] is None
    cancelled = hc.http_client.json_request(
        "DELETE", f"/stacks/{ident}/lock_windows/{window['id']}")[0].json()["lock_window"]
    assert cancelled["state"] == "cancelled" and "ended early" in cancelled["note"]
    wait(hc, ident, "UNLOCK_COMPLETE")


def test_windows_are_changed_cancelled_and_refused_when_bad(hc, info):
    ident = create(hc, NONE)
    name = ident.split("/")[0]
    made = openstack_command(info, "stack", "lock", "window", "create", name, "--start",
                             _at(3600), "--end", _at(7200), "--reason", "cli window")
    assert made.returncode == 0, made.stderr
    window = windows(hc, ident)[0]
    assert (window["state"], window["reason"]) == ("scheduled", "cli window")
    moved = hc.http_client.patch(f"/stacks/{ident}/lock_windows/{window['id']}", data={
        "starts_at": _at(1800), "level": "stacks"}).json()["lock_window"]
    assert (moved["starts_at"], moved["ends_at"], moved["level"]) == \
        (_at(1800)[:-3] + moved["starts_at"][-3:], window["ends_at"], "stacks")
    for body, fragment in [({"starts_at": _at(600), "ends_at": _at(300)}, "after its starts_at"),
                           ({"starts_at": _at(-600), "ends_at": _at(-300)}, "over already"),
                           ({"starts_at": "soon", "ends_at": _at(300)}, "ISO 8601"),
                           ({"starts_at": _at(2000), "ends_at": _at(3000)}, "overlaps"),
                           ({"starts_at": _at(10), "ends_at": _at(20), "level": "x"}, "level"),
                           ({"starts_at": _at(10), "ends_at": _at(20), "at": 1}, "Unknown")]:
        refused(lambda: hc.http_client.post(f"/stacks/{ident}/lock_windows", data=body), 400,
                fragment)
    listed = openstack_command(info, "stack", "lock", "window", "list", name)
    assert listed.returncode == 0 and "scheduled" in listed.stdout, listed.stderr
    gone = openstack_command(info, "stack", "lock", "window", "cancel", name, str(window["id"]))
    assert gone.returncode == 0 and "cancelled" in gone.stdout, gone.stderr
    refused(lambda: hc.http_client.patch(f"/stacks/{ident}/lock_windows/{window['id']}",
                                         data={"reason": "x"}), 409, "cancelled")
    refused(lambda: hc.http_client.get(f"/stacks/{ident}/lock_windows/999999"), 404, "window")
    assert show(hc, ident)["stack_status"] == "CREATE_COMPLETE"
