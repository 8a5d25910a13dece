"""Benchmark: heatweb against the same objects made directly with openstacksdk.

On the real cloud of ``scripts/cloud-up`` (its ``clouds.yaml`` and access
logs in ``--cloud-base``), for each shape (``bench_direct_shapes``) and
phase (create, update, suspend, resume, delete): first the direct script
does it (openstacksdk, every independent call at once, waits read by one
server list every ``--poll`` seconds), then heatweb does it: a heatweb
started here (``manage.py serve``: its web server and one Celery worker, in
Keystone mode with the OpenStack driver, on this run mode's database and
broker) driven through python-heatclient with a Keystone token, as a user
would; the stack's state is read from the database every 20 ms.

With ``--heat-base BASE`` (or ``--heat-endpoint URL``) a third side, ``heat``:
upstream OpenStack Heat 27 as ``scripts/heat-yardstick-up BASE`` runs it
(heat-api and one heat-engine, a yardstick outside heatweb, never imported),
driven by the same templates through python-heatclient (endpoint override:
it is not in the catalog); the stack's state is read from Heat's database
every 20 ms (``BASE/heat-db``), or without one from its API every 0.2 s.

All act as one user made for the run, each in a project of its own (also
made for the run, deleted at the end with anything left in them). Each
side names itself in its User-Agent, so the Nova, Neutron and Glance
requests it sent are counted from the services' access logs (Heat's are
tagged ``heat-yardstick`` by the yardstick's launchers:
scripts/heat-yardstick/agent.py).
"""
import os
import time
import uuid

import openstack
import psycopg
import yaml
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from stacks.management.bench_accounts import Accounts
from stacks.management.bench_direct_shapes import SHAPES, Direct, template_and_files
from stacks.management.bench_siblings import Served
from stacks.management.cloud_access_logs import AccessLogs
from stacks.management.procs import group_cpu_seconds
from stacks.models import Event, Stack

PHASES = (("create", "CREATE_COMPLETE"), ("update", "UPDATE_COMPLETE"),
          ("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE"),
          ("delete", "DELETE_COMPLETE"))
COUNTED = ("nova", "neutron", "glance")
SETTLE_SECONDS = 1.0  # for the last requests of a phase to reach the access logs


