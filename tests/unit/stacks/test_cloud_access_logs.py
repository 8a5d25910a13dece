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
