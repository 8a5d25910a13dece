"""Zaqar's Keystone account and catalog entry (run by ``scripts/cloud/zaqar-up`` in the
cloud's virtualenv): the service user ``zaqar`` (admin and service in ``service``) and
the service ``zaqar`` of type ``messaging`` at http://127.0.0.1:8888 (public, internal,
admin). Looks before it creates: running it twice changes nothing."""
import argparse

from bootstrap import connect, ensure_project, ensure_user

URL = "http://127.0.0.1:8888"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    idn = connect(args.password).identity
    project = ensure_project(idn, "service", "OpenStack service users")
    ensure_user(idn, "zaqar", password=args.password, project=project,
                roles=("admin", "service"))
    service = (next((s for s in idn.services() if s.name == "zaqar"), None)
               or idn.create_service(name="zaqar", type="messaging"))
    have = {e.interface for e in idn.endpoints(service_id=service.id)}
    for interface in {"public", "internal", "admin"} - have:
        idn.create_endpoint(service_id=service.id, interface=interface, url=URL,
                            region_id="RegionOne")


if __name__ == "__main__":
    main()
