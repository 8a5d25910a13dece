"""The resource plugin protocol.

A plugin is a class with a declarative ``properties_schema`` and
``attributes_schema`` and two-phase actions: ``handle_<action>()`` starts the
work and returns a JSON-serialisable cookie, ``check_<action>_complete(cookie)``
is asked again (by the engine's poll round, possibly in another worker and on
a new plugin instance) until it returns True; a plugin whose action waits on
a cloud object returns ``await_status(...)`` so that many such waits are
polled with one list call. What a later phase needs lives in the
cookie, ``physical_id`` or ``data``. Plugins talk to their backend only:
they never touch stack state or enqueue tasks. Raising fails the resource
with the error's message.
"""
import time
from dataclasses import dataclass, field

from heatweb.exceptions import StackValidationFailed
from stacks.cloud.driver import CloudError
from stacks.hot.values import UNRESOLVED
from stacks.resources.schema import PropertyError
from stacks.resources.update_policy import policy_values


# Where the engine keeps the key it gives a resource's create (see ResourcePlugin.creation_key).
CREATION_KEY = "heatweb_creation_key"


class ResourceFailure(Exception):
    """An action of a resource failed; the message is the reason users see."""


def cloud_call(method, *args, **kwargs):
    """Call the cloud driver; its refusal (``CloudError``) fails the resource with its message."""
    try:
        return method(*args, **kwargs)
    except CloudError as error:
        raise ResourceFailure(str(error)) from None


@dataclass
class PluginContext:
    cloud: object
    stack_id: str
    stack_name: str
    project_id: str
    lock_reason: str = ""
    # What the plugins of one task read of the cloud and may share (``shared_read``).
    reads: dict = field(default_factory=dict)

    def shared_read(self, key, read):
        """``read()`` once for the plugins of this task (20 ports of one network read it
        once for their ``network`` attribute, not 20 times)."""
        if key not in self.reads:
            self.reads[key] = read()
        return self.reads[key]


def wait_cookie(seconds):
    """A cookie for "complete once ``seconds`` have passed" (never sleep in a worker)."""
    return {"until": time.time() + float(seconds)} if seconds else None


def waited(cookie):
    return not cookie or not isinstance(cookie, dict) or time.time() >= cookie.get("until", 0)


def await_status(kind, object_id, *, wanted, failed=()):
    """A cookie declaring what the action waits on: cloud object ``object_id`` of ``kind``.

    ``kind`` is ``server`` or ``image``. The engine then watches every such
    object of a project with one list call per poll round (the driver's
    ``server_list``/``image_statuses``) instead of one call per
    resource, and runs ``check_<action>_complete`` once the status is one
    of ``wanted`` or ``failed``, with that status in the cookie
    (``observed_status``).
    """
    return {"await": {"kind": kind, "id": object_id, "ready_on": [*wanted, *failed]}}


def observed_status(cookie):
    """The status the engine's poll round saw for an ``await_status`` cookie, or None."""
    return cookie.get("observed") if isinstance(cookie, dict) else None


def observed_object(cookie):
    """The whole object as the round's list call described it (a server), or None."""
    return cookie.get("observed_object") if isinstance(cookie, dict) else None


def attribute_path(value, path):
    """``value`` followed along ``get_attr``'s path (map keys, list indexes); None off it."""
    for step in path:
        try:
            value = value[step if not isinstance(value, list) else int(step)]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return value


def names_in(values, resource_names):
    """The entries of list ``values`` that are names of ``resource_names`` (Heat's
    ``act in self.stack`` on an alarm's actions)."""
    if not isinstance(values, list):
        return []
    return [v for v in values if isinstance(v, str) and v in resource_names]


