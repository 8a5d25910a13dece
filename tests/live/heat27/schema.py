"""A scratch Heat 27 database for the import tests: Heat's own schema (``heat-manage
db_sync`` from the yardstick's venv) and rows Heat's own DB API writes (store_rows.py).

The venv is upstream openstack-heat 27.0.1 with the cloud's pins, built as
scripts/heat-yardstick-up builds it, once per machine (``HEATWEB_HEAT27_BASE``,
default /tmp/heat27-schema): a test fixture, never imported by heatweb.
"""
import fcntl
import json
import os
import subprocess
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[3]
BASE = Path(os.environ.get("HEATWEB_HEAT27_BASE", "/tmp/heat27-schema"))
PACKAGES = ["openstack-heat==27.0.1", "psycopg2-binary"]
ENCRYPTION_KEY = "heat-import-test-key-0123456789ab"
SERVER = "postgresql://postgres@127.0.0.1:5432"


def heat_venv():
    """``BASE/venv/bin/python``, built first when missing (a few minutes, once)."""
    python = BASE / "venv" / "bin" / "python"
    BASE.mkdir(parents=True, exist_ok=True)
    with open(BASE / ".build-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (BASE / "venv" / "bin" / "heat-manage").exists():
            subprocess.run(["python3", "-m", "venv", str(BASE / "venv")], check=True)
            done = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c",
                                   str(ROOT / "scripts" / "cloud" / "constraints.txt"),
                                   *PACKAGES], capture_output=True, text=True)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return python


class HeatSchema:
    """PostgreSQL database ``name`` holding Heat 27's schema."""

    def __init__(self, name):
        self.name = name
        self.url = f"{SERVER}/{name}"
        self.conf = BASE / f"{name}.conf"

    def create(self):
        python = heat_venv()
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.name}"')
        self.conf.write_text(f"[DEFAULT]\nauth_encryption_key = {ENCRYPTION_KEY}\n"
                             f"[database]\nconnection = postgresql+psycopg2://postgres@"
                             f"127.0.0.1/{self.name}\n")
        done = subprocess.run([str(python.parent / "heat-manage"), "--config-file",
                               str(self.conf), "db_sync"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return self

    def store(self, spec):
        """Write ``spec``'s stacks with Heat's DB API; ``{stack: {resource: heat id}}``."""
        done = subprocess.run([str(heat_venv()), str(Path(__file__).parent / "store_rows.py"),
                               "--config-file", str(self.conf)], input=json.dumps(spec),
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    def drop(self):
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self.conf.unlink(missing_ok=True)
