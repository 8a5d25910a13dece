"""Making a resource's plugin: the one way the engine, the selectors and signals do it.

``NodeContext`` is what the plugins of one stack share (the stack, its
definition, the cloud, the events being recorded); ``plugin_for`` makes
the plugin of one resource row in it; ``InputLookup`` resolves
``get_resource``/``get_attr`` from the data predecessors passed on.
"""
from dataclasses import dataclass, field

from heatweb.exceptions import InvalidTemplateAttribute
from stacks.cloud import cloud_for_stack
from stacks.definitions import definition_cache, plugin_class_for_type
from stacks.resources import registry
from stacks.resources.base import PluginContext, names_in
from stacks.resources.deletion_policy import deletion_policy, with_policy
from stacks.resources.external import EXTERNAL_ID, external_plugin
from stacks.resources.stack import TemplateResource


@dataclass
class NodeContext:
    """What every node of one task shares: the stack, its definition, events."""

    stack: object
    traversal_id: str | None
    definition: object
    events: object
    plugin_context: PluginContext
    node: list | None = None  # the [entity_id, is_update] being run
    node_input: dict | None = None  # the data its predecessors passed on
    waits: list = field(default_factory=list)  # Waiter rows, stored by waiting.waits_flush
    # Actions started in this batch that wait on a cloud object: their first look
    # is one list call for the whole batch (batch_calls.first_checks_run), not
    # one call each. None: each action looks at once (a single poll).
    first_checks: list | None = None
    # Actions whose cloud calls run side by side at the end of the batch
    # (batch_calls.handles_run), when the cloud allows ``parallel_calls`` > 1.
    handles: list | None = None
    parallel_calls: int = 1
    # Owner records the batch's first checks take, written in one statement at the end
    # of their transaction (batch_calls.first_checks_run). None: each is written at
    # once.
    pending_holds: list | None = None
    # Resource locks the batch's actions take together, in one statement at the end of
    # the batch (check_resource.locks_run). None: each is taken at once.
    locks: list | None = None
    # Resource saves written together (row_saves.saves_flush) at the end of a
    # batch's transaction. None: each is written at once.
    saves: list | None = None

    @property
    def action(self):
        return self.stack.action


def plugin_context(stack):
    return PluginContext(cloud=cloud_for_stack(stack), stack_id=str(stack.pk),
                         stack_name=stack.name, project_id=stack.project_id,
                         lock_reason=stack.lock_reason)


def stack_context(stack, *, traversal_id=None, events=None, with_definition=True):
    """A context for making plugins of ``stack`` outside a traversal (signals, reads)."""
    definition = definition_cache.get(stack) if with_definition else None
    return NodeContext(stack=stack, traversal_id=traversal_id, definition=definition,
                       events=events, plugin_context=plugin_context(stack))


class InputLookup:
    """Resolves get_resource/get_attr from the data predecessors passed on."""

    def __init__(self, input_data, plugins=None):
        self.by_name = {d["name"]: d for d in input_data.values() if d}
        # The definition's {name: plugin class}: a template resource's class is not in
        # the registry (its type is its file's name).
        self.plugins = plugins or {}

    @property
    def requires(self):
        return sorted(d["id"] for d in self.by_name.values())

    def get_reference_id(self, name):
        entry = self.by_name.get(name)
        return entry["ref"] if entry else None

    def get_attributes(self, name):
        """``get_attr: [resource]``: every attribute but ``show``, as Heat's FnGetAtts."""
        entry = self.by_name.get(name)
        if not entry:
            return None
        return {k: v for k, v in (entry.get("attrs") or {}).items() if k != "show"}

    def get_attribute(self, name, attr, *path):
        entry = self.by_name.get(name)
        if not entry:
            return None
        plugin = self.plugins.get(name)
        if plugin is None or plugin.type_name != entry.get("type"):
            plugin = registry.plugin_or_base(entry.get("type"))
        return plugin.resolve_attribute(entry["attrs"], attr, path)


