"""Aodh on a real cloud: alarms of every type.

Aodh's v2 API is a handful of plain REST calls, made through openstacksdk's
generic proxy of the ``alarm`` service type (catalog type ``alarming``, its
alias): ``POST /alarms`` with the alarm whole (``type``, its ``<type>_rule``,
the actions), ``GET`` and ``DELETE /alarms/{id}``, and ``PUT /alarms/{id}``,
which replaces the alarm: an update reads it, lays the changed fields over it
(a rule's keys over the rule's, as aodhclient does) and writes it back whole,
so a suspend's ``enabled=False`` alone keeps the rest. Aodh's refusals carry
its ``faultstring`` (a Gnocchi type on a cloud without Gnocchi: 503 "public
endpoint for metric service ... not found").
"""
from stacks.cloud.driver import CloudError, CloudNotFound
from stacks.cloud.openstack.calls import call

# What Aodh answers but refuses (or ignores) in a PUT's body.
READ_ONLY = ("alarm_id", "id", "timestamp", "state_timestamp", "evaluate_timestamp",
             "user_id", "project_id")


def _refusal(response):
    """Aodh's words for a failed call (its ``faultstring``), with the HTTP status."""
    try:
        error = response.json().get("error_message")
    except ValueError:
        error = None
    if isinstance(error, dict):
        error = error.get("faultstring")
    text = (error or response.text or "").strip()
    status = response.status_code
    if status == 404:
        return CloudNotFound(f"{text} (HTTP 404)")
    return CloudError(f"{text} (HTTP {status})")


def _checked(response):
    if response.status_code >= 400:
        raise _refusal(response)
    return response


class AlarmingCalls:
    """Mixin of ``OpenStackCloud``: Aodh's ``_os_<verb>_alarm`` methods."""

    def _os_create_alarm(self, *, name, fields, creation_key, find_first):
        body = {k: v for k, v in fields.items() if v is not None}
        if name:
            body["name"] = name
        made = _checked(call(self.conn.alarm.post, "/alarms", json=body)).json()
        return made["alarm_id"]

    def _alarm(self, alarm_id):
        response = call(self.conn.alarm.get, f"/alarms/{alarm_id}")
        if response.status_code == 404:
            return None
        return _checked(response).json()

    def _os_get_alarm(self, object_id):
        found = self._alarm(object_id)
        return None if found is None else {**found, "id": found["alarm_id"]}

    def _os_update_alarm(self, object_id, fields):
        alarm = self._alarm(object_id)
        if alarm is None:
            raise CloudNotFound(f"Alarm {object_id} not found (HTTP 404)")
        body = {k: v for k, v in alarm.items() if k not in READ_ONLY}
        for key, value in fields.items():
            if key.endswith("_rule") and isinstance(value, dict) and \
                    isinstance(body.get(key), dict):
                body[key] = {**body[key], **value}
            elif value is None:
                body.pop(key, None)
            else:
                body[key] = value
        _checked(call(self.conn.alarm.put, f"/alarms/{object_id}", json=body))

    def _os_delete_alarm(self, object_id):
        response = call(self.conn.alarm.delete, f"/alarms/{object_id}")
        if response.status_code != 404:
            _checked(response)
        return True  # Aodh deletes before it answers
