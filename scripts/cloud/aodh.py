"""Aodh's Keystone account and catalog entry, its health, and an event to fire its alarms.

Run in the cloud's virtualenv (openstacksdk, oslo.messaging) by ``scripts/cloud/aodh-up``
and by the openstack-mode tests:

* ``catalog``: the service user ``aodh`` (admin and service roles in ``service``) and
  the catalog entry ``alarming`` (Aodh's v2 API on ``--url``).
* ``health``: one authenticated call to Aodh's API; exit 1 when it fails.
* ``event``: play Ceilometer: publish one event on Aodh's listener topic (``alarm.all``)
  as Ceilometer's event pipeline does with a ``notifier://`` publisher (a ``sample``
  notification whose payload is a list of events, each with its ``event_type``, a
  ``message_id`` and its traits as ``[name, type, value]``; type 1 is a string).
  aodh-listener fires the project's enabled event alarms whose ``event_type`` and query
  match: it sets them to ``alarm`` and aodh-notifier calls their ``alarm_actions``.

Looks before it creates: running ``catalog`` twice changes nothing.
"""
import argparse
import configparser
import json
import sys
import uuid
from datetime import datetime, timezone

SERVICE = ("aodh", "alarming")  # service name, catalog type


def catalog(conn, password, url):
    from bootstrap import ensure_project, ensure_user

    idn = conn.identity
    service_project = ensure_project(idn, "service", "OpenStack service users")
    ensure_user(idn, "aodh", password=password, project=service_project,
                roles=("admin", "service"))
    name, service_type = SERVICE
    service = (next((s for s in idn.services() if s.name == name), None)
               or idn.create_service(name=name, type=service_type))
    for endpoint in idn.endpoints(service_id=service.id):
        if endpoint.url != url:  # a cloud brought up before with another port
            idn.delete_endpoint(endpoint)
    have = {e.interface for e in idn.endpoints(service_id=service.id)}
    for interface in {"public", "internal", "admin"} - have:
        idn.create_endpoint(service_id=service.id, interface=interface, url=url,
                            region_id="RegionOne")


def health(conn):
    response = conn.session.get("/v2/alarms", endpoint_filter={
        "service_type": SERVICE[1], "interface": "public"}, raise_exc=False)
    if response.status_code != 200:
        sys.exit(f"unhealthy: aodh: GET /v2/alarms answered {response.status_code} "
                 f"{response.text[:200]}")


def transport_url(config_file):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config_file)
    return parser["DEFAULT"]["transport_url"]


def send_event(url, *, event_type, project_id, traits=()):
    """One event as Ceilometer's notifier publisher sends it to Aodh's listener."""
    import oslo_messaging
    from oslo_config import cfg

    conf = cfg.ConfigOpts()
    conf([], project="heatweb-ceilometer")
    transport = oslo_messaging.get_notification_transport(conf, url=url)
    notifier = oslo_messaging.Notifier(transport, driver="messagingv2",
                                       publisher_id="telemetry.publisher.heatweb",
                                       topics=["alarm.all"], retry=3)
    event = {"event_type": event_type, "message_id": str(uuid.uuid4()),
             "generated": datetime.now(timezone.utc).replace(tzinfo=None).isoformat(),
             "traits": [["project_id", 1, project_id], *[[k, 1, str(v)] for k, v in traits]],
             "raw": {}, "message_signature": ""}
    notifier.sample({}, event_type="event.sample", payload=[event])
    transport.cleanup()
    return event["message_id"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=("catalog", "health", "event"))
    parser.add_argument("--password")
    parser.add_argument("--url", default="http://127.0.0.1:8042")
    parser.add_argument("--config-file", help="aodh.conf (event: its transport_url)")
    parser.add_argument("--event-type", default="heatweb.test")
    parser.add_argument("--project-id")
    parser.add_argument("--trait", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    if args.step == "event":
        traits = [t.split("=", 1) for t in args.trait]
        print(json.dumps({"message_id": send_event(
            transport_url(args.config_file), event_type=args.event_type,
            project_id=args.project_id, traits=traits)}))
        return
    from bootstrap import connect  # openstacksdk: not needed to send an event

    conn = connect(args.password)
    if args.step == "catalog":
        catalog(conn, args.password, args.url)
    else:
        health(conn)


if __name__ == "__main__":
    main()
