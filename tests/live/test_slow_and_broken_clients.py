"""Issue 25: huge integers, cut-short and slow clients, duplicate keys, forwarded headers.

Each request goes through the live web server (``heatweb.web``) over HTTP or
a raw socket, expects Heat's error and checks that nothing was stored. The
slow-client test asserts that a normal request completes while 40 clients
trickle their bodies in (a loose bound, not a benchmark); a second server with
two-second read timeouts shows what those clients get in the end.
"""
import json
import re
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from tests.live.test_bad_input import Api, assert_heat_error, assert_nothing_stored

pytestmark = pytest.mark.live

HOT = "2021-04-16"
DECIMAL = "9" * 4301  # past Python's 4,300-digit limit of int() on text
HEX = "0x" + "f" * 4000  # converts, but cannot be written back as decimal text
NONE = {"a": {"type": "OS::Heat::None"}}


@pytest.fixture(scope="module")
def tenant(live_service):
    return live_service.issue_token(f"slow-{uuid.uuid4().hex[:6]}", f"slow-{uuid.uuid4().hex[:6]}")


@pytest.fixture(scope="module")
def api(tenant):
    return Api(tenant["endpoint"], tenant["token"])


def template_with(number):
    """A template whose parameter default is ``number``, as YAML text."""
    return (f"heat_template_version: {HOT}\nparameters:\n  p:\n    type: number\n"
            f"    default: {number}\nresources:\n  a:\n    type: OS::Heat::None\n")


def good_template():
    return {"heat_template_version": HOT, "resources": NONE}


@pytest.fixture(scope="module")
def stack(api):
    """A stack to update: (name, id)."""
    name = f"s{uuid.uuid4().hex[:8]}"
    resp = api.request("POST", "/stacks", {"stack_name": name, "template": good_template()})
    assert resp.status_code == 201, resp.text
    return name, resp.json()["stack"]["id"]


def huge_requests(number, stack):
    """(method, path, body) of each place a template or environment is read."""
    name, stack_id = stack
    new = f"h{uuid.uuid4().hex[:8]}"
    nested = {"heat_template_version": HOT,
              "resources": {"inner": {"type": "nested.yaml"}}}
    return {
        "create": ("POST", "/stacks", {"stack_name": new, "template": template_with(number)}),
        "validate": ("POST", "/validate", {"template": template_with(number)}),
        "preview": ("POST", "/stacks/preview",
                    {"stack_name": new, "template": template_with(number)}),
        "update": ("PUT", f"/stacks/{name}/{stack_id}", {"template": template_with(number)}),
        "update-patch-environment": ("PATCH", f"/stacks/{name}/{stack_id}", {
            "environment": f"parameter_defaults:\n  p: {number}\n"}),
        "environment": ("POST", "/stacks", {
            "stack_name": new, "template": good_template(),
            "environment": f"parameter_defaults:\n  p: {number}\n"}),
        "files": ("POST", "/stacks", {
            "stack_name": new, "template": nested,
            "files": {"nested.yaml": template_with(number)}}),
    }, new


PLACES = ["create", "validate", "preview", "update", "update-patch-environment",
          "environment", "files"]


@pytest.mark.parametrize("number", [DECIMAL, HEX], ids=["decimal-4301", "hex-4000"])
@pytest.mark.parametrize("place", PLACES)
def test_huge_yaml_integer_is_refused(api, stack, place, number):
    requests_by_place, new = huge_requests(number, stack)
    method, path, body = requests_by_place[place]
    resp = api.request(method, path, body, timeout=30)
    assert_heat_error(resp, 400, "InvalidInput", "an integer of more than 1000 digits")
    assert_nothing_stored(api, new)
    name, stack_id = stack
    shown = api.request("GET", f"/stacks/{name}/{stack_id}").json()["stack"]
    assert "UPDATE" not in shown["stack_status"], shown["stack_status"]


def test_huge_json_integer_in_a_body_is_refused(api):
    name = f"h{uuid.uuid4().hex[:8]}"
    raw = ('{"stack_name": "%s", "template": %s, "parameters": {"p": %s}}'
           % (name, json.dumps(good_template()), "9" * 5000))
    resp = api.request("POST", "/stacks", raw=raw, timeout=30)
    assert_heat_error(resp, 400, "InvalidInput", "an integer of more than 1000 digits")
    assert_nothing_stored(api, name)


# Duplicate keys ---------------------------------------------------------------------------

