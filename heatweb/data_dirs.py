"""Which data directory a management command uses: the one the running server uses.

``manage.py serve`` records itself (pid, data directory, whether it uses an
external ``DATABASE_URL``) in ``var/servers/<pid>.json`` of the checkout
(``HEATWEB_SERVERS_DIR`` elsewhere), and removes the record when it stops.
Any other command run without ``HEATWEB_DATA_DIR`` (but those ``./run``
runs to start a server: serve, migrate, collectstatic, bootstrap) then takes
the data directory of the one server running from this checkout; with two running
from different data directories it asks which. A command that needs the
database and finds no SQLite file there stops with one line instead of
creating an empty database (and the traceback "no such table: auth_user").
No Django import: ``manage.py`` asks this before Django is set up.
"""
import json
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SQLITE_NAME = "heatweb.sqlite3"
# Commands that may run before the database exists (they make it, or need none).
WITHOUT_DATABASE = frozenset({"migrate", "makemigrations", "collectstatic", "serve", "help",
                              "version", "check", "test", "startapp", "compilemessages",
                              "makemessages", "squashmigrations"})
# What ./run runs to start a server on its own data dir: they never take another's.
STARTING_A_SERVER = frozenset({"serve", "migrate", "collectstatic", "bootstrap",
                               "makemigrations", "test"})


class DataDirError(Exception):
    """The one line a command stops with when it cannot find the server's data."""


def servers_dir(environ=os.environ):
    return Path(environ.get("HEATWEB_SERVERS_DIR") or BASE_DIR / "var" / "servers")


def record_server(data_dir, *, environ=os.environ, pid=None):
    """What ``serve`` writes while it runs; returns the record's path (for forget_server)."""
    pid = pid or os.getpid()
    folder = servers_dir(environ)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.json"
    path.write_text(json.dumps({"pid": pid, "data_dir": str(Path(data_dir).resolve()),
                                "external_database": bool(environ.get("DATABASE_URL"))}))
    return path


def forget_server(path):
    Path(path).unlink(missing_ok=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_servers(environ=os.environ):
    """The records of the servers still running (records of dead ones are removed)."""
    servers = []
    folder = servers_dir(environ)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            record = json.loads(path.read_text())
            pid = int(record["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid):
            servers.append(record)
        else:
            forget_server(path)
    return servers


def command_data_dir(environ=os.environ):
    """``(data dir, the running server's record or None)`` for a command without
    ``HEATWEB_DATA_DIR``: the one running server's, else the default ``var/``."""
    if environ.get("HEATWEB_DATA_DIR"):
        return Path(environ["HEATWEB_DATA_DIR"]).resolve(), None
    servers = running_servers(environ)
    dirs = sorted({s["data_dir"] for s in servers})
    if len(dirs) > 1:
        raise DataDirError(
            f"heatweb: {len(dirs)} servers run from this checkout with different data "
            f"directories ({', '.join(dirs)}): set HEATWEB_DATA_DIR to the one you mean.")
    if dirs:
        return Path(dirs[0]), servers[0]
    return BASE_DIR / "var", None


def command_name(argv):
    args = [a for a in argv[1:] if not a.startswith("-")]
    return args[0] if args else "help"


def prepare_command(argv, environ=os.environ):
    """Set ``HEATWEB_DATA_DIR`` for the command in ``argv`` as the running server's, and
    refuse (DataDirError) a command that needs the database when there is none."""
    name = command_name(argv)
    if name in STARTING_A_SERVER:
        return None
    data_dir, server = command_data_dir(environ)
    if server is not None:
        if server.get("external_database") and not environ.get("DATABASE_URL"):
            raise DataDirError(
                f"heatweb: the server running from this checkout (pid {server['pid']}) uses "
                f"DATABASE_URL: run this command with the environment it was started with.")
        environ["HEATWEB_DATA_DIR"] = str(data_dir)
    if name in WITHOUT_DATABASE or "--help" in argv or "-h" in argv:
        return data_dir
    if not environ.get("DATABASE_URL") and not (data_dir / SQLITE_NAME).exists():
        raise DataDirError(
            f"heatweb: no database in {data_dir} ({SQLITE_NAME} is missing): start the "
            f"server there first (./run), or set HEATWEB_DATA_DIR to the data directory "
            f"the server was started with.")
    return data_dir
