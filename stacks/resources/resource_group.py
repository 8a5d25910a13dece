"""``OS::Heat::ResourceGroup``: ``count`` copies of one resource definition.

The members are the resources ``"0"``, ``"1"``, ... of a nested stack whose
template is generated from ``resource_def``; changing ``count`` or the
definition updates that nested stack, so kept members keep their physical
objects. The functions at the top are pure (no database): they make the
members' names and template.
"""
from heatweb.exceptions import StackValidationFailed
from stacks.resources.base import attribute_path
from stacks.resources.batches import batch_members, plan
from stacks.resources.nested_stacks import nested
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Attribute, Length, Property, Range
from stacks.resources.stack import ChildStackResource, members_within_budget
from stacks.resources.update_policy import BATCH_CREATE_SCHEMA, BATCHES, \
    ROLLING_UPDATE_SCHEMA, BatchedGroup

MEMBER_TEMPLATE_VERSION = "2016-10-14"
RESOURCE_DEF_KEYS = ("type", "properties", "metadata")
OWN_ATTRIBUTES = ("refs", "refs_map", "attributes", "removed_rsrc_list")
MEMBER_PREFIX = "resource."


def substitute_index(value, index_var, index):
    """``value`` with every ``index_var`` in its strings (recursively) replaced by ``index``.

    As in Heat, only values are rewritten (strings in lists and map values), not map keys.
    """
    if isinstance(value, str):
        return value.replace(index_var, str(index))
    if isinstance(value, list):
        return [substitute_index(v, index_var, index) for v in value]
    if isinstance(value, dict):
        return {k: substitute_index(v, index_var, index) for k, v in value.items()}
    return value


def member_names(count, removed=()):
    """The names of ``count`` members: the lowest indexes not in ``removed``, in order."""
    removed, names, index = set(removed), [], 0
    while len(names) < count:
        if str(index) not in removed:
            names.append(str(index))
        index += 1
    return names


def member_definition(resource_def, *, index_var, index):
    """One member's HOT resource definition (``type``, ``properties``, ``metadata``)."""
    member = {"type": resource_def["type"],
              "properties": substitute_index(resource_def.get("properties") or {},
                                             index_var, index)}
    if resource_def.get("metadata"):
        member["metadata"] = substitute_index(resource_def["metadata"], index_var, index)
    return member


def members_template(resource_def, names, *, index_var):
    """The nested stack's template: one resource per member name."""
    return {"heat_template_version": MEMBER_TEMPLATE_VERSION,
            "resources": {name: member_definition(resource_def, index_var=index_var, index=name)
                          for name in names}}


def removed_after(policies, *, mode, removed, refs_map):
    """The names never to use again, after ``removal_policies`` (Heat's blacklist).

    A ``resource_list`` entry names a current member by its index or its
    reference id; entries naming no current member are ignored. Mode
    ``append`` adds to the names removed before, ``update`` replaces them.
    """
    wanted = set()
    for policy in policies or ():
        if isinstance(policy, dict):
            wanted.update(str(entry) for entry in policy.get("resource_list") or ())
    chosen = {name for name, ref in refs_map.items() if name in wanted or ref in wanted}
    kept = set() if mode == "update" else set(removed)
    return sorted(kept | chosen, key=_index_order)


def _index_order(name):
    return (0, int(name), "") if str(name).isdigit() else (1, 0, str(name))


# What a group stores of its members: the id of their stack (``MEMBERS_OF``),
# not a copy of their references and attributes, which would grow with every
# member (10,000 members: megabytes on the group's row and in every
# successor's input data). The rest is derived from the member rows on reading.
MEMBERS_OF = "members_of"


def members_attributes(members, *, order_key):
    """``refs``, ``refs_map`` and ``attributes`` (member attribute -> {name: value}) of
    ``members`` ({name: node data}), in ``order_key`` order."""
    order = sorted(members, key=order_key)
    by_attribute = {}
    for name in order:
        for attr, value in (members[name]["attrs"] or {}).items():
            by_attribute.setdefault(attr, {})[name] = value
    return {"refs": [members[name]["ref"] for name in order],
            "refs_map": {name: members[name]["ref"] for name in order},
            "attributes": by_attribute}


