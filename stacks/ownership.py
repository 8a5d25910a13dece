"""One owner per cloud object: which resource holds it, taking one over, and the lock
reaching it.

A resource holds the object its physical id names when its type says what kind of
object that is (``held_kind`` on the plugin class; ``held_cloud`` for heatweb's own
objects, software configs and deployments). The hold is a ``CloudHold`` row, unique
per cloud, kind and physical id:

- the engine records it in the transaction that stores the physical id (a create,
  a replacement's create, an ``external_id``), an adopt when it stores its rows, and
  releases it when the resource's delete completes (deleted, retained, replaced and
  cleaned up); an abandon removes the rows and their holds;
- the engine deletes an object only through the resource that holds it;
- an adopt or an ``external_id`` naming an object another resource holds is refused
  (``ObjectHeld``, 409), and so is one the caller's project cannot see;
- a change to a held object from outside its stack (another stack's resource: a
  software deployment to the server, an attachment, a router interface ...; or an
  API: ``/software_deployments``) is refused while the holder's stack is locked at
  level ``all``; a software config held by a locked stack's resource cannot be
  deleted at any level.
"""
import re

from django.db import connections, router
from django.utils import timezone
from django.db.models import Q

from heatweb.exceptions import Conflict, EntityNotFound, StackLocked
from heatweb.tokens import is_cloud_admin
from stacks.cloud import HEATWEB_OBJECTS, cloud_key
from stacks.cloud.driver import CloudError
from stacks.cloud.kinds import kind_of
from stacks.models import CloudHold
from stacks.models import states as st
from stacks.resources.base import ResourcePlugin

# A physical id as the clouds here make them (a UUID, with or without dashes): a value
# that looks like one is not looked up by name.
_ID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                 r"[0-9a-fA-F]{12}$")
# The actions that change what an object of another resource is (a deployment run on a
# server, an interface added to a router): CHECK, LOCK, UNLOCK, SNAPSHOT and ADOPT do not.
CHANGING_ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")


class ObjectHeld(Conflict):
    """The cloud object is held by another resource: it cannot be taken over."""


def held_key(plugin_cls):
    """``(cloud, kind)`` of the object a resource of this class holds by its physical id,
    or None for a type whose physical id names no object of its own."""
    kind = getattr(plugin_cls, "held_kind", None)
    if not kind:
        return None
    return getattr(plugin_cls, "held_cloud", None) or cloud_key(), kind


def _cloud_of(kind):
    """The cloud key under which an object of ``kind`` is held (heatweb's own, or the
    configured cloud's)."""
    return HEATWEB_OBJECTS if kind in ("software_config", "software_deployment") \
        else cloud_key()


def label(kind):
    """How an error names a kind ("server", "software config", "router interface")."""
    if kind in ("server", "image"):
        return kind
    try:
        return kind_of(kind).label.lower()
    except CloudError:
        return kind.replace("_", " ")


# Holding and letting go -----------------------------------------------------------------

def holds_changed(res, plugin):
    """Whether the plugin's physical id is not the one the resource row holds now."""
    return held_key(type(plugin)) is not None and \
        (plugin.physical_id or "") != (res.physical_resource_id or "")


def hold_take(res, plugin_cls, physical_id):
    """Record that resource ``res`` holds ``physical_id`` (letting go of any other object
    it held); ``ObjectHeld`` when another resource holds it. Call it in the transaction
    that stores the physical id."""
    key = held_key(plugin_cls)
    if key is None:
        return
    cloud, kind = key
    physical_id = str(physical_id or "")
    if res.physical_resource_id:  # it held another object before
        CloudHold.objects.filter(resource_id=res.pk).exclude(
            cloud=cloud, kind=kind, physical_id=physical_id).delete()
    if not physical_id:
        return
    if _hold_insert(cloud, kind, physical_id, res):
        return
    holder = CloudHold.objects.filter(cloud=cloud, kind=kind, physical_id=physical_id) \
        .values_list("resource_id", flat=True).first()
    if holder != res.pk:
        raise ObjectHeld(f"The {label(kind)} {physical_id} is held by another resource; "
                         f"a resource takes over only an object no other resource holds.")


