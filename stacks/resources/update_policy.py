"""Update policies (a resource's ``update_policy`` section) and the batches they ask for.

A type declares its ``update_policy_schema`` as Heat does; a type without
one refuses any policy (Heat: ``Unknown Property``). ``BatchedGroup`` is
what a group backed by a child stack needs to change its members in
batches: each batch is one update of the child stack to a template where
only some members have the new definition (Heat's batch templates), and
between batches the group waits ``pause`` seconds with the engine's timed
wait (the resource's waiter is due then; no worker sleeps).
"""
import time

from django.conf import settings

from heatweb.exceptions import StackValidationFailed
from stacks.models import Stack
from stacks.resources.batches import batch_members, iso_duration_seconds
from stacks.resources.nested_stacks import nested
from stacks.resources.schema import Property, PropertyError, Range

ROLLING_UPDATE_SCHEMA = {
    "min_in_service": Property("Integer", description="The minimum number of resources in "
                               "service while rolling updates are being executed.",
                               default=0, constraints=(Range(0, None),)),
    "max_batch_size": Property("Integer", description="The maximum number of resources to "
                               "replace at once.", default=1, constraints=(Range(1, None),)),
    "pause_time": Property("Number", description="The number of seconds to wait between "
                           "batches of updates.", default=0, constraints=(Range(0, None),)),
}
BATCH_CREATE_SCHEMA = {
    "max_batch_size": Property("Integer", description="The maximum number of resources to "
                               "create at once.", default=1, constraints=(Range(1, None),)),
    "pause_time": Property("Number", description="The number of seconds to wait between "
                           "batches.", default=0, constraints=(Range(0, None),)),
}
CFN_ROLLING_UPDATE_SCHEMA = {
    "MinInstancesInService": Property("Integer", default=0),
    "MaxBatchSize": Property("Integer", default=1),
    "PauseTime": Property("String", default="PT0S"),
}


def policy_values(schema, raw, *, resource_name):
    """The update policy ``raw`` typed by ``schema`` (defaults filled in); Heat's 400
    (``StackValidationFailed``) for an unknown key, a wrong type or a value out of range."""
    return _values(schema, {} if raw is None else raw,
                   where=f"Property error: resources.{resource_name}.update_policy")


def _values(schema, raw, *, where):
    if not isinstance(raw, dict):
        raise StackValidationFailed(f'{where}: "{raw}" is not a map')
    for key in raw:
        if key not in schema:
            raise StackValidationFailed(f"{where}: Unknown Property {key}")
    out = {}
    for key, prop in schema.items():
        value = raw.get(key)
        if value is None:
            if prop.default is not None:
                out[key] = prop.default
            continue
        if isinstance(prop.schema, dict):
            out[key] = _values(prop.schema, value, where=f"{where}.{key}")
            continue
        try:
            out[key] = prop.coerce(value)
        except PropertyError as error:
            raise StackValidationFailed(f"{where}.{key}: {error}") from None
    return out


# Where a group keeps its batches in its plugin data while it works through them.
BATCHES = "batches"


class BatchedGroup:
    """Mixin of a ``ChildStackResource`` group: its child stack made or changed in batches.

    The group provides ``_batch_template(capacity, changed)``: the child's
    template after a batch (see ``stacks.resources.batches.batch_members``).
    ``data[BATCHES]`` holds the plan (``[[capacity, changed], ...]``), the
    next batch, the pause and, during a pause, when it ends.
    """

    def _batches_start(self, plan, *, pause):
        """Run ``plan``'s first batch; refused, as Heat does, when its pauses alone would
        last the stack's timeout (Heat's default: an hour)."""
        pauses = float(pause or 0) * max(len(plan) - 1, 0)
        timeout_mins = Stack.objects.filter(pk=self.context.stack_id).values_list(
            "timeout_mins", flat=True).first() or 60
        if pauses and pauses >= timeout_mins * settings.HEATWEB["MINUTE_SECONDS"]:
            raise ValueError("The current update policy will result in stack update timeout.")
        self.data[BATCHES] = {"plan": [list(batch) for batch in plan], "next": 0,
                              "pause": float(pause or 0)}
        self._batch_run()

    def _batch_run(self):
        state = self.data[BATCHES]
        capacity, changed = state["plan"][state["next"]]
        template = self._batch_template(capacity, changed)
        state["next"] += 1
        state.pop("pause_until", None)
        if self.physical_id is None:
            state["child_action"] = "CREATE"
            self.physical_id = nested.nested_create(
                parent_id=self.context.stack_id, resource_name=self.name, template=template,
                parameters=self._parameters(), files=self._files(),
                timeout_mins=self.properties.get("timeout"), environment=self._environment())
            self.data["nested_stack_id"] = self.physical_id
            return
        state["child_action"] = "UPDATE"
        nested.nested_update(self.physical_id, template=template, parameters=self._parameters(),
                             files=self._files(), timeout_mins=self.properties.get("timeout"),
                             environment=self._environment())

    def _child_members(self):
        """The members' definitions in the child stack's template ({name: definition})."""
        child = nested.nested_get(self.physical_id) if self.physical_id else None
        return ((child.raw_template.template or {}).get("resources") or {}) if child else {}

    def _batches_complete(self):
        """True when the last batch is done; starts the next batch once a pause is over."""
        state = self.data[BATCHES]
        if not nested.nested_progress(self.physical_id, state["child_action"]):
            return False
        if state["next"] >= len(state["plan"]):
            del self.data[BATCHES]
            return True
        if state["pause"] and "pause_until" not in state:
            state["pause_until"] = time.time() + state["pause"]
        if time.time() < state.get("pause_until", 0):
            return False
        self._batch_run()
        return False

    def wake_at(self, cookie):
        """During a pause between batches, its end; otherwise a look when the child is done."""
        state = self.data.get(BATCHES)
        if state is not None:
            return state.get("pause_until")
        return super().wake_at(cookie)

    def waiting_reason(self, cookie):
        state = self.data.get(BATCHES)
        if state is None:
            return super().waiting_reason(cookie)
        if "pause_until" in state:
            return f"Pausing {state['pause']:g} s after batch {state['next']} of " \
                   f"{len(state['plan'])}"
        return f"Batch {state['next']} of {len(state['plan'])}"


def scaling_batch(current, new, *, capacity, changed, order, new_name):
    """A scaling group's members after one batch, ``{name: definition}`` in ``order``.

    As Heat's scaling groups: out-of-date members, oldest first, are the first
    removed or given the ``new`` definition; added members are named by
    ``new_name()``.
    """
    old = sorted(current.items(), key=lambda item: (item[1] == new, order(item[0])))
    members = batch_members(old, lambda name: new, capacity=capacity, changed=changed,
                            new_name=new_name)
    return dict(sorted(members, key=lambda member: order(member[0])))


def cfn_rolling_policy(cls, raw, *, key, resource_name):
    """A CloudFormation group's policy (``key``: RollingUpdate or AutoScalingRollingUpdate):
    typed, and its PauseTime an ISO 8601 duration of at most an hour, as Heat checks it."""
    values = policy_values(cls.update_policy_schema, raw, resource_name=resource_name)
    if values.get(key):
        try:
            if iso_duration_seconds(values[key]["PauseTime"]) > 3600:
                raise ValueError("Maximum PauseTime is 1 hour.")
        except ValueError as error:
            raise StackValidationFailed(f"ValueError: resources.{resource_name}: {error}") \
                from None
    return values
