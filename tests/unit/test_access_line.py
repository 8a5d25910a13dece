"""The web server's access lines: the same text as hypercorn's own atoms give."""
import time

import pytest
from hypercorn.config import Config
from hypercorn.logging import AccessLogAtoms

from heatweb.web import AccessLineAtoms

REQUEST = {
    "type": "http", "method": "GET", "http_version": "1.1", "scheme": "http",
    "path": "/v1/p/stacks/s/0b0c", "query_string": b"limit=20", "client": ("127.0.0.1", 4242),
    "headers": [(b"host", b"127.0.0.1:8004"), (b"User-Agent", b"first"),
                (b"user-agent", b"python-heatclient"), (b"x-auth-token", b"secret")],
}
RESPONSE = {"status": 200, "headers": [(b"content-type", b"application/json"),
                                       (b"content-length", b"1111")]}
FORMATS = [Config.access_log_format,  # the default, which heatweb uses
           '%(h)s %(R)s %(st)s %(B)s "%({x-auth-token}i)s" %({Content-Type}o)s %(p)s %(q)s',
           "%(missing)s %({referer}i)s %({nothing}o)s %(m)s %(U)s %(H)s %(S)s"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("request_scope, response", [
    (REQUEST, RESPONSE),
    ({**REQUEST, "client": None, "headers": [(b"referer", b"http://x/")]}, None),
    ({**REQUEST, "client": ("/tmp/sock",)}, {"status": 599, "headers": []}),
])
def test_access_line_as_hypercorn_writes_it(monkeypatch, fmt, request_scope, response):
    monkeypatch.setattr(time, "strftime", lambda f, *a: "[29/Nov/2026:21:00:00 +0000]")
    ours = AccessLineAtoms(request_scope, response, 0.0125)
    assert ours  # logging formats with a mapping only when it is not empty
    assert fmt % ours == fmt % AccessLogAtoms(request_scope, response, 0.0125)
