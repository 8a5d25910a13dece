"""Issue 36: Designate's types on the real cloud (scripts/cloud/designate-up's Designate 23,
fake backend): a zone and its recordsets made through python-heatclient and seen in
Designate through openstacksdk, each ACTIVE when its resource completes; updated in place
(the same ids, Designate's serial grown) and replaced where Heat replaces (a recordset's
new type: the old one gone from Designate); another stack's recordset in the zone of a
stack locked at level ``all`` refused (docs/locking.md); delete leaving nothing in
Designate. (The simulated cloud's: tests/live/test_designate_types.py.)"""
import uuid

import pytest

from tests.openstack.conftest import wait_stack

pytestmark = pytest.mark.openstack

TEMPLATE = """
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


def _outputs(heat, stack_id):
    return {o["output_key"]: o.get("output_value") for o in heat.stacks.get(stack_id).outputs}


def _ids(heat, stack_id):
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack_id)}


def _recordset(dns, zone_id, recordset_id):
    return dns.find_recordset(zone_id, recordset_id, ignore_missing=True)


def test_a_zone_and_its_recordsets_in_designate(member, cloud):
    heat, dns = member.heat, cloud.dns
    # The cloud runs Designate (scripts/cloud/designate-up): a cloud without it fails here.
    assert cloud.has_service("dns"), "no Designate in the cloud's catalog"
    tag = f"dns-{uuid.uuid4().hex[:8]}"
    name = f"{tag}.example.com."
    stack_id = heat.stacks.create(stack_name=tag, template=TEMPLATE,
                                  parameters={"zone": name})["stack"]["id"]
    wait_stack(heat, stack_id, "CREATE_COMPLETE")
    ids = _ids(heat, stack_id)
    zone = dns.get_zone(ids["zone"])
    assert (zone.name, zone.email, zone.ttl, zone.type, zone.status, zone.description) == \
        (name, "hostmaster@example.com", 3600, "PRIMARY", "ACTIVE", "heatweb's zone")
    www, mail = (_recordset(dns, zone.id, ids[k]) for k in ("www", "mail"))
    assert (www.name, www.type, www.records, www.status) == \
        (f"www.{name}", "A", ["192.0.2.10"], "ACTIVE")
    # No name: the stack's and the resource's, made absolute in the zone.
    assert (mail.name, mail.records, mail.status) == \
        (f"{tag}-mail.{name}", [f"10 mx.{name}"], "ACTIVE")
    out = _outputs(heat, stack_id)
    assert out["zone"]["id"] == zone.id and out["www"]["zone_id"] == zone.id
    # serial: cached at the zone's create (Heat's); the recordsets made after raised it.
    assert out["serial"] <= zone.serial

    # ttl and records update in place: the same objects, Designate's serial grown.
    heat.stacks.update(stack_id, template=TEMPLATE, parameters={
        "zone": name, "ttl": 600, "address": "192.0.2.20"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    assert _ids(heat, stack_id) == ids
    updated = dns.get_zone(zone.id)
    assert (updated.ttl, updated.status) == (600, "ACTIVE") and updated.serial > zone.serial
    assert _recordset(dns, zone.id, ids["www"]).records == ["192.0.2.20"]

    # A new type replaces the recordset (not update_allowed in Heat): the old one is gone.
    heat.stacks.update(stack_id, template=TEMPLATE, parameters={
        "zone": name, "ttl": 600, "www_type": "AAAA"})
    wait_stack(heat, stack_id, "UPDATE_COMPLETE")
    after = _ids(heat, stack_id)
    assert after["www"] != ids["www"] and after["zone"] == ids["zone"]
    assert _recordset(dns, zone.id, ids["www"]) is None
    aaaa = _recordset(dns, zone.id, after["www"])
    assert (aaaa.type, aaaa.records) == ("AAAA", ["2001:db8::10"])

    # Another stack's recordset in this zone, while this stack is locked at level all, is
    # refused: a recordset changes its zone (docs/locking.md).
    member.action(tag, stack_id, {"lock": {"level": "all"}, "reason": "dns freeze"})
    wait_stack(heat, stack_id, "LOCK_COMPLETE")
    other = heat.stacks.create(stack_name=f"{tag}-other", disable_rollback=True, template={
        "heat_template_version": "2016-10-14", "resources": {"extra": {
            "type": "OS::Designate::RecordSet", "properties": {
                "zone": name, "name": "extra", "type": "A", "records": ["192.0.2.30"]}}}},
    )["stack"]["id"]
    failed = wait_stack(heat, other, "CREATE_FAILED")
    assert "StackLocked" in failed.stack_status_reason and "dns freeze" in \
        failed.stack_status_reason, failed.stack_status_reason
    assert [r.name for r in dns.recordsets(zone.id) if r.name == f"extra.{name}"] == []
    heat.stacks.delete(other)
    wait_stack(heat, other, "DELETE_COMPLETE")
    member.action(tag, stack_id, {"unlock": None})
    wait_stack(heat, stack_id, "UNLOCK_COMPLETE")

    heat.stacks.delete(stack_id)
    wait_stack(heat, stack_id, "DELETE_COMPLETE")
    assert dns.find_zone(zone.id, ignore_missing=True) is None
    assert [z.name for z in dns.zones(name=name)] == []
