"""Issue 25, pure parts: huge integers, duplicate keys, and the request buffer (no server)."""
import asyncio
from concurrent.futures import ThreadPoolExecutor
import json

import pytest

from heatweb.buffering import BufferedWSGI, wsgi_environ
from heatweb.inputs import DuplicateKey, InvalidInput, load_json
from stacks.hot import load_text


@pytest.mark.parametrize("text", [
    "a: " + "9" * 4301,
    "a: " + "9" * 1001,
    "a: 0x" + "f" * 4000,
    "a: 0b" + "1" * 4000,
    '{"a": ' + "9" * 5000 + "}",
    '{"a": -' + "9" * 1001 + "}",
], ids=["decimal-4301", "decimal-1001", "hex", "binary", "json-5000", "json-negative"])
def test_integers_of_more_than_1000_digits_are_refused(text):
    with pytest.raises(InvalidInput, match="an integer of more than 1000 digits"):
        load_text(text)


def test_an_integer_of_1000_digits_is_kept():
    assert load_text("a: " + "9" * 1000)["a"] == int("9" * 1000)


def test_a_huge_integer_in_a_json_body_is_refused():
    with pytest.raises(InvalidInput, match="an integer of more than 1000 digits"):
        load_json('{"timeout_mins": ' + "1" * 4400 + "}", max_depth=64, max_nodes=100)


def test_duplicate_keys_in_a_body_are_refused_and_in_template_text_the_last_wins():
    # Heat's loader (PyYAML, json.loads) keeps the last value; a request body stays strict.
    assert load_text("a: 1\nb: 2\na: 3\n") == {"a": 3, "b": 2}
    assert load_text('{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}') == {"a": 3, "b": {"c": 2}}
    with pytest.raises(DuplicateKey, match="'a' appears twice"):
        load_json('{"a": 1, "b": {"c": 1}, "a": 2}', max_depth=64, max_nodes=100)
    with pytest.raises(DuplicateKey):
        load_json('{"b": {"c": 1, "c": 1}}', max_depth=64, max_nodes=100)


def test_merge_keys_may_be_overridden():
    assert load_text("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n")["c"] == {"x": 3, "y": 2}


# BufferedWSGI ------------------------------------------------------------------------------

def scope(length=None, method="POST"):
    headers = [(b"host", b"h"), (b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http", "method": method, "path": "/v1/p/stacks", "query_string": b"a=1",
            "headers": headers, "http_version": "1.1", "scheme": "http",
            "server": ("127.0.0.1", 8004), "client": ("127.0.0.1", 5000)}


class Recorder:
    """A WSGI application that records the environs and bodies it was run on."""

    def __init__(self):
        self.calls = []

    def __call__(self, environ, start_response):
        self.calls.append((environ, environ["wsgi.input"].read()))
        start_response("201 Created", [("Content-Type", "text/plain")])
        return [b"made"]


def run(app, scope, messages, *, pause=0):
    """Feed ``messages`` to ``app`` (``pause`` s before each); the messages it sent."""
    sent = []

    async def main():
        queue = list(messages)

        async def receive():
            if pause:
                await asyncio.sleep(pause)
            if queue:
                return queue.pop(0)
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        await app(scope, receive, send)

    # A thread of its own: a test run may already have an event loop in this one
    # (Playwright's sync API keeps one for the session's browser).
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, main()).result()
    return sent


def buffered(recorder, **kw):
    return BufferedWSGI(recorder, threads=2, max_body_bytes=kw.get("max_body_bytes", 200_000),
                        body_seconds=kw.get("body_seconds", 5), when_idle=None)


def test_a_whole_body_is_run_once():
    recorder = Recorder()
    sent = run(buffered(recorder), scope(10), [
        {"type": "http.request", "body": b"01234", "more_body": True},
        {"type": "http.request", "body": b"56789", "more_body": False}])
    assert [body for _, body in recorder.calls] == [b"0123456789"]
    environ = recorder.calls[0][0]
    assert environ["CONTENT_LENGTH"] == "10" and environ["QUERY_STRING"] == "a=1"
    assert environ["wsgi.url_scheme"] == "http" and environ["REMOTE_ADDR"] == "127.0.0.1"
    assert sent[0]["status"] == 201 and sent[1]["body"] == b"made"


def test_a_body_cut_short_is_never_run():
    recorder = Recorder()
    sent = run(buffered(recorder), scope(100000), [
        {"type": "http.request", "body": b'{"stack_name": "x"}', "more_body": True},
        {"type": "http.disconnect"}])
    assert recorder.calls == [] and sent == []


def test_a_slow_body_is_a_408_and_never_run():
    recorder = Recorder()
    sent = run(buffered(recorder, body_seconds=0.3),
               scope(2000), [{"type": "http.request", "body": b"x" * 10, "more_body": True}] * 50,
               pause=0.1)
    assert recorder.calls == []
    assert sent[0]["status"] == 408
    assert json.loads(sent[1]["body"])["error"]["type"] == "RequestTimeout"


def test_an_announced_or_read_body_over_the_limit_is_a_413():
    recorder = Recorder()
    sent = run(buffered(recorder, max_body_bytes=100), scope(101), [])
    assert sent[0]["status"] == 413 and recorder.calls == []
    sent = run(buffered(recorder, max_body_bytes=100), scope(), [
        {"type": "http.request", "body": b"x" * 60, "more_body": True},
        {"type": "http.request", "body": b"x" * 60, "more_body": False}])
    assert sent[0]["status"] == 413 and recorder.calls == []


def test_header_names_with_underscores_are_dropped():
    request = scope(0)
    request["headers"] += [(b"x_auth_token", b"forged"), (b"x-auth-token", b"real")]
    assert wsgi_environ(request, b"")["HTTP_X_AUTH_TOKEN"] == "real"
