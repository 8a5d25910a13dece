"""bench_direct's counting of one client's requests in a cloud's access logs, and its
shapes' templates (pure: no database, no cloud)."""
import yaml

from stacks.management.bench_direct_shapes import SHAPES, template_and_files
from stacks.management.cloud_access_logs import AccessLogs, count_lines, parse_line, \
    request_kind

SDK = "keystoneauth1/5.18.1 python-requests/2.34.2 CPython/3.11.7"
ID = "5d1e6c1c-0a4b-4f33-9a5e-2f0f4b7e8a11"


def line(request, agent, status=200):
    return (f'127.0.0.1 - - [28/Nov/2026:13:19:22 +0000] "{request} HTTP/1.1" {status} 384 '
            f'"-" "{agent}"')


def test_a_line_gives_its_method_path_status_and_user_agent():
    assert parse_line(line("GET /v2.1/servers/detail", f"bench-a openstacksdk/4.22.0 {SDK}")) \
        == ("GET", "/v2.1/servers/detail", 200, f"bench-a openstacksdk/4.22.0 {SDK}")
    assert parse_line("gunicorn: Booting worker with pid 1") is None


def test_a_request_kind_leaves_ids_and_the_query_out():
    assert request_kind("POST", f"/v2.1/servers/{ID}/action") == \
        "POST /v2.1/servers/{id}/action"
    assert request_kind("GET", f"/v2.0/ports?device_id={ID}") == "GET /v2.0/ports"
    assert request_kind("DELETE", f"/v2.0/ports/{ID.replace('-', '')}") == \
        "DELETE /v2.0/ports/{id}"


def test_only_the_named_client_is_counted_not_the_services_or_other_clients():
    lines = [
        line("POST /v2.1/servers", f"bench-a {SDK}", 202),
        line(f"POST /v2.1/servers/{ID}/action", f"bench-a/1.0 openstacksdk/4.22.0 {SDK}", 202),
        line("GET /v2.1/servers/detail", f"bench-ab {SDK}"),  # another client
        line(f"PUT /v2.0/ports/{ID}", f"nova-api {SDK}"),  # a service's own call
        line("GET /v2.1/servers/detail", "python-novaclient"),
        "not a request line",
    ]
    total, kinds = count_lines(lines, "bench-a")
    assert total == 2
    assert kinds == {"POST /v2.1/servers": 1, "POST /v2.1/servers/{id}/action": 1}


def test_requests_are_counted_from_a_mark_on(tmp_path):
    nova = tmp_path / "nova-api-access.log"
    nova.write_text(line("POST /v2.1/servers", f"bench-a {SDK}") + "\n")
    logs = AccessLogs(tmp_path)
    mark = logs.mark()
    with nova.open("a") as log:
        log.write(line("GET /v2.1/servers/detail", f"bench-a {SDK}") + "\n")
    counts = logs.since(mark, "bench-a")
    assert counts["nova"][0] == 1
    assert counts["neutron"][0] == counts["glance"][0] == 0  # no log: nothing counted


def test_each_shape_holds_its_servers_and_the_update_changes_only_the_marker():
    for shape in SHAPES.values():
        text, files = template_and_files(shape, image="img", flavor="m1.tiny")
        templates = [yaml.safe_load(text)] + [yaml.safe_load(f) for f in files.values()]
        servers = [r for t in templates for r in t["resources"].values()
                   if r["type"] == "OS::Nova::Server"]
        groups = [r["properties"]["count"] for t in templates for r in t["resources"].values()
                  if r["type"] == "OS::Heat::ResourceGroup"]
        assert len(servers) + sum(groups) == shape.servers, shape.name
        assert templates[0]["parameters"]["marker"]["default"] == "1"
        assert "*id" not in text  # no YAML aliases (heatweb refuses more than 100)


def test_heat_yardsticks_requests_are_counted_by_its_tag_not_novas_own_neutronclient():
    # Heat's clients send python-neutronclient, and so does Nova to Neutron: the
    # yardstick's launchers (scripts/heat-yardstick/agent.py) put heat-yardstick first.
    lines = [
        line("POST /v2.0/ports", "heat-yardstick python-neutronclient", 201),
        line(f"GET /v2.1/servers/{ID}", "heat-yardstick python-novaclient"),
        line("GET /v2/images", "heat-yardstick python-glanceclient"),
        line(f"PUT /v2.0/ports/{ID}", "python-neutronclient"),  # Nova binding Heat's port
        line("GET /v2.0/ports?device_id=x", "python-neutronclient"),
    ]
    total, kinds = count_lines(lines, "heat-yardstick")
    assert total == 3
    assert kinds == {"POST /v2.0/ports": 1, "GET /v2.1/servers/{id}": 1, "GET /v2/images": 1}


def test_the_heat_yardsticks_tag_goes_first_in_every_request(monkeypatch):
    import importlib.util
    from pathlib import Path

    import requests
    from requests.adapters import HTTPAdapter

    sent = []
    original = HTTPAdapter.send
    monkeypatch.setattr(HTTPAdapter, "send", lambda self, request, *a, **k: sent.append(
        request.headers["User-Agent"]))
    path = Path(__file__).resolve().parents[3] / "scripts" / "heat-yardstick" / "agent.py"
    spec = importlib.util.spec_from_file_location("heat_yardstick_agent", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    try:
        request = requests.Request("GET", "http://127.0.0.1:9/",
                                   headers={"User-Agent": "python-novaclient"}).prepare()
        HTTPAdapter().send(request)
    finally:
        monkeypatch.setattr(HTTPAdapter, "send", original)
    assert sent == ["heat-yardstick python-novaclient"]
    assert count_lines([line("GET /v2.1", sent[0])], "heat-yardstick")[0] == 1
