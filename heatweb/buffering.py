"""Runs the WSGI application only on whole requests, on a bounded pool of threads.

``BufferedWSGI`` is an ASGI application (the web server, ``heatweb.web``, is
an asyncio server) around Django's WSGI handler. The event loop reads each
request body in full, within ``body_seconds`` and ``max_body_bytes``; only
then does one of ``threads`` threads run the application on it, and the
answer is collected in that thread and written back by the loop. So:

* a slow client (headers or a body trickling in, or a reader that does not
  read its answer) holds a connection, never an application thread;
* a request whose client goes away before its body is complete (fewer bytes
  than its ``Content-Length``) is never dispatched;
* a body announced larger than ``max_body_bytes`` is a 413 before any of it
  is read, and one that is not complete within ``body_seconds`` is a 408.

When no request has run for ``IDLE_SECONDS`` after some did, the worker
gives the memory they freed back to the system (``release_memory``): after a
burst of large requests its RSS returns near what it was.

The server bounds the header read (``heatweb.web``: a connection that has
not sent a whole request head within the header timeout is closed).
"""
import asyncio
import ctypes
import gc
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO


IDLE_SECONDS = 2


try:
    _malloc_trim = ctypes.CDLL(None).malloc_trim
except (OSError, AttributeError):  # not glibc: nothing to trim
    _malloc_trim = None


def release_memory():
    """Collect cycles, then hand the C heap's free pages back to the system (glibc)."""
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)


class _Disconnected(Exception):
    """The client went away before its request was complete."""


class _Refused(Exception):
    def __init__(self, status, error_type, message):
        super().__init__(message)
        self.status, self.error_type, self.message = status, error_type, message


def _plain_error_body(status, error_type, message):
    return {"code": status, "title": "Error", "explanation": message,
            "error": {"type": error_type, "message": message, "traceback": None}}


def _error_answer(error_body, status, error_type, message):
    body = json.dumps(error_body(status, error_type, message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)),
               (b"connection", b"close")]
    return status, headers, body


class BufferedWSGI:
    """An ASGI application that hands whole requests to a WSGI application."""

    def __init__(self, wsgi_app, *, threads, max_body_bytes, body_seconds,
                 error_body=_plain_error_body, when_idle=release_memory):
        """``error_body(status, type, message)`` is the JSON of a refusal made here;
        ``when_idle()`` runs in a pool thread once requests stopped for ``IDLE_SECONDS``."""
        self.wsgi_app = wsgi_app
        self.error_body = error_body
        self.when_idle = when_idle
        self._running = 0
        self._idle_timer = None
        self.threads = threads
        self.max_body_bytes = max_body_bytes
        self.body_seconds = body_seconds
        self._executor = None

    @property
    def executor(self):
        # Made on first use: a worker process is started (spawned) after this
        # module is imported by the server's parent.
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=self.threads,
                                                thread_name_prefix="wsgi")
        return self._executor

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1003})

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._executor is not None:
                    # Requests still running finish (their threads are waited for).
                    self._executor.shutdown(wait=False)
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope, receive, send):
        try:
            body = await self._read_body(scope, receive)
        except _Disconnected:
            return
        except _Refused as refusal:
            await self._answer(send, *_error_answer(self.error_body, refusal.status,
                                                    refusal.error_type, refusal.message))
            return
        environ = wsgi_environ(scope, body)
        loop = asyncio.get_running_loop()
        self._running += 1
        try:
            answer = await loop.run_in_executor(self.executor, self._run_app, environ)
        finally:
            self._running -= 1
            if self._running == 0 and self.when_idle is not None:
                if self._idle_timer is not None:
                    self._idle_timer.cancel()
                self._idle_timer = loop.call_later(IDLE_SECONDS, self._on_idle, loop)
        await self._answer(send, *answer)

    def _on_idle(self, loop):
        self._idle_timer = None
        if self._running == 0:
            loop.run_in_executor(self.executor, self.when_idle)

    async def _read_body(self, scope, receive):
        announced = _content_length(scope)
        if announced is not None and announced > self.max_body_bytes:
            raise _Refused(413, "RequestLimitExceeded",
                           f"Request limit exceeded: the request body ({announced} bytes) is "
                           f"larger than {self.max_body_bytes} bytes.")
        try:
            return await asyncio.wait_for(self._receive_all(receive), self.body_seconds)
        except asyncio.TimeoutError:
            raise _Refused(408, "RequestTimeout",
                           f"The request body was not received within {self.body_seconds:g} "
                           "seconds.") from None

    async def _receive_all(self, receive):
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _Refused(413, "RequestLimitExceeded",
                               "Request limit exceeded: the request body is larger than "
                               f"{self.max_body_bytes} bytes.")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _run_app(self, environ):
        """(status, headers, body) of the WSGI application's answer (in a pool thread)."""
        started = []

        def start_response(status, headers, exc_info=None):
            if exc_info and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, headers]
            return written.append

        written = []
        try:
            result = self.wsgi_app(environ, start_response)
            try:
                written.extend(chunk for chunk in result if chunk)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        except Exception:  # the application's own handler answers everything it can
            import traceback

            traceback.print_exc(file=sys.stderr)
            return _error_answer(self.error_body, 500, "InternalServerError",
                                 "An unexpected error occurred.")
        status, headers = started
        return (int(status.split(" ", 1)[0]),
                [(name.lower().encode("latin-1"), value.encode("latin-1"))
                 for name, value in headers],
                b"".join(written))

    @staticmethod
    async def _answer(send, status, headers, body):
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _content_length(scope):
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def wsgi_environ(scope, body):
    """The WSGI environ (PEP 3333) of an ASGI HTTP request and its whole body."""
    server = scope.get("server") or ("localhost", 80)
    root = scope.get("root_path", "")
    path = scope["path"]
    path = path[len(root):] if root and path.startswith(root) else path
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root.encode("utf-8").decode("latin-1"),
        "PATH_INFO": path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] or ""),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "CONTENT_LENGTH": str(len(body)),
    }
    if scope.get("client"):
        environ["REMOTE_ADDR"] = scope["client"][0]
    for raw_name, raw_value in scope.get("headers", ()):
        # "X_Auth_Token" would pass for X-Auth-Token: dropped, as gunicorn and nginx do.
        if b"_" in raw_name:
            continue
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        if name == "CONTENT_LENGTH":
            continue
        key = name if name == "CONTENT_TYPE" else f"HTTP_{name}"
        value = raw_value.decode("latin-1")
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ
