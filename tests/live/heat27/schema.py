"""A scratch Heat 27 database for the import tests: Heat's own schema (``heat-manage
db_sync`` from the yardstick's venv) and rows Heat's own DB API writes (store_rows.py).

The venv is upstream openstack-heat 27.0.1 with the cloud's pins, built by
``scripts/heat-yardstick-up --venv-only`` once per machine (``HEATWEB_HEAT27_BASE``,
default /tmp/heat27-schema): the same venv the openstack mode's Heat runs from
(tests/openstack/test_import_from_heat.py). A test fixture, never imported by heatweb.
"""
import json
import os
import subprocess
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[3]
BASE = Path(os.environ.get("HEATWEB_HEAT27_BASE", "/tmp/heat27-schema"))
ENCRYPTION_KEY = "heat-import-test-key-0123456789ab"
SERVER = "postgresql://postgres@127.0.0.1:5432"
MARIADB = "mysql+pymysql://root@127.0.0.1:3306"


def heat_venv():
    """``BASE/venv/bin/python``, built first when missing or out of date (a few minutes,
    once; the script holds BASE/.build-lock while it installs)."""
    env = {k: v for k, v in os.environ.items() if k != "HEATWEB_HEAT_VENV"}
    done = subprocess.run([str(ROOT / "scripts" / "heat-yardstick-up"), "--venv-only",
                           str(BASE)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return BASE / "venv" / "bin" / "python"


class HeatSchema:
    """Database ``name`` holding Heat 27's schema: on PostgreSQL, or on MariaDB
    (127.0.0.1:3306, root without a password) with ``mariadb=True``."""

    def __init__(self, name, *, mariadb=False):
        self.name = name
        self.mariadb = mariadb
        self.url = f"{MARIADB if mariadb else SERVER}/{name}"
        self.conf = BASE / f"{name}.conf"

    def _mariadb(self, sql):
        done = subprocess.run(["mysql", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "-e", sql],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    def create(self):
        python = heat_venv()
        if self.mariadb:
            self._mariadb(f"DROP DATABASE IF EXISTS `{self.name}`; CREATE DATABASE "
                          f"`{self.name}` CHARACTER SET utf8mb4")
            connection = f"{MARIADB}/{self.name}?charset=utf8mb4"
        else:
            with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
                conn.execute(f'CREATE DATABASE "{self.name}"')
            connection = f"postgresql+psycopg2://postgres@127.0.0.1/{self.name}"
        self.conf.write_text(f"[DEFAULT]\nauth_encryption_key = {ENCRYPTION_KEY}\n"
                             f"[database]\nconnection = {connection}\n")
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
        if self.mariadb:
            self._mariadb(f"DROP DATABASE IF EXISTS `{self.name}`")
            self.conf.unlink(missing_ok=True)
            return
        with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        self.conf.unlink(missing_ok=True)
