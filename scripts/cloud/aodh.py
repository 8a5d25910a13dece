"""An event to fire Aodh's alarms (its account, catalog entry and health:
``scripts/cloud/service.py``).

Run in the cloud's virtualenv (oslo.messaging) by the openstack-mode tests:

* ``event``: play Ceilometer: publish one event on Aodh's listener topic (``alarm.all``)
  as Ceilometer's event pipeline does with a ``notifier://`` publisher (a ``sample``
  notification whose payload is a list of events, each with its ``event_type``, a
  ``message_id`` and its traits as ``[name, type, value]``; type 1 is a string).
  aodh-listener fires the project's enabled event alarms whose ``event_type`` and query
  match: it sets them to ``alarm`` and aodh-notifier calls their ``alarm_actions``.
"""
import argparse
import configparser
import json
import uuid
from datetime import datetime, timezone


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
    parser.add_argument("step", choices=("event",))
    parser.add_argument("--config-file", help="aodh.conf (event: its transport_url)")
    parser.add_argument("--event-type", default="heatweb.test")
    parser.add_argument("--project-id")
    parser.add_argument("--trait", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    traits = [t.split("=", 1) for t in args.trait]
    print(json.dumps({"message_id": send_event(
        transport_url(args.config_file), event_type=args.event_type,
        project_id=args.project_id, traits=traits)}))


if __name__ == "__main__":
    main()
