"""Issue 36: Designate's ``OS::Designate::Zone`` and ``RecordSet`` through
python-heatclient against the live service on the simulated cloud: a zone and its
recordsets, updated in place and replaced as Heat does, Designate's refusals as the
resource's reason, and delete. (The one-machine OpenStack cloud's Designate:
tests/openstack/test_openstack_designate.py.)
"""
import re
import uuid

import pytest
from heatclient import client as heat_client_module
from heatclient import exc as heat_exc

from tests.live.test_lock import cloud
from tests.live.test_resource_types_cloud import outputs, physical_ids
from tests.live.test_stack_lifecycle import create, wait_deleted, wait_stack

pytestmark = pytest.mark.live

ZONE = """
heat_template_version: 2016-10-14
parameters:
  zone: {type: string}
  ttl: {type: number, default: 3600}
  address: {type: string, default: 192.0.2.10}
  www_type: {type: string, default: A}
resources:
  zone:
    type: OS::Designate::Zone
    properties:
      name: {get_param: zone}
      email: hostmaster@example.com
      ttl: {get_param: ttl}
      description: heatweb's zone
  www:
    type: OS::Designate::RecordSet
    properties:
      zone: {get_resource: zone}
      name: www
      type: {get_param: www_type}
      records:
        if:
          - {equals: [{get_param: www_type}, A]}
          - [{get_param: address}]
          - ["2001:db8::10"]
  mail:
    type: OS::Designate::RecordSet
    properties:
      zone: {get_param: zone}
      type: MX
      records: [{list_join: [" ", ["10", {list_join: [".", [mx, {get_param: zone}]]}]]}]
    depends_on: zone
outputs:
  serial: {value: {get_attr: [zone, serial]}}
  zone: {value: {get_attr: [zone, show]}}
  www: {value: {get_attr: [www, show]}}
  mail: {value: {get_attr: [mail, show]}}
"""


@pytest.fixture(scope="module")
def hc(live_service):
    info = live_service.issue_token(f"user-{uuid.uuid4().hex[:6]}",
                                    f"dns-{uuid.uuid4().hex[:6]}")
    return heat_client_module.Client("1", endpoint=info["endpoint"], token=info["token"])


def zone_name():
    return f"z{uuid.uuid4().hex[:8]}.example.com."


def test_a_zone_and_its_recordsets_update_in_place_or_are_replaced(hc, live_service):
    name = zone_name()
    hc.stacks.validate(template=ZONE, parameters={"zone": name})
    stack_name, stack_id = create(hc, ZONE, parameters={"zone": name})
    wait_stack(hc, stack_id, "CREATE_COMPLETE")
    out = outputs(hc, stack_id)
    zone = out["zone"]
    assert (zone["name"], zone["email"], zone["ttl"], zone["type"], zone["status"]) == \
        (name, "hostmaster@example.com", 3600, "PRIMARY", "ACTIVE")
    # The zone's show is read again after its recordsets (Heat reads show live); its
    # serial attribute is the one stored at the zone's create, as Heat caches it: the
    # recordsets made after it raised the zone's serial since.
    assert out["serial"] < zone["serial"]
    assert (out["www"]["name"], out["www"]["type"], out["www"]["records"]) == \
        (f"www.{name}", "A", ["192.0.2.10"])
    # No name: the stack's and the resource's, in the zone (as Heat's physical name).
    assert out["mail"]["name"] == f"{stack_name}-mail.{name}"
    assert out["mail"]["zone_id"] == zone["id"] == out["www"]["zone_id"]
    before = physical_ids(hc, stack_id)

    # ttl and records update in place; the serial grows.
    hc.stacks.update(stack_id, template=ZONE, parameters={"zone": name, "ttl": 600,
                                                          "address": "192.0.2.20"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    assert physical_ids(hc, stack_id) == before
    assert out["zone"]["ttl"] == 600 and out["www"]["records"] == ["192.0.2.20"]
    assert out["serial"] > zone["serial"]

    # A new type replaces the recordset (Heat's type is not update_allowed).
    hc.stacks.update(stack_id, template=ZONE, parameters={"zone": name, "ttl": 600,
                                                          "www_type": "AAAA"})
    wait_stack(hc, stack_id, "UPDATE_COMPLETE")
    out = outputs(hc, stack_id)
    after = physical_ids(hc, stack_id)
    assert after["www"] != before["www"] and after["zone"] == before["zone"]
    assert (out["www"]["type"], out["www"]["records"]) == ("AAAA", ["2001:db8::10"])
    gone = cloud(live_service, f"print(json.dumps(c.object_get('dns_recordset', "
                               f"{before['www']!r})))")
    assert gone is None

    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)
    left = cloud(live_service, f"print(json.dumps([c.object_get('dns_zone', "
                               f"{after['zone']!r}), c.object_get('dns_recordset', "
                               f"{after['mail']!r})]))")
    assert left == [None, None]


def _failed(hc, template, **kwargs):
    _, stack_id = create(hc, template, disable_rollback=True, **kwargs)
    wait_stack(hc, stack_id, "CREATE_FAILED")
    failed = {r.resource_name: r.resource_status_reason for r in hc.resources.list(stack_id)
              if r.resource_status == "CREATE_FAILED"}
    return stack_id, failed


@pytest.mark.parametrize("resources, failing, reason", [
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: example.com, email: a@example.com}}
""", "zone", "'example.com' is not a 'zonename'"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com.}}
""", "zone", "Email a@example.com. is invalid"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com}}
  twin:
    type: OS::Designate::Zone
    depends_on: zone
    properties: {name: NAME, email: a@example.com}