class ResourcePlugin:
    """Base class: validation from the schema and do-nothing actions."""

    type_name = ""
    properties_schema = {}
    attributes_schema = {}
    allow_unknown_properties = False
    # A type Heat keeps for old templates but no longer lists or describes (HIDDEN).
    hidden = False
    # A child stack of this service is the backend: it follows the parent's
    # lock itself (no physical lock) and receives parameters from the parent.
    nested_stack = False
    # Its handle_<action> methods call the cloud driver and nothing else (no
    # database): the engine may run a batch's side by side on a remote cloud.
    cloud_calls_only = False
    # Replaced by every update of its stack, changed or not (Heat's UpdateWaitConditionHandle).
    replace_on_update = False
    # Attributes whose value is a signed URL (it acts with no token): the pages
    # show them to the stack's owner and admins only.
    signed_url_attributes = ()
    # ``{list property: attribute}``: an entry of the list that is the name of a resource
    # of the same stack stands for that attribute of it (Heat's alarms: an action naming
    # a scaling policy is its AlarmUrl). The resource waits for the resources it names so
    # (``implicit_depends_on``); the engine puts the values in before the properties are
    # validated (``stacks.plugins.resolved_properties``).
    named_resource_attributes = {}
    # The kind of object its physical id names, which the resource holds
    # (``stacks.ownership``); None: its physical id names nothing of its own.
    held_kind = None
    # The cloud of that object: None for the configured cloud's, ``heatweb`` for
    # heatweb's own (software configs and deployments).
    held_cloud = None
    # ``{property: kind}``: objects of other resources this one changes by existing (a
    # deployment runs on its server, an interface joins its router); refused while their
    # holder's stack is locked at level ``all``. A property only referring to an object
    # (a port's network, a server's image) is not listed.
    changes_objects = {}
    # ``{property: kind}``: objects whose description this resource's existence changes
    # though it does not change them (a subnet is listed by its network). With
    # ``changes_objects``: after this resource's create, update or delete, the resources
    # of the project holding such objects have their ``show`` attribute read again (a
    # pool's ``show`` lists the members made after it: Heat reads ``show`` live).
    shown_in = {}

    @classmethod
    def held_visible(cls, physical_id, *, project_id):
        """For a type holding heatweb's own objects (``held_cloud``): whether the object
        exists in ``project_id`` (None: in any project), for an adopt or ``external_id``."""
        return False
    # The keys its ``update_policy`` section may have ({key: Property}); none: a policy
    # is refused, as Heat does.
    update_policy_schema = {}

    def __init__(self, *, name, properties, context, physical_id=None, data=None,
                 resource_id=None, update_policy=None, stored_attributes=None):
        self.name = name
        # The attributes stored when its last action finished (what get_attr answers).
        self.stored_attributes = stored_attributes or {}
        # The validated update policy, given by the engine for a create or an update.
        self.update_policy = update_policy or {}
        self.properties = properties or {}
        self.context = context
        self.physical_id = physical_id
        self.data = data if data is not None else {}
        self.resource_id = resource_id
        # The template's metadata, resolved, given by the engine for a create or an update
        # (stored once it is done: Heat's ``metadata_get``); None otherwise.
        self.metadata = None

    @property
    def creation_key(self):
        """The key the engine gave this create, stored before ``handle_create`` runs.

        A create run again after its engine died gets the same key: a plugin
        passes it to its cloud, which tags the object with it and returns the
        object it already made instead of making a second.
        """
        return self.data.get(CREATION_KEY)

    # True while the create may be a rerun (its key was given out before this
    # attempt): the cloud must look for an object made with it first. The
    # engine sets it False on a first attempt, saving the cloud that look.
    creation_key_reused = True

    def signal_wakes(self):
        """Ids of waiting resources a signal to this one may complete (a wait condition's
        handle names its conditions); the engine looks at them at once."""
        return ()

    def waiting_reason(self, cookie):
        """What a pending action waits for, shown as the resource's status reason (or None)."""
        return None

    # What ``handle_lock``/``handle_unlock`` did to the physical object, in words, for
    # the resource's LOCK/UNLOCK event (None: nothing physical was locked).
    lock_note = None
    # The word for the physical lock the stack lock takes at level all ("locked" for a
    # server, "protected" for an image); None: the stack lock takes none here.
    physical_lock_word = None

    def wake_at(self, cookie):
        """When an unfinished action is to be looked at again (a time), or None: as the
        engine's backoff, or at once when a child stack finishes. A timed wait's end."""
        return cookie.get("until") if isinstance(cookie, dict) else None

    def physical_state(self):
        """The physical object as the cloud reports it now (``{label: value}``), for the
        pages; None for a resource without a cloud object."""
        return None

    def drift_pairs(self):
        """``{property: (expected, actual)}``: what the template set and what the cloud has
        now, for the properties this type can compare; None for a resource whose drift is
        not checked. Raises ``ResourceFailure`` when the physical object is gone."""
        return None

    def lock_held_before(self):
        """While the stack lock holds the object: was it locked (protected) before the
        stack lock? None when the stack lock holds nothing physical here."""
        return None

    # Schema ----------------------------------------------------------------------

    @classmethod
    def validate_update_policy(cls, raw, *, resource_name):
        """The typed ``update_policy`` (Heat's 400 for keys its schema lacks, bad values)."""
        return policy_values(cls.update_policy_schema, raw, resource_name=resource_name)

    @classmethod
    def validate_with_files(cls, properties, *, files, resource_name):
        """Checks that need the stack's ``files`` (a nested stack's template and the
        template resources it names); called after ``validate_properties`` when a
        stack is validated. Nothing by default."""

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        """Typed properties with defaults; StackValidationFailed in Heat's words otherwise."""
        where = f"Property error: resources.{resource_name}.properties"
        if not isinstance(raw, dict):
            raise StackValidationFailed(f"{where}: properties must be a mapping")
        out = {}
        for key, value in raw.items():
            prop = cls.properties_schema.get(key)
            if prop is None:
                if not cls.allow_unknown_properties:
                    raise StackValidationFailed(f"{where}: Unknown Property {key}")
                out[key] = value
                continue
            if value is None:
                continue
            try:
                out[key] = prop.coerce(value)
            except PropertyError as error:
                raise StackValidationFailed(f"{where}.{key}: {error}") from None
        for key, prop in cls.properties_schema.items():
            if key in out:
                continue
            if prop.required:
                raise StackValidationFailed(f"{where}: Property {key} not assigned")
            if prop.default is not None:
                out[key] = prop.default
        return out

    @classmethod
    def needs_replacement(cls, changed):
        """True when a changed property cannot be updated in place."""
        if cls.allow_unknown_properties and not cls.properties_schema:
            return False
        return any(not (cls.properties_schema.get(k) and cls.properties_schema[k].update_allowed)
                   for k in changed)

    @classmethod
    def needs_replacement_for(cls, old_properties, new_properties, changed):
        """The engine's update-or-replace question; plugins may look at the values."""
        return cls.needs_replacement(changed)

    # True for a type an update may act on though nothing of it changed
    # (``updates_unchanged``): a stack update then never settles it unlooked at.
    may_update_unchanged = False

    @classmethod
    def updates_unchanged(cls, properties):
        """True when a stack update runs this resource's update though none of its
        properties changed (Heat's ``_needs_update`` answering True: an external
        resource's ``always_update``)."""
        return False

    @classmethod
    def never_replaced(cls):
        """True when no property change can replace it (every property updates in place).

        The engine then gives a kept resource of this type no cleanup node
        in an update: there would be nothing to delete. A plugin that
        decides replacement itself is never assumed to be one.
        """
        base = ResourcePlugin.__dict__
        if cls.replace_on_update:
            return False
        if cls.needs_replacement.__func__ is not base["needs_replacement"].__func__ or \
                cls.needs_replacement_for.__func__ is not base["needs_replacement_for"].__func__:
            return False
        if cls.allow_unknown_properties and not cls.properties_schema:
            return True
        return not cls.allow_unknown_properties and \
            all(p.update_allowed for p in cls.properties_schema.values())

    @classmethod
    def implicit_depends_on(cls, name, definitions, properties_of):
        """Names of resources of the same stack this one waits for though no function
        refers to them (Heat's ``add_dependencies``: a port waits for its network's
        subnets). ``definitions``: the stack's {name: ResourceDefinition};
        ``properties_of(name)``: a resource's properties resolved as Heat resolves them
        before anything exists (a ``get_resource`` is the resource's name, a
        ``get_attr`` None; {} when they cannot be resolved). An edge that would
        make a cycle is not added. By default: the resources its
        ``named_resource_attributes`` lists name."""
        if not cls.named_resource_attributes:
            return ()
        properties = properties_of(name)
        return sorted({entry for key in cls.named_resource_attributes
                       for entry in names_in(properties.get(key), definitions)})

    @classmethod
    def member_definitions(cls, properties):
        """``{name: (type, properties)}`` of resources its child stack will hold, validated
        with the parent (an unknown type or bad property is then a 400, not a failed create).
        """
        return {}

    @classmethod
    def schema_doc(cls):
        return {
            "resource_type": cls.type_name,
            "description": (cls.__doc__ or "").strip(),
            "properties": {k: p.doc() for k, p in cls.properties_schema.items()},
            "attributes": {k: {"description": a.description, **({"type": a.type} if a.type else {})}
                           for k, a in cls.attributes_schema.items()},
            "support_status": {"status": "SUPPORTED", "version": None, "message": None,
                               "previous_status": None},
        }

    # Actions -------------------------------------------------------------------------

    def handle_create(self):
        return None

    def check_create_complete(self, cookie):
        return waited(cookie)

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        return None

    def check_update_complete(self, cookie):
        return waited(cookie)

    def handle_delete(self):
        return None

    def check_delete_complete(self, cookie):
        return waited(cookie)

    def handle_suspend(self):
        return None

    def check_suspend_complete(self, cookie):
        return waited(cookie)

    def handle_resume(self):
        return None

    def check_resume_complete(self, cookie):
        return waited(cookie)

    def handle_check(self):
        return None

    def handle_cancel(self, action, cookie):
        """The stack stopped (timed out, cancelled) while ``action`` waited on ``cookie``
        (Heat's ``handle_<action>_cancel``)."""

    def prepare_for_replace(self):
        """Before its replacement is created: hand over what the replacement takes (Heat's hook)."""

    def check_check_complete(self, cookie):
        return waited(cookie)

    # Snapshot, restore and adopt (Heat's hooks) ---------------------------------------

    def handle_snapshot(self):
        """Start saving what a restore needs (in ``data``: the snapshot's resource data)."""
        return None

    def check_snapshot_complete(self, cookie):
        return True

    def handle_delete_snapshot(self, resource_data):
        """A snapshot holding this resource's ``resource_data`` is deleted: free its backups."""

    @classmethod
    def restore_properties(cls, properties, resource_data):
        """The template properties a restore from ``resource_data`` gives the resource."""
        return properties

    def handle_adopt(self):
        """Take over the physical object given in the adopt data (already ``physical_id``)."""
        return None

    def check_adopt_complete(self, cookie):
        return True

    def handle_lock(self):
        return None

    def check_lock_complete(self, cookie):
        return True

    def handle_unlock(self):
        return None

    def check_unlock_complete(self, cookie):
        return True

    def physical_lock_state(self):
        """What the cloud says of this resource's physical lock (stack lock level ``all``).

        ``{"object": "server <id>", "locked": bool, "detail": str}``, or None
        for a resource that takes no physical lock. Raises ``ResourceFailure``
        when the object is gone. Asked by the lock preview and by the engine
        verifying that a locked stack's physical locks are still in place.
        """
        return None

    # Reference and attributes ------------------------------------------------------------

    def get_reference_id(self):
        return self.physical_id or self.name

    def get_attribute(self, name, *path):
        return None

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        """``get_attr: [resource, name, *path]`` from ``attrs`` (what ``attributes()`` stored).

        A plugin whose attributes are derived on reading (a resource group's
        ``resource.N``) overrides it; None when there is no such value.
        """
        return attribute_path(attrs.get(name), path)

    @classmethod
    def shown_metadata(cls, res):
        """The resource's metadata as Heat shows it: the template's, resolved and stored
        by the engine; a wait condition handle adds the signals it received."""
        return res.rsrc_metadata or {}

    @classmethod
    def shown_attributes(cls, attrs):
        """The attributes a resource show lists, from ``attrs`` (what ``attributes()``
        stored); a group derives its members' on reading."""
        return attrs

    def attributes(self):
        """Every attribute's current value; the engine stores them after each action."""
        values = {}
        for name in self.attributes_schema:
            value = self.get_attribute(name)
            if value is not UNRESOLVED:
                values[name] = value
        return values
