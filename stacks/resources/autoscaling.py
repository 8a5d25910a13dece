"""Auto scaling: ``OS::Heat::AutoScalingGroup`` and ``OS::Heat::ScalingPolicy``.

The group's members live in a nested stack generated from the member
``resource`` definition; resizing updates that nested stack. A policy is
signalled (through the API or its signed ``alarm_url``) and resizes its
group, within min/max and after its cooldown. Signals to a locked stack
are ignored (see ``stacks.services.signals``).
"""
import math
import time

from heatweb.exceptions import StackValidationFailed
from stacks.models import Resource
from stacks.resources.base import ResourcePlugin, attribute_path
from stacks.resources.batches import plan
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range
from stacks.resources.nested_stacks import nested
from stacks.resources.resource_group import MEMBER_PREFIX, MEMBERS_OF, group_attribute, \
    members_view
from stacks.resources.signal_urls import signal_url
from stacks.resources.stack import ChildStackResource, members_within_budget
from stacks.resources.update_policy import BATCHES, ROLLING_UPDATE_SCHEMA, BatchedGroup, \
    scaling_batch

def _member_order(name):
    """Members are named m0, m1, ... as they are made: oldest first."""
    return int(name[1:]) if name[1:].isdigit() else -1


def members_template(members):
    """The members' stack: ``members`` ({name: definition}) and their ``refs``."""
    return {"heat_template_version": "2016-10-14", "resources": members,
            "outputs": {"refs": {"value": [{"get_resource": n} for n in members]}}}


ADJUSTMENT_TYPES = ("change_in_capacity", "exact_capacity", "percent_change_in_capacity")