""", "twin", "Duplicate Zone"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com}}
  outside:
    type: OS::Designate::RecordSet
    properties: {zone: {get_resource: zone}, name: www.example.net., type: A,
                 records: [192.0.2.1]}
""", "outside", "RecordSet is not contained within it's parent zone"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com}}
  one:
    type: OS::Designate::RecordSet
    properties: {zone: {get_resource: zone}, name: www, type: A, records: [192.0.2.1]}
  two:
    type: OS::Designate::RecordSet
    depends_on: one
    properties: {zone: {get_resource: zone}, name: www, type: A, records: [192.0.2.2]}
""", "two", "Duplicate RecordSet"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com}}
  one:
    type: OS::Designate::RecordSet
    properties: {zone: {get_resource: zone}, name: www, type: A, records: [192.0.2.1]}
  alias:
    type: OS::Designate::RecordSet
    depends_on: one
    properties: {zone: {get_resource: zone}, name: www, type: CNAME, records: [a.example.]}
""", "alias", "CNAME recordsets may not share a name with any other records"),
    ("""
  zone: {type: OS::Designate::Zone, properties: {name: NAME, email: a@example.com}}
  bad:
    type: OS::Designate::RecordSet
    properties: {zone: {get_resource: zone}, type: A, records: ["2001:db8::1"]}
""", "bad", "'2001:db8::1' is not a 'ipv4'"),
    ("""
  missing:
    type: OS::Designate::RecordSet
    properties: {zone: no-such-zone.example.com., type: A, records: [192.0.2.1]}
""", "missing", "Zone no-such-zone.example.com. could not be found"),
], ids=["not-fqdn", "bad-email", "duplicate-zone", "outside-zone", "duplicate-recordset",
        "cname-beside", "bad-record", "missing-zone"])
def test_designates_refusals_fail_the_resource(hc, resources, failing, reason):
    template = ("heat_template_version: 2016-10-14\nresources:"
                + re.sub(r"\bNAME\b", zone_name(), resources))
    stack_id, failed = _failed(hc, template)
    assert list(failed) == [failing], failed
    assert reason in failed[failing], failed[failing]
    hc.stacks.delete(stack_id)
    wait_deleted(hc, stack_id)


def test_a_zone_needs_heats_properties_at_validate_and_the_types_are_listed(hc):
    template = {"heat_template_version": "2016-10-14", "resources": {"zone": {
        "type": "OS::Designate::Zone", "properties": {"name": "example.com."}}}}
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        hc.stacks.validate(template=template)
    assert "Property email is required for zone type PRIMARY" in \
        raised.value.error["error"]["message"]
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Designate::Zone", "OS::Designate::RecordSet"} <= listed
    assert "OS::Designate::Domain" not in listed  # Heat 27's hidden placeholder
    schema = hc.resource_types.get("OS::Designate::RecordSet")
    assert schema["properties"]["records"]["update_allowed"] is True
    assert schema["properties"]["type"]["update_allowed"] is False