def test_duplicate_key_in_a_json_body_is_refused(api):
    name = f"d{uuid.uuid4().hex[:8]}"
    raw = ('{"stack_name": "%s", "template": %s, "stack_name": "other%s"}'
           % (name, json.dumps(good_template()), name))
    resp = api.request("POST", "/stacks", raw=raw)
    assert_heat_error(resp, 400, "DuplicateKey", "'stack_name' appears twice")
    assert_nothing_stored(api, name)
    assert_nothing_stored(api, "other" + name)


def test_duplicate_key_in_yaml_text_keeps_the_last_as_in_heat(api):
    # Heat's loader keeps the last value (Magnum's templates rely on it); bodies stay strict.
    template = (f"heat_template_version: {HOT}\nparameters:\n  x: {{type: number, default: 0}}\n"
                "  x: {type: number, default: 5}\nresources: {}\n")
    resp = api.request("POST", "/validate", {"template": template})
    assert resp.status_code == 200, resp.text
    assert resp.json()["Parameters"]["x"]["Default"] == 5
    resp = api.request("POST", "/validate", {
        "template": template, "environment": "parameter_defaults:\n  x: 1\n  x: 2\n"})
    assert resp.status_code == 200, resp.text


def test_yaml_merge_keys_may_still_be_overridden(api):
    text = (f"heat_template_version: {HOT}\nparameters:\n  base: &b {{type: string, default: x}}\n"
            "  p:\n    <<: *b\n    default: y\nresources: {}\n")
    resp = api.request("POST", "/validate", {"template": text})
    assert resp.status_code == 200, resp.text
    assert resp.json()["Parameters"]["p"]["Default"] == "y"


# Budgets of tags and lists ----------------------------------------------------------------

def test_200000_tags_are_refused(api):
    name = f"t{uuid.uuid4().hex[:8]}"
    body = {"stack_name": name, "template": good_template(),
            "tags": [f"t{i}" for i in range(200_000)]}
    resp = api.request("POST", "/stacks", body, timeout=30)
    assert_heat_error(resp, 413, "RequestLimitExceeded", "at most 100 tags")
    assert_nothing_stored(api, name)


def test_million_item_comma_delimited_list_is_refused(api):
    name = f"l{uuid.uuid4().hex[:8]}"
    template = {"heat_template_version": HOT,
                "parameters": {"l": {"type": "comma_delimited_list"}}, "resources": NONE}
    body = {"stack_name": name, "template": template, "parameters": {"l": "a," * 999_999 + "a"}}
    resp = api.request("POST", "/stacks", body, timeout=30)
    assert_heat_error(resp, 413, "RequestLimitExceeded", "parameter l")
    assert_nothing_stored(api, name)


# Cut-short requests -----------------------------------------------------------------------