def holds_take_many(claims):
    """``hold_take`` for many resources, ``[(res, plugin_cls, physical_id), ...]``: those
    that held nothing before in one INSERT (a batch of creates), the others one by one;
    ``ObjectHeld`` as ``hold_take`` when another resource holds one of the objects.
    Call it in the transaction that stores their physical ids."""
    fresh = []
    for res, plugin_cls, physical_id in claims:
        key = held_key(plugin_cls)
        if key is None or not physical_id or res.physical_resource_id:
            hold_take(res, plugin_cls, physical_id)
        else:
            fresh.append((*key, str(physical_id), res))
    if not fresh or _holds_insert(fresh) == len(fresh):
        return
    # Some were held already: by the same resource (a create run again after a crash)
    # or by another one, which refuses it as hold_take does.
    claimed = {(cloud, kind, physical_id): res.pk for cloud, kind, physical_id, res in fresh}
    held = Q()
    for cloud, kind, physical_id in claimed:
        held |= Q(cloud=cloud, kind=kind, physical_id=physical_id)
    for cloud, kind, physical_id, holder in CloudHold.objects.filter(held).values_list(
            "cloud", "kind", "physical_id", "resource_id"):
        if holder != claimed[(cloud, kind, physical_id)]:
            raise ObjectHeld(f"The {label(kind)} {physical_id} is held by another resource; "
                             f"a resource takes over only an object no other resource holds.")


def _hold_insert(cloud, kind, physical_id, res):
    """True when the row was added (the object was free), False when the unique key
    found a holder."""
    return _holds_insert([(cloud, kind, physical_id, res)]) == 1


def _holds_insert(rows):
    """One ``INSERT ... ON CONFLICT DO NOTHING`` of ``[(cloud, kind, physical_id, res)]``:
    the number of rows added (the objects that were free). One round trip, and no
    savepoint in the caller's transaction (an INSERT that fails would need one to go on)."""
    connection = connections[router.db_for_write(CloudHold)]
    quote = connection.ops.quote_name
    fields = [CloudHold._meta.get_field(name) for name in
              ("cloud", "kind", "physical_id", "resource", "stack", "since")]
    now = timezone.now()
    params = [field.get_db_prep_save(value, connection)
              for cloud, kind, physical_id, res in rows
              for field, value in zip(fields, (cloud, kind, physical_id, res.pk, res.stack_id,
                                               now))]
    row = f"({', '.join(['%s'] * len(fields))})"
    sql = (f"INSERT INTO {quote(CloudHold._meta.db_table)} "
           f"({', '.join(quote(field.column) for field in fields)}) "
           f"VALUES {', '.join([row] * len(rows))} ON CONFLICT DO NOTHING")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def holds_release(res):
    """``res`` lets go of what it holds (its delete completed: deleted or retained)."""
    CloudHold.objects.filter(resource_id=res.pk).delete()


def holds_release_many(resource_ids):
    """``holds_release`` for many resources, in one statement."""
    if resource_ids:
        CloudHold.objects.filter(resource_id__in=list(resource_ids)).delete()


def holds_object(res, plugin_cls, *, batch=None):
    """Whether resource ``res`` holds the object its physical id names (True for a type
    that holds none, or a resource without a physical id: nothing to ask).

    ``batch``: the ids of the resources of the caller's batch (``res`` among them); the
    holds of them all are then read in one query, on the first ask, and kept in the
    ``batch`` object for the others (``held_in_batch``)."""
    key = held_key(plugin_cls)
    if key is None or not res.physical_resource_id:
        return True
    cloud, kind = key
    if batch is not None:
        return (res.pk, cloud, kind, res.physical_resource_id) in batch.holds()
    return CloudHold.objects.filter(cloud=cloud, kind=kind, resource_id=res.pk,
                                    physical_id=res.physical_resource_id).exists()


class BatchHolds:
    """The holds of a batch's resources, read in one query when first asked for.

    Read after the batch's rows: a hold of one of them changes only under its lock, and
    a lock taken here is conditional on the row as read (``atomic_key``), so for every
    resource this batch locks the holds read are its current ones."""

    def __init__(self, resource_ids):
        self.resource_ids, self._holds = list(resource_ids), None

    def holds(self):
        if self._holds is None:
            self._holds = set(CloudHold.objects.filter(resource_id__in=self.resource_ids)
                              .values_list("resource_id", "cloud", "kind", "physical_id"))
        return self._holds


def holds_record_rows(stack, plugins):
    """Record the holds of ``stack``'s resource rows that have a physical id (an adopt's
    seeded rows), in the caller's transaction; ``ObjectHeld`` for one held already."""
    for res in stack.resources.exclude(physical_resource_id=""):
        plugin_cls = plugins.get(res.name)
        if plugin_cls is not None:
            hold_take(res, plugin_cls, res.physical_resource_id)


# Taking over: adopt and external_id ------------------------------------------------------