@register
class AutoScalingGroup(BatchedGroup, ChildStackResource):
    """A group of identical resources (the ``resource`` definition), from min to max size.

    Members are the resources of a nested stack; ``current_size``, ``refs``
    and ``outputs_list`` describe them. Removing members removes the oldest
    first, as Heat does. A change of ``resource`` is a rolling update
    (``rolling_updates``: ``max_batch_size`` members at a time, oldest first,
    keeping ``min_in_service`` members not being changed, ``pause_time``
    seconds between batches).
    """

    type_name = "OS::Heat::AutoScalingGroup"
    properties_schema = {
        "min_size": Property("Integer", description="Minimum number of members.",
                             required=True, update_allowed=True, constraints=(Range(0, None),)),
        "max_size": Property("Integer", description="Maximum number of members.",
                             required=True, update_allowed=True, constraints=(Range(0, None),)),
        "desired_capacity": Property("Integer", description="Members to start with.",
                                     update_allowed=True),
        "cooldown": Property("Integer", description="Seconds between scalings.",
                             update_allowed=True),
        "resource": Property("Map", description="The member resource definition "
                             "({type, properties}).", required=True, update_allowed=True),
        "rolling_updates": Property("Map", description="Policy for rolling updates for this "
                                    "scaling group.", update_allowed=True,
                                    schema=ROLLING_UPDATE_SCHEMA,
                                    default={"min_in_service": 0, "max_batch_size": 1,
                                             "pause_time": 0}),
    }
    attributes_schema = {
        "current_size": Attribute("The current size of AutoscalingResourceGroup.", "integer"),
        "refs": Attribute("Reference ids of the members, oldest first.", "list"),
        "refs_map": Attribute("A map of member names to their reference ids.", "map"),
        "outputs": Attribute("With a member attribute name: a map of member names to that "
                             "attribute of each member.", "map"),
        "outputs_list": Attribute("With a member attribute name: a list of that attribute of "
                                  "each member, oldest first.", "list"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        where = f"Property error: resources.{resource_name}.properties"
        member = props.get("resource")
        if isinstance(member, dict) and not isinstance(member.get("type"), str):
            raise StackValidationFailed(f"{where}.resource: must have a \"type\"")
        low, high = props.get("min_size"), props.get("max_size")
        for prop in ("min_size", "desired_capacity"):
            members_within_budget(props.get(prop), resource_name=resource_name, prop=prop)
        if isinstance(low, int) and isinstance(high, int) and low > high:
            raise StackValidationFailed(f"{where}: min_size can not be greater than max_size")
        return props

    @classmethod
    def member_definitions(cls, properties):
        member = properties.get("resource")
        if not isinstance(member, dict) or not isinstance(member.get("type"), str):
            return {}
        return {"m0": (member["type"], member.get("properties") or {})}

    def _size_for(self, props):
        wanted = props.get("desired_capacity")
        wanted = props.get("min_size", 0) if wanted is None else wanted
        return max(props.get("min_size", 0), min(props.get("max_size", wanted), wanted))

    def member_names(self):
        """The members' names, oldest first: m<first> ... m<counter - 1>.

        New members take the next numbers and the oldest go first, so the
        names are always a range and ``data`` holds its two ends, not a name
        per member (a row stored before holds the list, ``members``).
        """
        if "members" in self.data:
            return list(self.data["members"])
        return [f"m{i}" for i in range(self.data.get("first", 0), self.data.get("counter", 0))]

    def current_size(self):
        if "members" in self.data:
            return len(self.data["members"])
        return max(0, self.data.get("counter", 0) - self.data.get("first", 0))

    def _resize_members(self, size):
        members_within_budget(size, resource_name=self.name, prop="size")  # a signal's too
        members = self.member_names()
        counter = self.data.get("counter", 0)
        while len(members) < size:
            members.append(f"m{counter}")
            counter += 1
        del members[:max(0, len(members) - size)]  # the oldest go first
        self._keep_members(members, counter)

    def _keep_members(self, members, counter):
        first = counter - len(members)
        if members == [f"m{i}" for i in range(first, counter)]:
            self.data.pop("members", None)
            self.data.update(first=first, counter=counter)
        else:
            self.data.update(members=members, counter=counter)

    def _member_definition(self):
        member = self.properties.get("resource") or {}
        return {"type": member.get("type"), "properties": member.get("properties") or {}}

    def _template(self):
        member = self._member_definition()
        return members_template({name: member for name in self.member_names()})

    def _rolling_policy(self):
        """``(min_in_service, max_batch_size, pause seconds)`` of a rolling update."""
        policy = self.properties.get("rolling_updates") or {}
        return (policy.get("min_in_service", 0), policy.get("max_batch_size", 1),
                policy.get("pause_time", 0))

    def _batch_template(self, capacity, changed):
        counter = self.data.get("counter", len(self.member_names()))

        def new_name():
            nonlocal counter
            counter += 1
            return f"m{counter - 1}"

        members = scaling_batch(self._child_members(), self._member_definition(),
                                capacity=capacity, changed=changed, order=_member_order,
                                new_name=new_name)
        self._keep_members(list(members), counter)
        return members_template(members)

    def _rolling_update(self, size):
        """Start a rolling update to ``size`` members; False when there is nothing to do."""
        min_in_service, batch_size, pause = self._rolling_policy()
        current = len(self.member_names())
        target = min(size, current)  # as Heat: replace first, then grow
        batches = plan(target, current, batch_size=batch_size, min_in_service=min_in_service,
                       surplus_stays=True)
        if size > target:
            batches.append((size, size - target))
        if not batches:
            return False
        self._batches_start(batches, pause=pause)
        return True

    def _parameters(self):
        return {}

    def handle_create(self):
        self._resize_members(self._size_for(self.properties))
        return super().handle_create()

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        self.data.pop(BATCHES, None)
        current = self.current_size()
        size = current
        if {"desired_capacity", "min_size", "max_size"} & set(changed):
            size = self._size_for(new_properties) if "desired_capacity" in changed else \
                max(new_properties["min_size"], min(new_properties["max_size"], current))
        if "resource" in changed and self.physical_id and self._rolling_update(size):
            return None
        if size != current:
            self._resize_members(size)
        return super().handle_update(new_properties, changed)

    def check_update_complete(self, cookie):
        return self._batches_complete() if BATCHES in self.data else \
            super().check_update_complete(cookie)

    def resized(self, size):
        """Clamp ``size`` to min/max and change the members to it (in ``data``); the size.

        The scaling service (``nested.scaling_group_resize``) saves the result
        under a claim of the group's row and updates the members' stack.
        """
        size = max(self.properties["min_size"], min(self.properties["max_size"], size))
        self._resize_members(size)
        return size

    def member_template(self):
        return self._template()

    def attributes(self):
        """What is stored: the members' stack and ``current_size``; ``refs``,
        ``refs_map`` and ``attributes`` (member attribute -> {member name: value}),
        from which ``outputs`` and ``outputs_list`` are derived, are read from the
        member rows when asked for."""
        return {MEMBERS_OF: self.physical_id, "current_size": self.current_size()}

    @classmethod
    def members_view(cls, attrs, name=None):
        return members_view(attrs, name, order_key=_member_order, own=("current_size",))

    @classmethod
    def shown_attributes(cls, attrs):
        return cls.members_view(attrs)

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        """``outputs``/``outputs_list`` with a member attribute path, as Heat's group."""
        attrs = cls.members_view(attrs, name)
        order = sorted(attrs.get("refs_map") or {}, key=_member_order)
        if name in ("outputs", "outputs_list"):
            if not path:
                return None
            values = (attrs.get("attributes") or {}).get(path[0]) or {}
            picked = {n: attribute_path(values.get(n), path[1:]) for n in order}
            return picked if name == "outputs" else [picked[n] for n in order]
        if name.startswith(MEMBER_PREFIX):
            return group_attribute(attrs, name, path)
        return attribute_path(attrs.get(name), path)

    def get_attribute(self, name, *path):
        return self.resolve_attribute(self.attributes(), name, path)


@register
class ScalingPolicy(ResourcePlugin):
    """Resizes an auto scaling group when signalled (e.g. by an alarm POSTing ``alarm_url``).

    ``adjustment_type``: ``change_in_capacity`` (add ``scaling_adjustment``),
    ``exact_capacity`` (set it), or ``percent_change_in_capacity``. After a
    scaling, further signals within ``cooldown`` seconds are ignored.
    """

    type_name = "OS::Heat::ScalingPolicy"
    properties_schema = {
        "auto_scaling_group_id": Property("String", description="The group to scale "
                                          "({get_resource: group}).", required=True),
        "adjustment_type": Property("String", description="How to apply the adjustment.",
                                    required=True, update_allowed=True,
                                    constraints=(AllowedValues(ADJUSTMENT_TYPES),)),
        "scaling_adjustment": Property("Number", description="Size of the adjustment.",
                                       required=True, update_allowed=True),
        "cooldown": Property("Number", description="Seconds to ignore signals after a "
                             "scaling.", update_allowed=True),
        "min_adjustment_step": Property("Integer", description="Smallest change for percent "
                                        "adjustments.", update_allowed=True,
                                        constraints=(Range(0, None),)),
    }
    signed_url_attributes = ("alarm_url", "signal_url")
    attributes_schema = {
        "alarm_url": Attribute("A signed URL that signals this policy with a POST (no token)."),
        "signal_url": Attribute("Same as alarm_url."),
    }

    def get_attribute(self, name, *path):
        if name not in ("alarm_url", "signal_url"):
            return None
        row = Resource.objects.filter(stack_id=self.context.stack_id, name=self.name,
                                      replaced_by__isnull=True).exclude(
            state="DELETE_COMPLETE").values_list("uuid", flat=True).first()
        return signal_url(row) if row else None

    def _new_size(self, current):
        kind = self.properties["adjustment_type"]
        step = self.properties["scaling_adjustment"]
        if kind == "exact_capacity":
            return int(step)
        if kind == "change_in_capacity":
            return current + int(step)
        change = current * step / 100.0
        change = math.ceil(change) if change > 0 else math.floor(change)
        minimum = self.properties.get("min_adjustment_step") or 0
        if abs(change) < minimum:
            change = minimum if step > 0 else -minimum
        return current + int(change)

    def handle_signal(self, details):
        cooldown = self.properties.get("cooldown") or 0
        last = self.data.get("last_scaled_at", 0)
        if cooldown and time.time() - last < cooldown:
            return "signal ignored: cooldown in progress"
        scaled, refusal = nested.scaling_group_resize(
            stack_id=self.context.stack_id, context=self.context, new_size=self._new_size,
            group_physical_id=self.properties["auto_scaling_group_id"])
        if refusal:
            return refusal
        self.data["last_scaled_at"] = time.time()
        name, current, size = scaled
        return f"Signal: scaling {name} from {current} to {size}"