def raw_head(tenant, path, length, method="POST"):
    url = urlsplit(tenant["endpoint"])
    return (f"{method} {url.path}{path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
            f"X-Auth-Token: {tenant['token']}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def connect(tenant):
    url = urlsplit(tenant["endpoint"])
    return socket.create_connection((url.hostname, url.port), timeout=30)


def answer_of(sock):
    """What the server writes back before closing (b"" when it writes nothing)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return data


@pytest.mark.parametrize("half_close", [False, True], ids=["close", "half-close"])
def test_body_shorter_than_its_content_length_is_never_run(api, tenant, half_close):
    name = f"c{uuid.uuid4().hex[:8]}"
    body = json.dumps({"stack_name": name, "template": good_template()}).encode()
    sock = connect(tenant)
    try:
        sock.sendall(raw_head(tenant, "/stacks", 100_000) + body)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
            answer = answer_of(sock)
            assert not answer.startswith(b"HTTP/1.1 2"), answer
    finally:
        sock.close()
    time.sleep(1)  # had it been dispatched, the create would be stored by now
    assert_nothing_stored(api, name)


# Slow clients -----------------------------------------------------------------------------

class SlowClients:
    """Sockets that send a POST head announcing 2000 bytes, then 10 bytes every 2 s."""

    def __init__(self, tenant, count):
        self.sockets = [connect(tenant) for _ in range(count)]
        head = raw_head(tenant, "/stacks", 2000)
        for sock in self.sockets:
            sock.sendall(head)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self):
        while not self.stopped.wait(2):
            for sock in self.sockets:
                try:
                    sock.sendall(b" " * 10)
                except OSError:
                    pass

    def close(self):
        self.stopped.set()
        self.thread.join()
        for sock in self.sockets:
            sock.close()


def test_slow_clients_hold_no_thread(live_service, api, tenant):
    slow = SlowClients(tenant, 40)  # the test server has 2 workers x 4 threads
    try:
        time.sleep(3)
        for _ in range(3):
            resp = api.request("GET", "/stacks?limit=5", timeout=30)
            assert resp.status_code == 200, resp.text
        name = f"n{uuid.uuid4().hex[:8]}"
        created = api.request("POST", "/stacks", {"stack_name": name,
                                                  "template": good_template()}, timeout=30)
        assert created.status_code == 201, created.text
    finally:
        slow.close()


@pytest.fixture(scope="module")
def short_reads(tmp_path_factory):
    """The web server alone, with read timeouts of 2 s (header) and 3 s (body)."""
    from tests.conftest import LiveService

    service = LiveService(tmp_path_factory.mktemp("reads"), name="reads", workers=0,
                          HEATWEB_HEADER_READ_SECONDS="2", HEATWEB_BODY_READ_SECONDS="3").start()
    info = service.issue_token(f"r-{uuid.uuid4().hex[:6]}", f"r-{uuid.uuid4().hex[:6]}")
    yield service, info
    service.stop()


def test_slow_body_gets_408_and_is_not_run(short_reads):
    service, info = short_reads
    slow = SlowClients(info, 3)
    try:
        answers = [answer_of(sock) for sock in slow.sockets]
    finally:
        slow.close()
    for answer in answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer
        assert json.loads(body)["error"]["type"] == "RequestTimeout"
    listed = Api(info["endpoint"], info["token"]).request("GET", "/stacks")
    assert listed.status_code == 200 and listed.json()["stacks"] == []


def test_slow_request_head_is_closed(short_reads):
    service, info = short_reads
    sock = connect(info)
    sock.settimeout(30)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        closed = False
        for _ in range(30):  # one header line a second: never a whole head
            try:
                sock.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            time.sleep(1)
        if not closed:
            closed = answer_of(sock) == b""
        assert closed
    finally:
        sock.close()


def test_announced_oversized_body_is_413_before_it_is_read(short_reads):
    service, info = short_reads
    sock = connect(info)
    try:
        sock.sendall(raw_head(info, "/stacks", 50 * 1024 * 1024) + b"{")
        answer = answer_of(sock)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer


# Web worker memory ------------------------------------------------------------------------

def web_workers_rss_mb(service):
    """{pid: resident MB} of the web server's worker processes."""
    master = service.processes["web"][0].pid
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(re.search(r"^PPid:\s+(\d+)", status, re.M).group(1)) == master \
                and b"spawn_main" in command:
            rss_kb = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M).group(1))
            found[int(entry.name)] = rss_kb / 1024
    assert found, "no web worker found"
    return found


def validate_with_distinct_files(tenant, count):
    """``count`` validations, each with a 400 KB template file no other request sent."""
    api = Api(tenant["endpoint"], tenant["token"])
    for _ in range(count):
        body = (f"heat_template_version: {HOT}\nparameters:\n  x:\n    type: string\n"
                f"    default: {'y' * 400_000}{uuid.uuid4().hex}\nresources: {{}}\n")
        template = {"heat_template_version": HOT,
                    "resources": {f"r{i}": {"type": "f.yaml"} for i in range(20)}}
        resp = api.request("POST", "/validate", {"template": template, "files": {"f.yaml": body}},
                           timeout=60)
        assert resp.status_code == 200, resp.text


def test_web_worker_memory_returns_near_idle_after_a_burst(live_service, tenant):
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: validate_with_distinct_files(tenant, 3), range(4)))  # warm up
    time.sleep(4)
    idle = web_workers_rss_mb(live_service)
    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda _: validate_with_distinct_files(tenant, 50), range(6)))
    grown = {}
    for _ in range(30):  # a worker gives memory back once it has been idle a moment
        time.sleep(1)
        now = web_workers_rss_mb(live_service)
        grown = {pid: now[pid] - idle[pid] for pid in idle if pid in now}
        if grown and max(grown.values()) < 50:
            break
    assert set(grown) == set(idle), "a web worker was replaced"
    assert max(grown.values()) < 50, f"MB over idle after the burst: {grown}"


# Forwarded headers ------------------------------------------------------------------------

def test_forwarded_proto_is_not_trusted_without_behind_proxy(api, stack):
    name, stack_id = stack
    resp = api.request("GET", f"/stacks/{name}/{stack_id}",
                       headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"})
    assert resp.status_code == 200, resp.text
    links = [link["href"] for link in resp.json()["stack"]["links"]]
    assert links and all(href.startswith("http://127.0.0.1:") for href in links), links
