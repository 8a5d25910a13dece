"""Test set-up shared by every test directory.

The run mode follows the environment, as in production:

* embedded (default): no DATABASE_URL / CELERY_BROKER_URL. pytest-django's
  own test database is SQLite; the live service gets a temporary
  HEATWEB_DATA_DIR (its SQLite file and filesystem broker live there).
* distributed (``HEATWEB_TEST_MODE=distributed``): DATABASE_URL names a
  PostgreSQL database (pytest-django makes ``test_<name>`` of it) and
  CELERY_BROKER_URL a Redis database. The live service gets a database of
  its own on that server (created here, dropped at the end) and another
  Redis database number, so its workers never take tasks that this pytest
  process sends while running the integration tests.

``live_service`` is the session fixture with the real processes: the web server
(2 workers, 4 threads) and two Celery workers. Their logs go to
``tests/artifacts/``.
"""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
BIN = Path(sys.executable).parent


def run_mode():
    return "distributed" if os.environ.get("DATABASE_URL") else "embedded"


def pytest_configure(config):
    wanted = os.environ.get("HEATWEB_TEST_MODE")
    if wanted and wanted not in ("embedded", "distributed", "openstack"):
        raise pytest.UsageError(f"HEATWEB_TEST_MODE={wanted!r}: use embedded, distributed "
                                f"or openstack")
    if wanted == "openstack" and not os.environ.get("OS_CLIENT_CONFIG_FILE"):
        raise pytest.UsageError("HEATWEB_TEST_MODE=openstack needs the cloud's clouds.yaml in "
                                "OS_CLIENT_CONFIG_FILE (see ./test --mode openstack)")
    if wanted in ("distributed", "openstack"):
        database = os.environ.get("DATABASE_URL", "")
        broker = os.environ.get("CELERY_BROKER_URL", "")
        if not database.startswith(("postgres://", "postgresql://")):
            raise pytest.UsageError("HEATWEB_TEST_MODE=distributed needs DATABASE_URL="
                                    "postgres://... (see ./test)")
        if not broker.startswith(("redis://", "amqp://")):
            raise pytest.UsageError("HEATWEB_TEST_MODE=distributed needs CELERY_BROKER_URL="
                                    "redis://... (see ./test)")
    elif wanted == "embedded" and os.environ.get("DATABASE_URL"):
        raise pytest.UsageError("HEATWEB_TEST_MODE=embedded but DATABASE_URL is set")
    _private_broker_for_this_process()
    from django.conf import settings

    # Engine code run in this process (integration tests) must not beat,
    # sweep or relay the outbox from a thread: the live services' engines do.
    settings.HEATWEB["ENGINE_HEARTBEAT_THREAD"] = False


_PRIVATE_BROKER_DIR = None