def _visible(cloud, plugin_cls, kind, physical_id, *, project_id):
    if getattr(plugin_cls, "held_cloud", None) == HEATWEB_OBJECTS:
        return plugin_cls.held_visible(physical_id, project_id=project_id)
    try:
        return cloud.visible_to(kind, physical_id, project_id=project_id)
    except CloudError:
        return False


def take_over_refusal(wanted, *, cloud, user, project_id, stack_id=None):
    """The refusal of taking over objects, or None.

    ``wanted``: ``[(resource name, plugin class, physical id)]``. Each object
    must be one the caller can see (``cloud`` acts as the caller: their own
    token on a real cloud; the object's project on the simulated one) and one
    no resource of another stack holds. A 404 for one the caller cannot see
    (as for another project's id), a 409 ``ObjectHeld`` for one held, naming
    the holding stack only when the caller may see it.
    """
    admin = user is not None and is_cloud_admin(user)
    wanted = [(name, cls, *held_key(cls), str(physical_id))
              for name, cls, physical_id in wanted if physical_id and held_key(cls)]
    # Every hold asked for in one query, not one per resource of the adopt.
    held = {(h.cloud, h.kind, h.physical_id): h for h in CloudHold.objects.filter(
        physical_id__in=[w[4] for w in wanted]).exclude(stack_id=stack_id)
        .select_related("stack", "resource")}
    for name, plugin_cls, holder_cloud, kind, physical_id in wanted:
        if not _visible(cloud, plugin_cls, kind, physical_id,
                        project_id=None if admin else project_id):
            return EntityNotFound(entity=label(kind), name=physical_id)
        hold = held.get((holder_cloud, kind, physical_id))
        if hold is not None:
            return ObjectHeld(_held_message(hold, kind, physical_id, name,
                                            seen=admin or hold.stack.project_id == project_id))
    return None


def taken_over(plugins, seed):
    """``[(resource name, plugin class, physical id)]`` of the objects a new definition's
    resources take over: an adopt's (``seed``: row fields by name) and ``external_id``s."""
    found = []
    for name, cls in plugins.items():
        external_id = getattr(cls, "external_id", None)
        given = (seed or {}).get(name, {}).get("physical_resource_id")
        if external_id or given:
            found.append((name, cls, external_id or given))
    return found


def _held_message(hold, kind, physical_id, name, *, seen):
    whose = f"resource {hold.resource.name} of stack {hold.stack.name}" if seen \
        else "a resource of another stack"
    return (f"Resource {name}: the {label(kind)} {physical_id} is held by {whose}; an object "
            f"another resource holds cannot be adopted or taken as an external resource.")


# The lock reaching the object -----------------------------------------------------------

