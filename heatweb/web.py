"""The web server: hypercorn worker processes serving ``heatweb.asgi``, kept running.

``python -m heatweb.web --bind 127.0.0.1:8004 --workers 2`` (``manage.py
serve`` runs this). Each worker is an asyncio server (hypercorn) that reads
requests without holding a thread: a connection that has not sent a whole
request head within ``HEADER_READ_SECONDS`` is closed, and
``heatweb.buffering`` reads each body in full (within ``BODY_READ_SECONDS``)
before one of the worker's threads runs Django on it. So slow or broken
clients cost a connection each, never an application thread, and a request
cut short is never run.

This process binds the socket, starts the workers and replaces one that
stops: one that dies on its own is replaced, unless it dies at start (then
the server stops: a broken setup must not loop). A worker gives freed memory
back when it is idle (``heatweb.buffering``), so none is recycled by
default; with ``HEATWEB_WEB_MAX_REQUESTS`` set, a worker stops accepting
after about that many requests, finishes what it holds and is replaced
(hypercorn then closes the worker's idle kept-alive connections: a client
that sends on one at that moment sees its connection close).

Forwarded headers (``X-Forwarded-For``/``-Proto``) are not interpreted
here; Django trusts ``X-Forwarded-Proto`` only with ``HEATWEB_BEHIND_PROXY``.
"""
import argparse
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time

from hypercorn.asyncio.run import asyncio_worker
from hypercorn.config import Config
from hypercorn.logging import AccessLogAtoms, Logger

from heatweb.lifeline import die_with_launcher, die_with_parent

STARTUP_SECONDS = 10
GRACEFUL_SECONDS = 20
APPLICATION = "heatweb.asgi:application"


def web_config(*, bind, workers):
    """hypercorn's configuration for ``bind`` with the budgets of the settings."""
    from django.conf import settings

    budgets = settings.HEATWEB
    config = Config()
    config.application_path = APPLICATION
    config.bind = [bind]
    config.workers = workers
    # The idle timer runs from the connection's start (or the end of its last
    # answer) until a whole request head arrived: it is the header read timeout.
    config.keep_alive_timeout = budgets["HEADER_READ_SECONDS"]
    # On SIGTERM, requests in flight get this long (within serve's stop grace).
    config.graceful_timeout = GRACEFUL_SECONDS
    if budgets["WEB_MAX_REQUESTS"]:
        config.max_requests = budgets["WEB_MAX_REQUESTS"]
        config.max_requests_jitter = budgets["WEB_MAX_REQUESTS"] // 5
    config.backlog = 2048
    config.include_server_header = False
    config.accesslog = "-"
    config.logger_class = AccessLineLogger
    # Through Django's logging (LOGGING), not a second handler of hypercorn's own.
    config.errorlog = logging.getLogger("hypercorn.error")
    return config


class AccessLineAtoms(dict):
    """The values of an access log line, made as hypercorn's ``AccessLogAtoms`` makes them,
    but only those of the default format (``h l t r s b f a``) up front.

    hypercorn's mapping formats every request and response header and every
    environment variable on each request: ~0.2 ms of a web worker's CPU per
    request, more than a stack show's SQL (docs/benchmarks.md, bench_api). Any
    other value a format names is looked up in hypercorn's own mapping, made
    then. Missing values read ``-``, as in hypercorn's.
    """

    def __init__(self, request, response, request_time):
        self._made = (request, response, request_time)
        self._full = None
        client = request.get("client")
        if client is None:
            remote_addr = None
        elif len(client) == 2:
            remote_addr = f"{client[0]}:{client[1]}"
        elif len(client) == 1:
            remote_addr = client[0]
        else:
            remote_addr = f"<???{client}???>"
        method = request["method"] if request["type"] == "http" else "GET"
        super().__init__(
            h=remote_addr, l="-", t=time.strftime("[%d/%b/%Y:%H:%M:%S %z]"),
            r=f"{method} {request['path']} {request.get('http_version', 'ws')}",
            s=str(response["status"]) if response is not None else "-",
            b=_last_header(response.get("headers", []) if response is not None else (),
                           b"content-length"),
            f=_last_header(request["headers"], b"referer"),
            a=_last_header(request["headers"], b"user-agent"))

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            if self._full is None:
                self._full = AccessLogAtoms(*self._made)
            return self._full[key]


def _last_header(headers, name):
    """The last value of header ``name`` (lower case), or ``-`` (as in hypercorn's atoms)."""
    found = "-"
    for key, value in headers:
        if key.lower() == name:
            found = value.decode("latin1")
    return found


class AccessLineLogger(Logger):
    """hypercorn's logger with ``AccessLineAtoms`` for its access lines."""

    def atoms(self, request, response, request_time):
        return AccessLineAtoms(request, response, request_time)


def _say(message):
    print(f"heatweb web: {message}", file=sys.stderr, flush=True)


def serve_worker(*, parent_pid, **kwargs):
    """One worker process: hypercorn's asyncio worker, killed when this server's process
    ends (even by ``kill -9``, when it can no longer stop its workers itself)."""
    die_with_parent(parent_pid, signal.SIGKILL)
    asyncio_worker(**kwargs)


class Supervisor:
    """Keeps ``config.workers`` worker processes running on the bound sockets."""

    def __init__(self, config):
        self.config = config
        self.context = multiprocessing.get_context("spawn")
        self.shutdown = self.context.Event()
        self.sockets = config.create_sockets()
        self.workers = {}  # process -> monotonic start time
        self.stop_signal = None

    def _start_worker(self):
        process = self.context.Process(
            target=serve_worker, name="heatweb-web-worker", daemon=True,
            kwargs={"parent_pid": os.getpid(), "config": self.config, "sockets": self.sockets,
                    "shutdown_event": self.shutdown})
        process.start()
        self.workers[process] = time.monotonic()

    def _on_signal(self, signum, frame):
        self.stop_signal = signum

    def run(self):
        """Serve until SIGINT/SIGTERM (exit status 0) or a worker dies at start (1)."""
        # Workers ignore SIGINT (a Ctrl-C reaches the whole process group):
        # this process tells them to stop, and they finish what they hold.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for _ in range(self.config.workers):
            self._start_worker()
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        status = 0
        try:
            while self.stop_signal is None:
                multiprocessing.connection.wait([p.sentinel for p in self.workers], timeout=0.5)
                if self.stop_signal is None and not self._replace_stopped():
                    status = 1
                    break
        finally:
            self._stop_all()
        return status

    def _replace_stopped(self):
        for process, started in list(self.workers.items()):
            if process.exitcode is None:
                continue
            del self.workers[process]
            process.join()
            if process.exitcode != 0:
                if time.monotonic() - started < STARTUP_SECONDS:
                    _say(f"a worker stopped at start (exit status {process.exitcode}); "
                         "stopping")
                    return False
                _say(f"a worker stopped (exit status {process.exitcode}); starting another")
            self._start_worker()
        return True

    def _stop_all(self):
        self.shutdown.set()
        deadline = time.monotonic() + self.config.graceful_timeout + 5
        for process in self.workers:
            process.join(timeout=max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        for sock in self.sockets.insecure_sockets + self.sockets.secure_sockets:
            sock.close()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m heatweb.web",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--bind", default="127.0.0.1:8004")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    die_with_launcher()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")
    # glibc gives each thread an arena of its own: with ten threads a worker's
    # freed memory stays fragmented across them and RSS never shrinks.
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    config = web_config(bind=args.bind, workers=args.workers)
    _say(f"listening on http://{args.bind} with {args.workers} workers")
    return Supervisor(config).run()


if __name__ == "__main__":
    sys.exit(main())