class Command(BaseCommand):
    help = ("Against the real cloud: each shape and phase made directly with openstacksdk and "
            "through heatweb; seconds and Nova/Neutron/Glance requests of each.")

    def add_arguments(self, parser):
        parser.add_argument("--shapes", default="servers20",
                            help=f"comma-separated, of {', '.join(SHAPES)}")
        parser.add_argument("--cloud-base",
                            default=os.environ.get("HEATWEB_CLOUD_BASE", "/tmp/heatweb-cloud"))
        parser.add_argument("--image", default="heatweb-tiny")
        parser.add_argument("--flavor", default="m1.tiny")
        parser.add_argument("--threads", type=int, default=10,
                            help="the direct script's calls in flight at once")
        parser.add_argument("--poll", type=float, default=0.5,
                            help="seconds between the direct script's server lists")
        parser.add_argument("--timeout", type=float, default=900)
        parser.add_argument("--heat-base",
                            help="a Heat of scripts/heat-yardstick-up BASE: adds the heat side "
                                 "(its URL from BASE/heat-url, its database from BASE/heat-db)")
        parser.add_argument("--heat-endpoint",
                            help="Heat's API root (http://HOST:PORT/v1): adds the heat side")
        parser.add_argument("--heat-db", help="Heat's database (PostgreSQL DSN), where the "
                                              "heat side reads a stack's state")
        parser.add_argument("--heat-agent", default="heat-yardstick",
                            help="the first word of the User-Agent of Heat's requests")

    def handle(self, *args, **opts):
        if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
            raise CommandError("bench_direct needs DATABASE_URL (PostgreSQL) and "
                               "CELERY_BROKER_URL (Redis): heatweb is served beside it")
        shapes = [SHAPES[name] for name in opts["shapes"].split(",")]
        self.opts = opts
        base = opts["cloud_base"]
        with open(os.path.join(base, "clouds.yaml")) as f:
            self.clouds = yaml.safe_load(f)["clouds"]
        os.environ["OS_CLIENT_CONFIG_FILE"] = os.path.join(base, "clouds.yaml")
        self.logs = AccessLogs(os.path.join(base, "log"))
        run = uuid.uuid4().hex[:6]
        self.agents = {"direct": f"bench-direct-{run}", "heatweb": f"bench-heatweb-{run}"}
        self.heat = self._heat_side(opts)
        if self.heat:
            self.agents["heat"] = opts["heat_agent"]
        self.admin = openstack.connect(cloud="heatweb-admin", connect_retries=3)
        self.made = Accounts(self.admin, run, sides=tuple(self.agents))
        rows = self.rows = []
        try:
            self.made.create()
            call_command("migrate", verbosity=0)
            with self._served(run) as served:
                self.served = served
                clients = {"heatweb": self._heat_client(f"{served.url}/v1", "heatweb")}
                if self.heat:
                    clients["heat"] = self._heat_client(self.heat["url"], "heat")
                direct_conn = self.made.connection("direct", app_name=self.agents["direct"])
                for shape in shapes:
                    self._shape(shape, direct_conn, clients)
        finally:
            if self.heat and self.heat["db"] is not None:
                self.heat["db"].close()
            if rows:  # what was measured, also when a later shape failed
                self._print(rows, shapes)
            self.made.delete()

    # set-up ---------------------------------------------------------------------------

    def _served(self, run):
        service = self.clouds["heatweb-service"]["auth"]
        keystone = service["auth_url"].rstrip("/")
        os.environ.update(
            HEATWEB_AUTH="keystone",
            KEYSTONE_URL=keystone if keystone.endswith("/v3") else keystone + "/v3",
            HEATWEB_SERVICE_USERNAME=service["username"],
            HEATWEB_SERVICE_PASSWORD=service["password"],
            HEATWEB_SERVICE_PROJECT=service["project_name"],
            HEATWEB_CLOUD="openstack", OS_CLOUD="heatweb-service",
            HEATWEB_CLOUD_APP_NAME=self.agents["heatweb"],
            HEATWEB_QUEUE=f"bench-direct-{run}")
        return Served()

    def _heat_client(self, url, side):
        from heatclient import client

        token, project_id = self.made.token(side)
        return client.Client("1", endpoint=f"{url}/{project_id}", token=token)

    @staticmethod
    def _heat_side(opts):
        """The heat side's API root, database connection and process groups, or None."""
        base, url, dsn = opts["heat_base"], opts["heat_endpoint"], opts["heat_db"]
        groups = []
        if base:
            def read(name):
                path = os.path.join(base, name)
                if not os.path.exists(path):
                    raise CommandError(f"no {path}: is scripts/heat-yardstick-up {base} up?")
                with open(path) as f:
                    return f.read().strip()
            url = url or read("heat-url")
            dsn = dsn or read("heat-db")
            run = os.path.join(base, "run")
            groups = [int(read(os.path.join("run", name))) for name in sorted(os.listdir(run))
                      if name.endswith(".pid")]
        if not url:
            return None
        db = psycopg.connect(dsn, autocommit=True) if dsn else None
        return {"url": url.rstrip("/"), "db": db, "groups": groups}

    # phases ---------------------------------------------------------------------------

    def _shape(self, shape, conn, clients):
        opts = self.opts
        direct = Direct(conn, shape, image=opts["image"], flavor=opts["flavor"],
                        threads=opts["threads"], poll=opts["poll"])
        template, files = template_and_files(shape, image=opts["image"], flavor=opts["flavor"])
        name = f"bench-{shape.name}"

        def orchestrate(heat):
            """One side's phases through python-heatclient: ``phase -> stack id``."""
            stack = {}

            def do(phase):
                if phase == "create":
                    stack["id"] = heat.stacks.create(stack_name=name, template=template,
                                                     files=files)["stack"]["id"]
                elif phase == "update":
                    heat.stacks.update(stack["id"], template=template, files=files,
                                       parameters={"marker": "2"})
                elif phase == "suspend":
                    heat.actions.suspend(stack["id"])
                elif phase == "resume":
                    heat.actions.resume(stack["id"])
                else:
                    heat.stacks.delete(stack["id"])
                return stack["id"]
            return do

        try:
            self._phases(shape, direct, {side: orchestrate(client)
                                         for side, client in clients.items()})
        finally:
            direct.close()

    def _phases(self, shape, direct, sides):
        for phase, target in PHASES:
            load = os.getloadavg()[0]
            row = {"shape": shape.name, "servers": shape.servers, "phase": phase, "load": load}
            row["direct"] = self._measure("direct", lambda: getattr(direct, phase)())
            cpu = self.served.cpu_seconds()
            started, made = timezone.now(), {}
            row["heatweb"] = self._measure("heatweb", lambda: self._wait(
                made.setdefault("id", sides["heatweb"](phase)), target, phase))
            row["cpu"] = self.served.cpu_seconds() - cpu
            row["timeline"] = timeline(made["id"], phase, started)
            if "heat" in sides:
                cpu = group_cpu_seconds(self.heat["groups"])
                row["heat"] = self._measure(
                    "heat", lambda: self._wait_heat(sides["heat"](phase), target, phase))
                row["heat_cpu"] = group_cpu_seconds(self.heat["groups"]) - cpu
            self.rows.append(row)
            self.stderr.write(self._row(row))

    def _measure(self, side, run):
        mark = self.logs.mark()
        began = time.perf_counter()
        run()
        seconds = time.perf_counter() - began
        time.sleep(SETTLE_SECONDS)
        return seconds, self.logs.since(mark, self.agents[side])

    def _wait(self, stack_id, target, phase):
        deadline = time.monotonic() + self.opts["timeout"]
        state = None
        while time.monotonic() < deadline:
            row = Stack.objects.filter(pk=stack_id).values_list("state", "deleted_at").first()
            state = "DELETE_COMPLETE" if row is None or row[1] else row[0]
            if state == target:
                return
            if state.endswith("FAILED"):
                reason = Stack.objects.filter(pk=stack_id).values_list(
                    "status_reason", flat=True).first()
                raise CommandError(f"heatweb {phase}: {state}: {reason}")
            time.sleep(0.02)
        raise CommandError(f"heatweb {phase}: {state} after {self.opts['timeout']} s")

    def _wait_heat(self, stack_id, target, phase):
        """Until Heat's stack is ``target``: its row in Heat's database every 20 ms (as
        heatweb's is read), or without the database, Heat's API every 0.2 s."""
        deadline = time.monotonic() + self.opts["timeout"]
        state = reason = None
        client = self.heat.get("client")
        while time.monotonic() < deadline:
            if self.heat["db"] is not None:
                row = self.heat["db"].execute(
                    "SELECT action, status, status_reason, deleted_at FROM stack "
                    "WHERE id = %s", (stack_id,)).fetchone()
                if row is None or row[3] is not None:
                    state = "DELETE_COMPLETE"
                else:
                    state, reason = f"{row[0]}_{row[1]}", row[2]
                pause = 0.02
            else:
                if client is None:
                    client = self.heat["client"] = self._heat_client(self.heat["url"], "heat")
                try:
                    got = client.stacks.get(stack_id)
                    state, reason = got.stack_status, got.stack_status_reason
                except Exception as error:  # noqa: BLE001 - heatclient's NotFound: gone
                    if "404" not in str(error) and "not found" not in str(error).lower():
                        raise
                    state = "DELETE_COMPLETE"
                pause = 0.2
            if state == target:
                return
            if state.endswith("FAILED"):
                raise CommandError(f"heat {phase}: {state}: {reason}")
            time.sleep(pause)
        raise CommandError(f"heat {phase}: {state} after {self.opts['timeout']} s")

    # output ---------------------------------------------------------------------------

    HEADER = (f"{'shape':<11}{'phase':<8}{'load':>5}{'direct s':>9}{'heatweb s':>10}"
              f"{'ratio':>6} | {'direct nova/neutron/glance':>27} | "
              f"{'heatweb nova/neutron/glance':>28}{'cpu s':>7}")
    HEAT_HEADER = (f" || {'heat s':>7}{'ratio':>6} | {'heat nova/neutron/glance':>25}"
                   f"{'cpu s':>7}")

    @staticmethod
    def _counts(counts):
        return "/".join(str(counts[service][0]) for service in COUNTED)

    def _row(self, row):
        d_seconds, d_counts = row["direct"]
        h_seconds, h_counts = row["heatweb"]
        out = (f"{row['shape']:<11}{row['phase']:<8}{row['load']:>5.2f}{d_seconds:>9.2f}"
               f"{h_seconds:>10.2f}{h_seconds / d_seconds:>6.2f} | "
               f"{self._counts(d_counts):>27} | {self._counts(h_counts):>28}"
               f"{row['cpu']:>7.2f}")
        if "heat" in row:
            u_seconds, u_counts = row["heat"]
            out += (f" || {u_seconds:>7.2f}{u_seconds / d_seconds:>6.2f} | "
                    f"{self._counts(u_counts):>25}{row['heat_cpu']:>7.2f}")
        return out

    def _print(self, rows, shapes):
        self.stdout.write(f"real cloud: {self.opts['cloud_base']}; image {self.opts['image']}, "
                          f"flavor {self.opts['flavor']}; servers: " + ", ".join(
                              f"{s.name} {s.servers}" for s in shapes))
        self.stdout.write(f"direct: openstacksdk, {self.opts['threads']} calls in flight, a "
                          f"server list every {self.opts['poll']} s while waiting")
        self.stdout.write("heatweb: manage.py serve (web + one worker), Keystone mode, "
                          "through python-heatclient; cpu s: heatweb's processes in the phase")
        self.stdout.write("requests: Nova/Neutron/Glance requests of each side, from the "
                          "services' access logs (by User-Agent); load: 1-minute load average "
                          "at the phase's start")
        header = self.HEADER
        if self.heat:
            self.stdout.write(f"heat: OpenStack Heat 27 at {self.heat['url']} (heat-api + one "
                              "heat-engine), through python-heatclient; ratio: heat s / direct s;"
                              " cpu s: Heat's processes in the phase")
            header += self.HEAT_HEADER
        self.stdout.write(header)
        self.stdout.write("-" * len(header))
        for row in rows:
            self.stdout.write(self._row(row))
        if self.verbosity > 1:
            for row in rows:
                for side in [side for side in ("direct", "heatweb", "heat") if side in row]:
                    kinds = sorted((n, k) for service in COUNTED + ("keystone",)
                                   for k, n in row[side][1][service][1].items())
                    self.stdout.write(f"{row['shape']} {row['phase']} {side}: " + ", ".join(
                        f"{n} {k}" for n, k in reversed(kinds)))
                self.stdout.write(f"{row['shape']} {row['phase']} heatweb's events: "
                                  f"{row['timeline']}")

    @property
    def verbosity(self):
        return self.opts.get("verbosity", 1)