def members_view(attrs, name=None, *, order_key, own=OWN_ATTRIBUTES):
    """The group's stored ``attrs`` with its members' ``refs``, ``refs_map`` and
    ``attributes`` read from their rows: only member N's for ``resource.N``,
    none for a name of ``own`` that is stored (``removed_rsrc_list``).

    ``attrs`` stored before the members were read on demand (a full copy) are
    returned as they are.
    """
    if MEMBERS_OF not in attrs:
        return attrs
    child_id = attrs[MEMBERS_OF]
    view = {k: v for k, v in attrs.items() if k != MEMBERS_OF}
    if name is not None and name in own and name in view:
        return view
    names = None
    if name is not None and name.startswith(MEMBER_PREFIX):
        names = [name[len(MEMBER_PREFIX):].split(".", 1)[0]]
    members = nested.nested_resources_data(child_id, names=names) if child_id else {}
    return {**view, **members_attributes(members, order_key=order_key)}


def group_attribute(attrs, name, path):
    """Resolve ``get_attr: [group, name, *path]`` from the group's stored attributes.

    ``attrs`` holds ``refs``, ``refs_map``, ``removed_rsrc_list`` and
    ``attributes`` (member attribute name -> {index: value}); the other forms
    are derived from them: ``resource.N`` is member N's reference id or, with
    a path, its attribute; any other name lists that attribute of every
    member in index order.
    """
    by_attribute = attrs.get("attributes") or {}
    order = sorted(attrs.get("refs_map") or {}, key=_index_order)
    if name in OWN_ATTRIBUTES:
        return attribute_path(attrs.get(name), path)
    if name.startswith(MEMBER_PREFIX):
        # As Heat splits it: "resource.0.value" is member 0's attribute "value".
        index, *rest = name[len(MEMBER_PREFIX):].split(".", 1)
        path = (*rest, *path)
        if not path:
            return (attrs.get("refs_map") or {}).get(index)
        return attribute_path((by_attribute.get(path[0]) or {}).get(index), path[1:])
    values = by_attribute.get(name) or {}
    return attribute_path([values.get(index) for index in order], path)


def replacement_order(members, names, *, target, capacity):
    """``members`` ({name: definition}) in the order a batch takes them, as Heat's
    ResourceGroup: those not among ``names`` (to remove) first, then the highest
    index below ``target`` first; names from ``target`` on last."""
    position = {name: index for index, name in enumerate(names)}

    def priority(item):
        index = position.get(item[0])
        if index is None:
            return 0
        return target - index if index < target else capacity

    return sorted(members.items(), key=priority)


