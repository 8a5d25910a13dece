"""bench_api's other side: upstream Heat 27 (``scripts/heat-yardstick-up BASE``) at the
same number of stacks, for the same readers and writers.

A yardstick outside heatweb, never imported: this module only talks to Heat's API
(HTTP, a Keystone token) and its PostgreSQL database. The stacks are Heat's own:
one is created through Heat's API from bench_api's template (its stack row, its three
``OS::Heat::None`` resources and its eight events, as Heat writes them), then copied
in Heat's database ``count - 1`` times with ``INSERT ... SELECT`` over
``generate_series`` (new ids and names, bench_api's mix of states), every other
column as Heat wrote it, so each copy reads as the first does.
"""
import json
import os
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import openstack
import psycopg
import requests
from django.core.management.base import CommandError

from stacks.management.bench_accounts import Accounts
from stacks.management.procs import database_cpu_seconds, group_cpu_seconds

# bench_api's mix: of every 10 stacks 8 CREATE_COMPLETE, 1 UPDATE_COMPLETE, 1 CREATE_FAILED.
ACTION = "CASE mod(g, 10) WHEN 8 THEN 'UPDATE' ELSE 'CREATE' END"
STATUS = "CASE mod(g, 10) WHEN 9 THEN 'FAILED' ELSE 'COMPLETE' END"


def _copy_id(seed_id):
    """The id of copy ``g`` of the stack whose id is the SQL expression ``seed_id``."""
    return f"md5({seed_id} || '-' || g::text)::uuid::text"


class HeatSide:
    """Heat 27 of ``BASE``: its API root, a project and token of the run's user, its
    database; ``with`` it, and the run's user and project are removed at the end."""

    def __init__(self, base, *, cloud_base):
        self.base = Path(base)
        self.root = _read(self.base, "heat-url").rstrip("/")  # http://127.0.0.1:PORT/v1
        server = urlsplit(self.root)
        self.url = f"{server.scheme}://{server.netloc}"
        self.db = psycopg.connect(_read(self.base, "heat-db"), autocommit=True)
        self.dbname = self.db.info.dbname
        self.groups = {path.stem: int(path.read_text()) for path in (self.base / "run").glob("*.pid")}
        os.environ["OS_CLIENT_CONFIG_FILE"] = os.path.join(cloud_base, "clouds.yaml")
        self.accounts = Accounts(openstack.connect(cloud="heatweb-admin", connect_retries=3),
                                 uuid.uuid4().hex[:6], sides=("heat",))
        self.token = self.project_id = None

    def __enter__(self):
        self.accounts.create()
        self.token, self.project_id = self.accounts.token("heat")
        return self

    def __exit__(self, *exc):
        self.accounts.delete()
        self.db.close()

    @property
    def headers(self):
        return {"X-Auth-Token": self.token}

    def load(self, count, template, *, out):
        """One stack through Heat's API, then ``count - 1`` copies of it in Heat's database."""
        began = time.perf_counter()
        seed = self.create("stack-00000", template)
        self.wait([seed], timeout=120)
        status = self.states([seed])
        if status != ["CREATE_COMPLETE"]:
            raise CommandError(f"Heat's seed stack ended {status}")
        self._copy(seed, count)
        with self.db.cursor() as cur:
            cur.execute("ANALYZE")
        out(f"Heat: loaded {count} stacks in {time.perf_counter() - began:.1f} s "
            f"(one through its API, the rest copied in its database)")

    def _copy(self, seed, count):
        stack = {"id": _copy_id("seed.id"), "name": "'stack-' || lpad(g::text, 5, '0')",
                 "action": ACTION, "status": STATUS,
                 "current_traversal": "md5('t' || seed.id || g::text)::uuid::text",
                 "created_at": "seed.created_at + g * interval '1 millisecond'"}
        by_stack = _copy_id("seed.stack_id")
        with self.db.cursor() as cur:
            for table, alias, exprs, key in (
                    ("stack", "seed", stack, "id"),
                    ("resource", "seed", {"uuid": "gen_random_uuid()::text", "stack_id": by_stack,
                                          "root_stack_id": by_stack}, "stack_id"),
                    ("event", "seed", {"uuid": "gen_random_uuid()::text", "stack_id": by_stack},
                     "stack_id")):
                columns = [c for c in self._columns(cur, table) if c != "id" or table == "stack"]
                select = ", ".join(exprs.get(c, f"{alias}.{c}") for c in columns)
                cur.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select} "
                    f"FROM {table} {alias}, generate_series(1, %s) g WHERE {alias}.{key} = %s",
                    (count - 1, seed))

    @staticmethod
    def _columns(cur, table):
        cur.execute("SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
                    (table,))
        return [row[0] for row in cur.fetchall()]

    def sample(self, size):
        with self.db.cursor() as cur:
            cur.execute("SELECT name, id FROM stack WHERE tenant = %s AND deleted_at IS NULL "
                        "AND name LIKE 'stack-%%' ORDER BY random() LIMIT %s",
                        (self.project_id, size))
            return cur.fetchall()

    def stacks(self):
        with self.db.cursor() as cur:
            cur.execute("SELECT count(*) FROM stack WHERE tenant = %s AND deleted_at IS NULL",
                        (self.project_id,))
            return cur.fetchone()[0]

    def create(self, name, template):
        """Heat's create of stack ``name`` (its answer's stack id)."""
        return self._send("POST", "/stacks", 201,
                          {"stack_name": name, "template": template}).json()["stack"]["id"]

    def update(self, stack_id, name, template):
        self._send("PUT", f"/stacks/{name}/{stack_id}", 202, {"template": template})

    def delete(self, stack_id, name):
        self._send("DELETE", f"/stacks/{name}/{stack_id}", 204)

    def _send(self, method, path, status, body=None):
        response = requests.request(
            method, f"{self.root}/{self.project_id}{path}", timeout=120,
            headers={**self.headers, "Content-Type": "application/json"},
            data=None if body is None else json.dumps(body))
        if response.status_code != status:
            raise CommandError(f"Heat answered {method} {path} with {response.status_code}: "
                               f"{response.text[:300]}")
        return response

    def wait_for(self, stack_id, target, *, timeout, every=0.05):
        """The stack's ``ACTION_STATUS`` once it is ``target`` or failed, or "TIMEOUT"
        (Heat's database read every ``every`` s, as bench_stacks reads heatweb's)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = (self.states([stack_id]) or [""])[0]
            if state == target or state.endswith("FAILED"):
                return state
            time.sleep(every)
        return "TIMEOUT"

    def states(self, ids):
        """``ACTION_STATUS`` of each stack of ``ids`` Heat's database has."""
        with self.db.cursor() as cur:
            cur.execute("SELECT action || '_' || status FROM stack WHERE id = ANY(%s)",
                        (list(ids),))
            return [row[0] for row in cur.fetchall()]

    def wait(self, ids, *, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
                state.endswith("IN_PROGRESS") for state in self.states(ids)):
            time.sleep(0.5)

    def cpu_seconds(self):
        """``{"web": s, "worker": s, "database": s}``: heat-api's and heat-engine's process
        groups, and the backends of Heat's database."""
        return {"web": group_cpu_seconds({self.groups["heat-api"]}),
                "worker": group_cpu_seconds({self.groups["heat-engine"]}),
                "database": database_cpu_seconds(self.dbname)}


def _read(base, name):
    path = base / name
    if not path.exists():
        raise CommandError(f"no {path}: is scripts/heat-yardstick-up {base} up?")
    return path.read_text().strip()