def _values(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _values(item)
    elif isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        yield str(value)


def _named_objects(mapping, properties):
    """``[(kind, value)]`` of the objects ``properties`` name by ``{property: kind}``."""
    return [(kind, value) for prop, kind in (mapping or {}).items()
            for value in _values((properties or {}).get(prop))]


def changed_objects(plugin_cls, properties):
    """``[(kind, value)]``: the objects of other resources a resource of this class changes
    by existing (``changes_objects``: property name -> kind), with their given names or ids."""
    return _named_objects(getattr(plugin_cls, "changes_objects", None), properties)


def described_objects(plugin_cls, properties):
    """``[(kind, value)]``: the objects whose description a resource of this class changes
    by existing: those it changes (``changes_objects``) and those listing it
    (``shown_in``: property name -> kind; a subnet is listed by its network)."""
    return changed_objects(plugin_cls, properties) + \
        _named_objects(getattr(plugin_cls, "shown_in", None), properties)


def holders_in_project(objects, *, project_id):
    """Ids of the resources, in stacks of ``project_id``, holding any of ``objects``
    (``[(kind, physical id)]``) in the configured cloud."""
    if not objects:
        return set()
    wanted = Q()
    for kind, value in objects:
        wanted |= Q(cloud=_cloud_of(kind), kind=kind, physical_id=value)
    return set(CloudHold.objects.filter(wanted, stack__project_id=project_id)
               .values_list("resource_id", flat=True))


def _holds_of(cloud, kind, value, *, cloud_driver):
    holds = list(CloudHold.objects.filter(cloud=cloud, kind=kind, physical_id=value)
                 .select_related("stack"))
    if holds or _ID.match(value) or cloud_driver is None or cloud == HEATWEB_OBJECTS:
        return holds
    try:  # a name: the object it names
        found = cloud_driver.object_find(kind, value)
    except (CloudError, NotImplementedError, AttributeError):
        return []
    return list(CloudHold.objects.filter(cloud=cloud, kind=kind, physical_id=str(found))
                .select_related("stack"))


def _tree_of(stack):
    """Ids of ``stack`` and its ancestors: a lock held by one of them is the acting stack's
    own (a nested deployment to its parent's server, deleted with a LOCK_FAILED parent)."""
    ids, current = set(), stack
    while current is not None and current.pk not in ids:
        ids.add(current.pk)
        current = current.parent if current.parent_id else None
    return ids


def change_refusal(objects, *, stack=None, project_id=None, user=None, cloud_driver=None):
    """The StackLocked refusal when one of ``objects`` (``[(kind, name or id)]``) is held
    by a resource of a stack locked at level ``all`` (by a lock not of the acting
    ``stack``'s own tree), else None.

    Names the holder, its lock's level and reason when the caller (``project_id``,
    ``user``) may see the holder's stack; otherwise only that a lock holds it.
    """
    admin = user is not None and is_cloud_admin(user)
    own = None
    for kind, value in objects:
        cloud = _cloud_of(kind)
        for hold in _holds_of(cloud, kind, value, cloud_driver=cloud_driver):
            if stack is not None and hold.stack.project_id != stack.project_id and \
                    not (stack.user_id and is_cloud_admin(stack.user)):
                # Another project's object, as the real cloud answers a member's request.
                return EntityNotFound(entity=label(kind), name=value)
            locker = st.lock_holder(hold.stack)
            if locker is None or (locker.lock_level or "all") != "all":
                continue
            own = own if own is not None else (_tree_of(stack) if stack is not None else set())
            if hold.stack_id in own or locker.pk in own:
                continue
            return StackLocked(_locked_message(hold, locker, kind, value,
                                               seen=admin or hold.stack.project_id == project_id))
    return None


def _locked_message(hold, locker, kind, value, *, seen):
    if not seen:
        return (f"The {label(kind)} {value} belongs to a stack locked at level all; it "
                f"cannot be changed until that stack is unlocked.")
    return f"The {label(kind)} {value} belongs to stack {hold.stack.name}: " \
           f"{locker.lock_message()}"


def action_change_refusal(res, plugin, *, action, properties, stack):
    """The refusal of ``action`` of resource ``res`` when it changes an object held by a
    stack locked at level ``all`` (see ``change_refusal``), else None. An action the
    plugin's type does nothing for (the base class's ``handle_<action>``) changes nothing."""
    cls = type(plugin)
    if action not in CHANGING_ACTIONS or not getattr(cls, "changes_objects", None):
        return None
    if action != "CREATE" and not res.physical_resource_id:
        return None  # it never made anything: nothing of another's to change
    name = f"handle_{action.lower()}"
    if getattr(cls, name, None) is getattr(ResourcePlugin, name):
        return None
    objects = changed_objects(cls, properties)
    if action == "UPDATE":
        objects += changed_objects(cls, res.properties_data)
    if not objects:
        return None
    return change_refusal(objects, stack=stack, project_id=stack.project_id,
                          cloud_driver=plugin.context.cloud if plugin.context else None)


def object_holder_stack(kind, physical_id):
    """The stack of the resource holding ``kind`` object ``physical_id`` here, or None."""
    cloud = _cloud_of(kind)
    hold = CloudHold.objects.filter(cloud=cloud, kind=kind, physical_id=str(physical_id)) \
        .select_related("stack").first()
    return hold.stack if hold is not None else None


def config_delete_refusal(config_id, *, project_id, user=None):
    """StackLocked when a resource of a locked stack (at any level: a config is part of the
    stack's own definition) holds software config ``config_id``, else None."""
    stack = object_holder_stack("software_config", config_id)
    if stack is None:
        return None
    locker = st.lock_holder(stack)
    if locker is None:
        return None
    seen = (user is not None and is_cloud_admin(user)) or stack.project_id == project_id
    if not seen:
        return StackLocked(f"The software config {config_id} belongs to a locked stack; it "
                           f"cannot be deleted until that stack is unlocked.")
    return StackLocked(f"The software config {config_id} belongs to stack {stack.name}: "
                       f"{locker.lock_message()}")


__all__ = ["BatchHolds", "CHANGING_ACTIONS", "ObjectHeld", "action_change_refusal",
           "change_refusal", "changed_objects", "config_delete_refusal", "hold_take",
           "held_key", "holds_changed", "holds_object", "holds_record_rows", "holds_release",
           "object_holder_stack", "take_over_refusal", "taken_over"]