def timeline(stack_id, phase, started):
    """When heatweb's events of the phase happened, from the request (``started``): the
    first and the last resource's IN_PROGRESS (the last: when the last cloud call went
    out), the first and the last resource's COMPLETE and the stack's own COMPLETE."""
    events = list(Event.objects.filter(stack_id=stack_id, created_at__gte=started,
                                       resource_action=phase.upper())
                  .values_list("physical_resource_id", "resource_status", "created_at"))
    own = str(stack_id)  # the stack's own events name it as their physical resource
    at = {}
    for physical, status, created in events:
        key = ("stack" if physical == own else "resource", status)
        seconds = (created - started).total_seconds()
        first, last = at.get(key, (seconds, seconds))
        at[key] = (min(first, seconds), max(last, seconds))
    resources = sum(1 for physical, status, _ in events
                    if physical != own and status == "COMPLETE")

    def when(key, end):
        return f"{at[key][end]:.2f} s" if key in at else "-"
    return (f"resources IN_PROGRESS {when(('resource', 'IN_PROGRESS'), 0)} to "
            f"{when(('resource', 'IN_PROGRESS'), 1)}, COMPLETE "
            f"{when(('resource', 'COMPLETE'), 0)} to {when(('resource', 'COMPLETE'), 1)} "
            f"({resources} resources), stack COMPLETE {when(('stack', 'COMPLETE'), 1)}")
