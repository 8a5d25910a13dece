"""Counting one client's requests to a cloud in its services' access logs.

``scripts/cloud-up`` serves each API under gunicorn with an access log
(``BASE/log/<service>-access.log``, gunicorn's default format, the
User-Agent last). A client that names itself in its User-Agent (openstacksdk's
``app_name``, heatweb's ``HEATWEB_CLOUD_APP_NAME``) is counted there alone:
the services' calls to each other (Nova to Neutron, Neutron to Nova, ...)
and other clients of the same cloud carry other names.
"""
import re
from collections import Counter
from pathlib import Path

# The services a benchmark compares, and the one a client also asks for tokens.
SERVICES = {"nova": "nova-api-access.log", "neutron": "neutron-api-access.log",
            "glance": "glance-api-access.log", "keystone": "keystone-access.log"}

_LINE = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) .*'
                   r'"(?P<agent>[^"]*)"\s*$')
_ID = re.compile(r"/[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}(?=/|$|\?)")


def parse_line(line):
    """``(method, path, status, user agent)`` of one access-log line, or None."""
    match = _LINE.search(line)
    if match is None:
        return None
    return match["method"], match["path"], int(match["status"]), match["agent"]


def request_kind(method, path):
    """A request's method and path with ids and the query left out:
    ``GET /v2.1/servers/{id}``."""
    return f"{method} {_ID.sub('/{id}', path.split('?', 1)[0])}"


def count_lines(lines, agent):
    """``(total, Counter of request kinds)`` of the lines whose User-Agent names ``agent``
    (as its first word: ``agent keystoneauth1/...`` or ``agent/1.0 ...``)."""
    kinds = Counter()
    for line in lines:
        parsed = parse_line(line)
        if parsed is None:
            continue
        method, path, _status, user_agent = parsed
        if user_agent.split(" ", 1)[0].split("/", 1)[0] == agent:
            kinds[request_kind(method, path)] += 1
    return sum(kinds.values()), kinds


class AccessLogs:
    """The access logs of a cloud's services: where each one ends now, and the requests
    one client sent since."""

    def __init__(self, log_dir):
        self.paths = {service: Path(log_dir) / name for service, name in SERVICES.items()}

    def mark(self):
        """Every log's current length (a point to count from)."""
        return {service: path.stat().st_size if path.exists() else 0
                for service, path in self.paths.items()}

    def since(self, mark, agent):
        """``{service: (count, Counter of request kinds)}`` of ``agent``'s requests logged
        after ``mark``."""
        out = {}
        for service, path in self.paths.items():
            if not path.exists():
                out[service] = (0, Counter())
                continue
            with path.open("rb") as log:
                log.seek(mark.get(service, 0))
                text = log.read().decode("utf-8", "replace")
            out[service] = count_lines(text.splitlines(), agent)
        return out