def resolved_properties(definition, name, lookup):
    """Resource ``name``'s properties as the engine converges it (and the update preview
    expects): the template's functions resolved against ``lookup``, then each entry of a
    ``named_resource_attributes`` list that names a resource of the stack replaced by
    that attribute of it, as Heat's alarms do (``actions_to_urls``: ``alarm_actions:
    [ScaleUpPolicy]`` is the policy's AlarmUrl). A resource without that attribute is
    Heat's InvalidTemplateAttribute."""
    cls = definition.plugins[name]
    raw = definition.template.resolve(definition.resources[name].properties,
                                      definition.params, lookup)
    if not cls.named_resource_attributes or not isinstance(raw, dict):
        return raw
    raw = dict(raw)
    for key, attribute in cls.named_resource_attributes.items():
        named = set(names_in(raw.get(key), definition.resources))
        if named:
            raw[key] = [_named_attribute(definition, entry, attribute, lookup)
                        if isinstance(entry, str) and entry in named else entry
                        for entry in raw[key]]
    return raw


def _named_attribute(definition, name, attribute, lookup):
    cls = definition.plugins[name]
    # A template resource's attributes are its template's outputs, known when it is made.
    if attribute not in cls.attributes_schema and not issubclass(cls, TemplateResource):
        raise InvalidTemplateAttribute(resource=name, key=attribute)
    return lookup.get_attribute(name, attribute)


REPLACE, UPDATE, UNCHANGED = "replace", "update", "unchanged"


def update_decision(res, *, resource_type, cls, props):
    """``(decision, changed)``: how an update converges resource row ``res`` to ``props``.

    The one answer to "is it replaced?", asked by the engine (``convergence.nodes``)
    and by the update preview, so the preview says what the update does: a
    property whose schema allows an update (a server's flavor: a resize) is
    updated in place, another one replaces the resource.
    """
    old = res.properties_data or {}
    changed = {k for k in set(props) | set(old) if props.get(k) != old.get(k)}
    # As Heat: a resource marked unhealthy (CHECK_FAILED) is replaced by the next update.
    if res.type != resource_type or res.action == "DELETE" or res.state == "CHECK_FAILED" or \
            cls.replace_on_update or (changed and cls.needs_replacement_for(old, props, changed)):
        return REPLACE, changed
    if not changed and res.status != "FAILED" and not cls.updates_unchanged(props):
        return UNCHANGED, changed
    return UPDATE, changed


def node_data(res, plugin):
    """What a finished node passes to its successors (and outputs read)."""
    return {"id": res.pk, "name": res.name, "type": plugin.type_name,
            "ref": plugin.get_reference_id(), "attrs": res.attributes_data}


def plugin_class(ctx, res):
    definition = ctx.definition
    if definition and res.name in definition.resources \
            and definition.resources[res.name].type == res.type:
        cls = definition.plugins[res.name]
    else:
        raw = ctx.stack.raw_template
        cls = plugin_class_for_type(res.type, raw.environment, raw.files)
    if not res.properties_data:
        return cls  # not made yet: as its definition says
    # Made: external exactly when it adopted an object (whatever the template says now),
    # so an adopted object is never deleted and an owned one always is.
    cls = getattr(cls, "adopted_from", cls)
    external_id = res.properties_data.get(EXTERNAL_ID)
    if external_id:
        return external_plugin(cls, external_id)
    if res.action == "DELETE":  # being deleted: as its deletion_policy says
        return with_policy(cls, deletion_policy(res))
    return cls


def plugin_for(ctx, res, properties=None, cls=None, *, update_policy=None):
    """The plugin of resource row ``res`` (with ``properties`` instead of the stored ones;
    ``update_policy``: the validated policy an action starting now follows)."""
    cls = cls or plugin_class(ctx, res)
    return cls(name=res.name, properties=res.properties_data if properties is None else properties,
               context=ctx.plugin_context, physical_id=res.physical_resource_id or None,
               data=dict(res.plugin_data or {}), resource_id=res.pk,
               update_policy=update_policy, stored_attributes=res.attributes_data)