def _private_broker_for_this_process():
    """Embedded mode: tasks this pytest process sends go to a throw-away folder.

    Without this they would land in ``var/broker`` of the checkout, where the
    worker of a developer's ``./run`` would take them.
    """
    global _PRIVATE_BROKER_DIR
    from django.conf import settings

    if not settings.CELERY_BROKER_URL.startswith(("heatwebfs", "filesystem")):
        return
    from heatweb.celery import app

    _PRIVATE_BROKER_DIR = Path(tempfile.mkdtemp(prefix="heatweb-pytest-broker-"))
    options = dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    for key, sub in (("data_folder_in", "queue"), ("data_folder_out", "queue"),
                     ("processed_folder", "processed"), ("control_folder", "control")):
        (_PRIVATE_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
        options[key] = str(_PRIVATE_BROKER_DIR / sub)
    # Celery reads its configuration from the Django settings lazily: change both,
    # after making it load, so the change sticks whichever is read first.
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = options
    app.conf.broker_url  # noqa: B018 - loads the configuration
    app.conf.update(broker_transport_options=options)


UNIT_TESTS = Path(__file__).resolve().parent / "unit"
BROWSER_TESTS = Path(__file__).resolve().parent / "browser"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``openstack`` run in the openstack mode, and only they; the unit tests
    (no database, no broker, no service) and the browser tests (the pages: the same views
    over the same API, the database's differences covered by the API tests) run in the
    embedded mode only: the distributed mode would run the same code again. The tests
    marked ``embedded_only`` run there only too."""
    mode = os.environ.get("HEATWEB_TEST_MODE")
    keep, drop = [], []
    for item in items:
        wanted = (item.get_closest_marker("openstack") is not None) == (mode == "openstack")
        if mode == "distributed" and ({UNIT_TESTS, BROWSER_TESTS} &
                                      set(Path(str(item.fspath)).resolve().parents) or
                                      item.get_closest_marker("embedded_only") is not None):
            wanted = False
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used a live service gets its processes' last log lines in its
    report: CI keeps only what the run prints, not ``tests/artifacts/``."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for service in list(LiveService.running):
        for name in service.processes:
            lines = [line for line in _tail(service.log_path(name), 400).splitlines()
                     if any(mark in line for mark in LOG_MARKS)
                     and "No hostname was supplied" not in line][-12:]
            if lines:
                report.sections.append((f"{service.mode} {service.name} {name}: last "
                                        f"warnings and errors", "\n".join(lines)))


_file_seconds = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _file_seconds[path] = _file_seconds.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The files that took the most time (setup, call and teardown summed): where the
    run's budget goes, beside ``--durations``' single tests."""
    if not _file_seconds:
        return
    total = sum(_file_seconds.values())
    terminalreporter.write_sep("=", f"slowest files ({total / 60:.1f} min in all)")
    for path, seconds in sorted(_file_seconds.items(), key=lambda kv: -kv[1])[:15]:
        terminalreporter.write_line(f"{seconds:8.1f}s  {path}")


LOG_MARKS = ("ERROR", "WARNING", "CRITICAL", "Traceback", "Error:", "Exception")


def pytest_unconfigure(config):
    if _PRIVATE_BROKER_DIR is not None:
        shutil.rmtree(_PRIVATE_BROKER_DIR, ignore_errors=True)


# The live service -----------------------------------------------------------------------

def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path, lines=60):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class PostgresDatabase:
    """A database of the live service's own on the DATABASE_URL's server."""

    def __init__(self, url, suffix="live"):
        parts = urlsplit(url)
        self.name = f"{parts.path.lstrip('/') or 'heatweb'}_{suffix}"[:63]
        self.url = urlunsplit(parts._replace(path="/" + self.name))
        self.admin_url = urlunsplit(parts._replace(path="/postgres"))

    def _run(self, sql):
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def create(self):
        self._run(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self._run(f'CREATE DATABASE "{self.name}"')

    def drop(self):
        self._run(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class RedisDatabase:
    """Another database number on the CELERY_BROKER_URL's Redis server.

    The number given to pytest stays this process's; each live service takes
    the next one (1..15, never 0), so services never share tasks.
    """

    taken = 0

    def __init__(self, url, queue):
        self.queue = queue
        parts = urlsplit(url)
        given = int(parts.path.strip("/") or 0)
        RedisDatabase.taken += 1
        self.number = ((given - 1 + RedisDatabase.taken) % 15) + 1
        if self.number == given:
            self.number = (self.number % 15) + 1
        self.url = urlunsplit(parts._replace(path=f"/{self.number}"))

    def clear_queue(self):
        """Drop tasks a crashed earlier run left in this database's queue."""
        import redis

        client = redis.Redis.from_url(self.url)
        try:
            client.delete(self.queue)
        finally:
            client.close()


class LiveService:
    """The web server (heatweb.web) + Celery workers as real processes, with an environment
    of their own."""

    running = set()  # the services started and not yet stopped (for failure reports)

    def __init__(self, tmp_dir, *, name="live", workers=2, **settings):
        self.name = name
        self.workers = workers
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "HEATWEB_DATA_DIR": str(tmp_dir),
                    "HEATWEB_PUBLIC_URL": self.url, "HEATWEB_LOG_LEVEL": "INFO",
                    "PYTHONUNBUFFERED": "1", "DJANGO_SETTINGS_MODULE": "heatweb.settings",
                    **settings}
        self.database = None
        self.redis = None
        if os.environ.get("DATABASE_URL"):
            self.database = PostgresDatabase(os.environ["DATABASE_URL"], suffix=name)
            self.env["DATABASE_URL"] = self.database.url
            # Idle threads and pool processes hold no connection: the distributed and
            # openstack modes run side by side, with the cloud's services, within
            # PostgreSQL's max_connections (100; seen: "too many clients" at 104).
            self.env.setdefault("HEATWEB_DB_CONN_MAX_AGE", "0")
        broker = os.environ.get("CELERY_BROKER_URL", "")
        if broker.startswith(("redis://", "rediss://")):
            self.redis = RedisDatabase(broker, f"heatweb-{name}-{self.port}")
            self.env["CELERY_BROKER_URL"] = self.redis.url
        # A queue of its own: concurrent test runs on one Redis never take each other's tasks.
        self.queue = self.env["HEATWEB_QUEUE"] = f"heatweb-{name}-{self.port}"
        self.processes = {}
        self.commands = None  # the CommandRunner of issue_token, started when first asked
        self.mode = "distributed" if self.database else "embedded"

    # commands ------------------------------------------------------------------------

    def manage(self, *args, check=False, timeout=300):
        """``manage.py ARGS`` with the service's environment; a CompletedProcess."""
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, check=check, timeout=timeout)

    def issue_token(self, username, project_name, role="member"):
        """A new token (``issue_token --json``): token, project_id, endpoint, ...

        The command runs in the service's ``CommandRunner`` (one process for the
        service's life): a ``manage.py`` process per token spent two seconds of CPU
        importing Django each time, about 150 times a run.
        """
        if self.commands is None or self.commands.env != self.env:
            self.commands_stop()
            self.commands = CommandRunner(self.env)
        code, out, err = self.commands.run("issue_token", username, "--project", project_name,
                                           "--role", role, "--json")
        assert code == 0, err
        return json.loads(out)

    def commands_stop(self):
        if self.commands is not None:
            self.commands.stop()
            self.commands = None

    def heat(self, username=None, project_name=None, role="member"):
        """A python-heatclient client with a new token (random user/project by default)."""
        from heatclient import client

        info = self.issue_token(username or f"u-{uuid.uuid4().hex[:8]}",
                                project_name or f"p-{uuid.uuid4().hex[:8]}", role)
        return client.Client("1", endpoint=info["endpoint"], token=info["token"])

    # processes -----------------------------------------------------------------------

    def log_path(self, name):
        # The run mode's name (the openstack mode's services are distributed ones): the
        # modes run side by side, each with its own logs.
        mode = os.environ.get("HEATWEB_TEST_MODE") or self.mode
        return ARTIFACTS / f"{mode}-{self.name}-{name}.log"

    def _spawn(self, name, command):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path(name), "w")  # noqa: SIM115 - closed in stop()
        self.processes[name] = (subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log,
                                                 stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL,
                                                 start_new_session=True), log)

    def start(self, workers=None):
        workers = self.workers if workers is None else workers
        if self.database:
            self.database.create()
        if self.redis:
            self.redis.clear_queue()
        migrated = self.manage("migrate", "--noinput", "-v0")
        if migrated.returncode:
            self.stop()
            raise RuntimeError(f"migrate failed for the live service:\n{migrated.stdout}\n"
                               f"{migrated.stderr}")
        LiveService.running.add(self)
        self.start_web()
        for number in range(1, workers + 1):
            self.start_worker(f"w{number}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            dead = [n for n, (p, _) in self.processes.items() if p.poll() is not None]
            if dead:
                break
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.2)
        logs = "\n".join(f"---- {name} ({self.log_path(name)}) ----\n{_tail(self.log_path(name))}"
                         for name in self.processes)
        self.stop()
        raise RuntimeError(f"the live service ({self.mode}) did not start within 60 s:\n{logs}")

    def start_web(self):
        from heatweb.launcher import web_command

        self.env.setdefault("HEATWEB_WEB_THREADS", "4")
        self._spawn("web", web_command(bind=f"127.0.0.1:{self.port}", web_workers=2))
        return self.processes["web"][0]

    def kill(self, name):
        """kill -9 one process group (the web server and its workers, or a worker and its pool)."""
        proc, log = self.processes.pop(name)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        log.close()

    def start_worker(self, name, concurrency=2):
        self._spawn(name, [str(BIN / "celery"), "-A", "heatweb", "worker", "-Q", self.queue,
                           "--concurrency", str(concurrency), "-l", "info",
                           "-n", f"{name}.{self.port}@%h"])
        return self.processes[name][0]

    def kill_workers(self):
        """kill -9 every worker process (main and pool children), as a crash would."""
        for name in [n for n in self.processes if n != "web"]:
            self.kill(name)

    def stop(self):
        self.commands_stop()
        for proc, _ in self.processes.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        # A few seconds of grace, then kill: a test service owes no one a graceful
        # shutdown (a worker's warm shutdown and gunicorn's wait for kept-alive
        # connections took 20 s per module).
        grace = time.monotonic() + 3
        for proc, log in self.processes.values():
            try:
                proc.wait(timeout=max(0.1, grace - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            # The pool processes of a worker share its session: make sure none is left.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            log.close()
        self.processes = {}
        LiveService.running.discard(self)
        if self.database:
            self.database.drop()


COMMAND_RUNNER = """
import contextlib, io, json, sys
import django
django.setup()
from django.core.management import call_command
from django.db import connections
for line in sys.stdin:
    out, err, code = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            call_command(*json.loads(line), stdout=out, stderr=err)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except Exception as error:
        code = 1
        err.write(f"{type(error).__name__}: {error}")
    finally:
        connections.close_all()  # no connection held between commands (SQLite, a DROP)
    print(json.dumps([code, out.getvalue(), err.getvalue()]), flush=True)
"""


class CommandRunner:
    """``manage.py`` commands run by one long-lived process with a service's environment:
    each line in is a command's arguments, each line out its exit code, stdout and stderr."""

    def __init__(self, env):
        self.env = dict(env)
        self.proc = subprocess.Popen([sys.executable, "-c", COMMAND_RUNNER], cwd=ROOT,
                                     env=self.env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, start_new_session=True)

    def run(self, *args):
        self.proc.stdin.write(json.dumps([str(a) for a in args]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the command runner ended (exit {self.proc.wait()})")
        return json.loads(line)

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class ServiceDatabase:
    """Plain SQL on the live service's own database (SQLite file or PostgreSQL)."""

    def __init__(self, service):
        if service.database:
            import psycopg

            self.conn = psycopg.connect(service.database.url, autocommit=True)
            self.mark = "%s"
        else:
            path = Path(service.env["HEATWEB_DATA_DIR"]) / "heatweb.sqlite3"
            self.conn = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.mark = "?"

    def rows(self, sql, *params):
        return list(self.conn.execute(sql.replace("%s", self.mark), params).fetchall())

    def resource(self, stack_name, name):
        """(engine_id, physical_resource_id, state) of one resource, or None."""
        found = self.rows("SELECT r.engine_id, r.physical_resource_id, r.state "
                          "FROM stacks_resource r JOIN stacks_stack s ON s.id = r.stack_id "
                          "WHERE s.name = %s AND r.name = %s AND s.deleted_at IS NULL",
                          stack_name, name)
        return found[0] if found else None

    def servers_made(self, stack_name):
        """Resource name -> how many simulated servers were ever made for it."""
        prefix = f"{stack_name}-"
        return {name[len(prefix):]: count for name, count in self.rows(
            "SELECT name, COUNT(*) FROM stacks_simserver WHERE name LIKE %s GROUP BY name",
            prefix + "%")}

    def close(self):
        self.conn.close()


@pytest.fixture(scope="session")
def live_service(tmp_path_factory):
    """The live service for the run mode the environment selects (see the module doc)."""
    service = LiveService(tmp_path_factory.mktemp("live")).start()
    yield service
    service.stop()
