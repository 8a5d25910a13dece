"""A cloud service with a venv of its own (Aodh, Designate, Gnocchi, Mistral): its
Keystone account and catalog entry, and its health.

Run in the cloud's virtualenv (openstacksdk) from ``scripts/cloud`` by the service's
``-up`` script:

* ``catalog NAME TYPE URL``: the service user NAME (admin and service roles in
  ``service``) and the catalog entry of TYPE at URL (its public, internal and admin
  endpoints in RegionOne), where the service's clients and Heat look it up.
* ``health NAME TYPE PATH``: one authenticated GET of PATH on TYPE's public endpoint;
  exit 1 unless it answers 200.

Looks before it creates: running ``catalog`` twice changes nothing.
"""
import argparse

from bootstrap import check_health, connect, register_service


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("catalog", "health"))
    parser.add_argument("name", help="the service's name (and its Keystone user's)")
    parser.add_argument("type", help="its catalog type")
    parser.add_argument("where", help="catalog: its endpoint URL; health: the path to GET")
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    conn = connect(args.password)
    if args.step == "catalog":
        register_service(conn, user=args.name, name=args.name, service_type=args.type,
                         url=args.where, password=args.password)
    else:
        check_health(conn, args.name, args.type, args.where)


if __name__ == "__main__":
    main()
