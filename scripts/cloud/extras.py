"""Keystone accounts and catalog entries of the cloud's extra services, and their health.

Run in the cloud's virtualenv by ``scripts/cloud/extras-up``:

* ``catalog``: the service users ``cinder``, ``swift``, ``barbican``, ``octavia``
  (admin and service roles in ``service``), Barbican's ``creator`` role, and the
  catalog entries: ``block-storage`` (Cinder v3), ``object-store`` (Swift),
  ``key-manager`` (Barbican), ``load-balancer`` (Octavia).
* ``wait``: until cinder-scheduler, cinder-volume and cinder-backup report up.
* ``health``: one authenticated call per extra service; exit 1 when one fails.

Looks before it creates: running it twice changes nothing.
"""
import argparse
import sys
import time

from bootstrap import connect, ensure_project, ensure_user

EXTRAS = {
    # user: (service name, catalog type, endpoint URL)
    "cinder": ("cinderv3", "block-storage", "http://127.0.0.1:8776/v3/%(project_id)s"),
    "swift": ("swift", "object-store", "http://127.0.0.1:8080/v1/AUTH_%(project_id)s"),
    "barbican": ("barbican", "key-manager", "http://127.0.0.1:9311"),
    "octavia": ("octavia", "load-balancer", "http://127.0.0.1:9876"),
}


def catalog(conn, password):
    idn = conn.identity
    service_project = ensure_project(idn, "service", "OpenStack service users")
    if not idn.find_role("creator"):
        idn.create_role(name="creator")
    for user, (name, service_type, url) in EXTRAS.items():
        ensure_user(idn, user, password=password, project=service_project,
                    roles=("admin", "service"))
        service = (next((s for s in idn.services() if s.name == name), None)
                   or idn.create_service(name=name, type=service_type))
        have = {e.interface for e in idn.endpoints(service_id=service.id)}
        for interface in {"public", "internal", "admin"} - have:
            idn.create_endpoint(service_id=service.id, interface=interface, url=url,
                                region_id="RegionOne")


def wait_volume(conn, timeout):
    deadline = time.monotonic() + timeout
    up = set()
    while time.monotonic() < deadline:
        up = {s.binary for s in conn.block_storage.services()
              if s.state == "up" and s.status == "enabled"}
        if {"cinder-scheduler", "cinder-volume", "cinder-backup"} <= up:
            return
        time.sleep(0.5)
    sys.exit(f"cinder services not all up after {timeout}s: up are {sorted(up)}")


def health(conn):
    checks = {"cinder": lambda: list(conn.block_storage.types()),
              "swift": lambda: conn.object_store.get_account_metadata(),
              "barbican": lambda: list(conn.key_manager.secrets(limit=1)),
              "octavia": lambda: list(conn.load_balancer.load_balancers(limit=1))}
    failed = []
    for name, check in checks.items():
        try:
            check()
        except Exception as exc:  # any failure means "not healthy"; say which and why
            failed.append(f"{name}: {exc}")
    if failed:
        sys.exit("unhealthy: " + "; ".join(failed))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("catalog", "wait", "health"))
    parser.add_argument("--password", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    conn = connect(args.password)
    if args.step == "catalog":
        catalog(conn, args.password)
    elif args.step == "wait":
        wait_volume(conn, args.timeout)
    else:
        health(conn)


if __name__ == "__main__":
    main()