@register
class ResourceGroup(BatchedGroup, ChildStackResource):
    """``count`` identical resources made from ``resource_def``, named "0", "1", ...

    Every occurrence of ``index_var`` (default ``%index%``) in the
    definition's strings becomes the member's index. Growing adds the next
    indexes; shrinking removes the highest, except that members named (by
    index or reference id) in a ``removal_policies`` entry's
    ``resource_list`` are removed first and their indexes never reused
    (``removed_rsrc_list``). Attributes: ``refs``, ``refs_map``,
    ``attributes`` (with a member attribute name: index -> value),
    ``resource.N`` (member N's reference id, or with a path its attribute),
    ``removed_rsrc_list``, and any member attribute name, which lists that
    attribute of every member.

    ``update_policy``: ``rolling_update`` (``max_batch_size``, ``min_in_service``,
    ``pause_time``) changes the members in batches when ``resource_def``
    changes, highest index first, keeping ``min_in_service`` members not being
    changed (adding members for the time of the update when needed) and waiting
    ``pause_time`` seconds between batches; ``batch_create`` (``max_batch_size``,
    ``pause_time``) creates the members in batches.
    """

    type_name = "OS::Heat::ResourceGroup"
    properties_schema = {
        "count": Property("Integer", description="The number of members.", default=1,
                          update_allowed=True, constraints=(Range(0, None),)),
        "resource_def": Property(
            "Map", description="The member definition: type, properties, metadata.",
            required=True, update_allowed=True,
            schema={"type": Property("String", description="The members' type.", required=True),
                    "properties": Property("Map", description="The members' properties."),
                    "metadata": Property("Map", description="The members' metadata.")}),
        "index_var": Property("String", description="Replaced by each member's index in "
                              "resource_def's strings.", default="%index%",
                              constraints=(Length(3, None),)),
        "removal_policies": Property("List", description="Maps with a resource_list of "
                                     "members (index or reference id) to remove first.",
                                     default=[], update_allowed=True),
        "removal_policies_mode": Property("String", description="append: add to the members "
                                          "removed before; update: replace them.",
                                          default="append", update_allowed=True,
                                          constraints=(AllowedValues(("append", "update")),)),
    }
    update_policy_schema = {
        "rolling_update": Property("Map", description="Rolling update of the members when "
                                   "resource_def changes.", schema=ROLLING_UPDATE_SCHEMA),
        "batch_create": Property("Map", description="Creation of the members in batches.",
                                 schema=BATCH_CREATE_SCHEMA),
    }
    attributes_schema = {
        "refs": Attribute("Reference ids of the members, in index order.", "list"),
        "refs_map": Attribute("Reference id of each member by index.", "map"),
        "attributes": Attribute("With a member attribute name: that attribute by index.", "map"),
        "removed_rsrc_list": Attribute("Members removed by removal_policies.", "list"),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        members_within_budget(props.get("count"), resource_name=resource_name, prop="count")
        definition = props.get("resource_def")
        if isinstance(definition, dict):
            unknown = sorted(set(definition) - set(RESOURCE_DEF_KEYS))
            if unknown:
                raise StackValidationFailed(f"Property error: resources.{resource_name}."
                                            f"properties.resource_def: Unknown Property "
                                            f"{unknown[0]}")
        return props

    @classmethod
    def member_definitions(cls, properties):
        definition = properties.get("resource_def")
        if not isinstance(definition, dict) or not isinstance(definition.get("type"), str):
            return {}
        member = member_definition(definition, index_var=properties.get("index_var", "%index%"),
                                   index=0)
        return {"0": (member["type"], member["properties"])}

    @classmethod
    def members_view(cls, attrs, name=None):
        """The stored attributes with the members' read from their rows (see ``members_view``)."""
        return members_view(attrs, name, order_key=_index_order)

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        return group_attribute(cls.members_view(attrs, name), name, path)

    @classmethod
    def shown_attributes(cls, attrs):
        return cls.members_view(attrs)

    def _members_data(self):
        return nested.nested_resources_data(self.physical_id) if self.physical_id else {}

    def _apply_removal_policies(self, properties):
        refs_map = {name: d["ref"] for name, d in self._members_data().items()}
        self.data["removed"] = removed_after(
            properties.get("removal_policies"), mode=properties.get("removal_policies_mode"),
            removed=self.data.get("removed", ()), refs_map=refs_map)

    def _template(self):
        definition = self.properties["resource_def"]
        names = member_names(self.properties.get("count", 1), self.data.get("removed", ()))
        return members_template(definition, names,
                                index_var=self.properties.get("index_var", "%index%"))

    def _parameters(self):
        return {}

    def _current_members(self):
        """The members' definitions in the child's template, but for removed names."""
        removed = set(self.data.get("removed", ()))
        return {name: definition for name, definition in self._child_members().items()
                if name not in removed}

    def _batch_template(self, capacity, changed):
        definition = self.properties["resource_def"]
        index_var = self.properties.get("index_var", "%index%")
        names = member_names(capacity, self.data.get("removed", ()))
        current = self._current_members()
        old = replacement_order(current, names, target=self.properties.get("count", 1),
                                capacity=capacity)
        fresh = (name for name in names if name not in current)
        members = batch_members(
            old, lambda name: member_definition(definition, index_var=index_var, index=name),
            capacity=capacity, changed=changed, new_name=lambda: next(fresh))
        return {"heat_template_version": MEMBER_TEMPLATE_VERSION, "resources": dict(members)}

    def handle_create(self):
        self.data["removed"] = []
        self.data.pop(BATCHES, None)  # a batched create that failed, now retried
        policy = self.update_policy.get("batch_create")
        count = self.properties.get("count", 1)
        if not policy or not count:
            return super().handle_create()
        self._batches_start(plan(count, 0, batch_size=policy["max_batch_size"],
                                 min_in_service=0, surplus_stays=False),
                            pause=policy["pause_time"])
        return None

    def check_create_complete(self, cookie):
        return self._batches_complete() if BATCHES in self.data else \
            super().check_create_complete(cookie)

    def handle_update(self, new_properties, changed):
        self._apply_removal_policies(new_properties)
        policy = self.update_policy.get("rolling_update")
        if not policy or "resource_def" not in changed or not self.physical_id:
            self.data.pop(BATCHES, None)
            return super().handle_update(new_properties, changed)
        self.properties = new_properties
        batches = plan(new_properties.get("count", 1), len(self._current_members()),
                       batch_size=policy["max_batch_size"],
                       min_in_service=policy["min_in_service"], surplus_stays=False)
        if not batches:
            return super().handle_update(new_properties, changed)
        self._batches_start(batches, pause=policy["pause_time"])
        return None

    def check_update_complete(self, cookie):
        return self._batches_complete() if BATCHES in self.data else \
            super().check_update_complete(cookie)

    def attributes(self):
        """What is stored: the members' stack and ``removed_rsrc_list``; the members'
        references and attributes are read from their rows when asked for."""
        return {MEMBERS_OF: self.physical_id,
                "removed_rsrc_list": list(self.data.get("removed", ()))}

    def get_attribute(self, name, *path):
        return self.resolve_attribute(self.attributes(), name, path)
