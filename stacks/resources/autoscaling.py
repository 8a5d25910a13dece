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
from stacks.resources.base import ResourcePlugin
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Property, Range
from stacks.resources.nested_stacks import nested
from stacks.resources.signal_urls import signal_url
from stacks.resources.stack import ChildStackResource, members_within_budget

ADJUSTMENT_TYPES = ("change_in_capacity", "exact_capacity", "percent_change_in_capacity")


@register
class AutoScalingGroup(ChildStackResource):
    """A group of identical resources (the ``resource`` definition), from min to max size.

    Members are the resources of a nested stack; ``current_size``, ``refs``
    and ``outputs_list`` describe them. Removing members removes the oldest
    first, as Heat does.
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
        "rolling_updates": Property("Map", description="Accepted for compatibility.",
                                    update_allowed=True),
    }
    attributes_schema = {
        "current_size": Attribute("The number of members."),
        "refs": Attribute("Reference ids of the members, oldest first."),
        "outputs_list": Attribute("Reference ids of the members (list)."),
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

    def _size_for(self, props):
        wanted = props.get("desired_capacity")
        wanted = props.get("min_size", 0) if wanted is None else wanted
        return max(props.get("min_size", 0), min(props.get("max_size", wanted), wanted))

    def _resize_members(self, size):
        members_within_budget(size, resource_name=self.name, prop="size")  # a signal's too
        members = list(self.data.get("members", []))
        counter = self.data.get("counter", 0)
        while len(members) < size:
            members.append(f"m{counter}")
            counter += 1
        del members[:max(0, len(members) - size)]  # the oldest go first
        self.data.update(members=members, counter=counter)

    def _template(self):
        member = self.properties.get("resource") or {}
        resources = {name: {"type": member.get("type"),
                            "properties": member.get("properties") or {}}
                     for name in self.data.get("members", [])}
        return {"heat_template_version": "2016-10-14", "resources": resources,
                "outputs": {"refs": {"value": [{"get_resource": n} for n in resources]}}}

    def _parameters(self):
        return {}

    def handle_create(self):
        self._resize_members(self._size_for(self.properties))
        return super().handle_create()

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        if {"desired_capacity", "min_size", "max_size"} & set(changed):
            current = len(self.data.get("members", []))
            size = self._size_for(new_properties) if "desired_capacity" in changed else \
                max(new_properties["min_size"], min(new_properties["max_size"], current))
            self._resize_members(size)
        return super().handle_update(new_properties, changed)

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
        outputs = nested.nested_outputs(self.physical_id) if self.physical_id else {}
        refs = outputs.get("refs") or []
        return {"current_size": len(self.data.get("members", [])), "refs": refs,
                "outputs_list": refs}

    def get_attribute(self, name, *path):
        return self.attributes().get(name)


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
