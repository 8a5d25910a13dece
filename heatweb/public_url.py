"""The URL clients reach heatweb at: one answer for the server and the commands beside it.

``HEATWEB_PUBLIC_URL`` when set; else the address ``manage.py serve`` last
served this data directory at (it records it, with its ``--port`` or
``HEATWEB_BIND``); else the one it would serve at (``HEATWEB_BIND``, then
``PORT``, then 8004). So ``manage.py issue_token --json`` in another shell
prints the endpoint of the server that runs, not a guess at :8004.
No Django import: settings use it.
"""
import os
from pathlib import Path

RECORD = "public-url"
DEFAULT_PORT = 8004


def bind_public_url(bind):
    """``http://host:port`` for a gunicorn bind address (a wildcard host is reached locally)."""
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def default_bind(environ=os.environ):
    return environ.get("HEATWEB_BIND") or f"127.0.0.1:{environ.get('PORT', DEFAULT_PORT)}"


def public_url(data_dir, environ=os.environ):
    if environ.get("HEATWEB_PUBLIC_URL"):
        return environ["HEATWEB_PUBLIC_URL"]
    record = Path(data_dir) / RECORD
    try:
        recorded = record.read_text().strip()
    except OSError:
        recorded = ""
    return recorded or bind_public_url(default_bind(environ))


def record_public_url(data_dir, url):
    """What ``serve`` writes: the URL it serves the data directory at."""
    (Path(data_dir) / RECORD).write_text(url + "\n")
