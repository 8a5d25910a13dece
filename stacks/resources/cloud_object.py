"""The base of resource types that are one generic cloud object (``stacks.cloud.kinds``).

A type declares its schema (Heat's properties and attributes, with
``update_allowed`` saying what updates in place), its ``kind``, and how
properties become the kind's fields (``field_names``: a property not listed
keeps its name; one mapped to None is not sent). Create, update in place,
delete, check and attributes are written once here, on the driver's
``object_create/get/update/delete``; a type adds code only where it differs
(``cloud_fields`` for a shape the service wants, ``get_attribute`` for a
derived attribute). Objects are created and deleted synchronously, found
again by their creation key after a crash (where the service keeps it), and
reported by ``check`` when deleted outside heatweb. None of these objects
has a physical lock: stack lock level ``all`` protects them only through
heatweb's own refusals.
"""
import time

from heatweb.exceptions import StackValidationFailed
from stacks.cloud.kinds import kind_of
from stacks.resources.base import ResourceFailure, ResourcePlugin
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.schema import Attribute, Property, Range


def prop(kind, description, **kwargs):
    return Property(kind, description=description, **kwargs)


def attributes(*names, **described):
    """Attributes named as the object's fields, plus ``show`` (everything the cloud says)."""
    out = {name: Attribute(f"The object's {name.replace('_', ' ')}.") for name in names}
    out.update({k: Attribute(v) for k, v in described.items()})
    out["show"] = Attribute("Everything the cloud says of the object.")
    return out


VALUE_SPECS = "value_specs"
CONFLICT_SECONDS = 60  # how long a delete refused with a conflict (409) is tried again


def _comparable(value):
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (
        isinstance(value, dict) and all(isinstance(v, scalar) for v in value.values()))


def _same(expected, actual):
    """Equal as the cloud keeps it (a service may answer "1" for 1, or a map's values as
    strings)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and {k: str(v) for k, v in expected.items()} == \
            {k: str(v) for k, v in actual.items()}
    return expected == actual or str(expected) == str(actual)


def one_of(props, names, *, resource_name):
    """Heat's check for properties where exactly one of ``names`` must be given."""
    given = [n for n in names if props.get(n) not in (None, "")]
    where = f"Property error: resources.{resource_name}.properties"
    if not given:
        raise StackValidationFailed(f"{where}: At least one of the following properties must "
                                    f"be specified: {', '.join(names)}.")
    if len(given) > 1:
        raise StackValidationFailed(f"{where}: Cannot define the following properties at the "
                                    f"same time: {', '.join(given)}.")


class _OwnKind:
    """``held_kind`` of a cloud object type: the object of its ``kind`` it made."""

    def __get__(self, instance, owner):
        return owner.kind or None


class CloudObjectResource(ResourcePlugin):
    """Base of the plugins whose physical resource is one object of a cloud ``kind``."""

    held_kind = _OwnKind()
    cloud_calls_only = True
    kind = ""
    # property name -> field name (a property not listed keeps its name; None: not sent)
    field_names = {}
    # attribute name -> field name (an attribute not listed is the field of its name)
    attribute_fields = {}
    # False: the kind has no name (a rule, an interface, an assignment)
    named = True
    # The Neutron extension the type needs (Heat's required_service_extension): on a
    # cloud without it, validation answers ResourceTypeUnavailable, as Heat does.
    required_extension = None
    # (Heat's client name, catalog service type) of a service a cloud may lack (Cinder):
    # without it in the catalog, validation answers ResourceTypeUnavailable, as Heat does.
    required_service = None
    # Groups of properties of which exactly one is given (Heat's ``network`` or its
    # hidden ``network_id``, ...), checked at validation.
    exactly_one_of = ()

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        for names in cls.exactly_one_of:
            one_of(props, names, resource_name=resource_name)
        return props

    @property
    def cloud(self):
        return self.context.cloud

    def cloud_fields(self, props, names=None):
        """The fields sent to the cloud for ``props`` (only ``names`` of them when given)."""
        wanted = names if names is not None else props.keys()
        out = {}
        for key in wanted:
            if key in ("name", VALUE_SPECS) or props.get(key) is None:
                continue
            field = self.field_names.get(key, key)
            if field is not None:
                out[field] = props[key]
        out.update(props.get(VALUE_SPECS) or {})
        return out

    def object_name(self, props):
        """The name given, or one made from the stack's and the resource's (Heat's way; kinds
        whose names are unique get a suffix, so a replacement can exist beside the original)."""
        if props.get("name"):
            return props["name"]
        name = f"{self.context.stack_name}-{self.name}"
        if kind_of(self.kind).unique_name and self.creation_key:
            name += f"-{str(self.creation_key)[-8:]}"
        return name

    def handle_create(self):
        created = _cloud_call(
            self.cloud.object_create, self.kind, project_id=self.context.project_id,
            name=self.object_name(self.properties) if self.named else None,
            creation_key=self.creation_key, find_first=self.creation_key_reused,
            **self.cloud_fields(self.properties))
        # The create's own answer, when the driver gives it and the create is complete
        # once made (the base class's check): the attributes stored at the create's end
        # come from it (no read of the object just made).
        if type(self).check_create_complete is ResourcePlugin.check_create_complete:
            self.created = getattr(created, "described", None)
        self.physical_id = str(created) if created is not None else created

    def existing(self):
        found = _cloud_call(self.cloud.object_get, self.kind, self.physical_id)
        if found is None:
            raise ResourceFailure(f"The {kind_of(self.kind).label.lower()} {self.physical_id} "
                                  f"could not be found (deleted outside heatweb)")
        return found

    def handle_update(self, new_properties, changed):
        self.existing()
        fields = self.cloud_fields(new_properties, names=[k for k in changed if k != "name"])
        for key in changed:  # a property removed is reset in the cloud
            field = self.field_names.get(key, key)
            if new_properties.get(key) is None and key not in ("name", VALUE_SPECS) and field:
                fields[field] = None
        if "name" in changed and self.named:
            fields["name"] = self.object_name(new_properties)
        if fields:
            _cloud_call(self.cloud.object_update, self.kind, self.physical_id, **fields)
        self.properties = new_properties

    def handle_delete(self):
        if self.physical_id:
            return self._delete_or_retry({"conflict_until": time.time() + CONFLICT_SECONDS})
        return None

    def _delete_or_retry(self, cookie):
        """The delete's cookie: ``gone`` when the cloud's answer says the object is gone
        (no read after it), ``conflict`` when it refused with a conflict, which Heat tries
        again on later polls for a while (a subnet whose last port a server's delete is
        still releasing); else the object is read until it is gone."""
        try:
            gone = _cloud_call(self.cloud.object_delete, self.kind, self.physical_id)
        except ResourceFailure as failure:
            if "(HTTP 409)" not in str(failure) or time.time() > cookie["conflict_until"]:
                raise
            return {**cookie, "conflict": str(failure)}
        return {"gone": True} if gone else None

    def check_delete_complete(self, cookie):
        if isinstance(cookie, dict) and cookie.get("conflict"):
            cookie = self._delete_or_retry(cookie)
            if isinstance(cookie, dict) and cookie.get("conflict"):
                return False
        if isinstance(cookie, dict) and cookie.get("gone"):
            return True
        return not self.physical_id or \
            _cloud_call(self.cloud.object_get, self.kind, self.physical_id) is None

    def handle_check(self):
        self.existing()

    def physical_state(self):
        found = self.cloud.object_get(self.kind, self.physical_id) if self.physical_id \
            else None
        if found is None:
            return {"status": "not found"}
        return {"status": found.get("status") or "present"}

    def drift_pairs(self):
        """The given scalar (and flat map) properties against the object's fields, by the
        kind's own names; fields naming other objects, lists and write-only fields (a
        password, absent from the answer) are not compared."""
        if not self.physical_id:
            return None
        found = _cloud_call(self.cloud.object_get, self.kind, self.physical_id)
        if found is None:
            raise ResourceFailure(f"The {kind_of(self.kind).label.lower()} "
                                  f"{self.physical_id} does not exist")
        refs = {path.split(".")[0].split("[")[0] for path in kind_of(self.kind).refs}
        pairs = {}
        for key, expected in self.properties.items():
            field = self.field_names.get(key, key)
            if key == VALUE_SPECS or not field or field in refs or field not in found or \
                    not _comparable(expected) or (key == "name" and not self.named):
                continue
            if key == "name":
                expected = self.object_name(self.properties)
            actual = found[field]
            pairs[key] = (expected, expected if _same(expected, actual) else actual)
        return pairs

    created = None  # the create's answer (handle_create), while this plugin lives

    def _described(self):
        if not self.physical_id or not self.context:
            return None
        if self.created is not None and str(self.created.get("id")) == str(self.physical_id):
            return self.created
        return self.cloud.object_get(self.kind, self.physical_id)

    def attribute_value(self, found, name):
        """One attribute from the object as the cloud describes it."""
        if name == "show":
            return found
        return found.get(self.attribute_fields.get(name, name))

    def get_attribute(self, name, *path):
        found = self._described()
        return None if found is None else self.attribute_value(found, name)

    def attributes(self):
        """Every attribute from one ``object_get`` (not one call per attribute)."""
        found = self._described()
        return {name: None if found is None else self.attribute_value(found, name)
                for name in self.attributes_schema}


class QuotaResource(CloudObjectResource):
    """A project's quota set of one service (admin only), as Heat's ``*::Quota`` types.

    The limits update in place; deleting the resource reverts them to the
    service's defaults. At least one limit besides ``project`` is given, as
    Heat requires. A type declares ``kind`` and ``limits`` (name: what it counts).
    """

    named = False
    limits = {}
    held_kind = None  # its id is the project's: many stacks may set one project's quota

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.limits:
            cls.properties_schema = {
                "project": prop("String", "Name or id of the project to set the quota for.",
                                required=True),
                **{name: prop("Integer", f"Quota for {what}. Setting the value to -1 removes "
                              f"the limit.", constraints=(Range(-1, None),),
                              update_allowed=True)
                   for name, what in cls.limits.items()}}
            cls.attributes_schema = attributes()

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        props = super().validate_properties(raw, resource_name=resource_name)
        if not any(props.get(name) is not None for name in cls.limits):
            raise StackValidationFailed(
                f"Property error: resources.{resource_name}.properties: At least one of the "
                f"following properties must be specified: {', '.join(sorted(cls.limits))}.")
        return props

    def check_delete_complete(self, cookie):
        return True  # the quota set reverted to the defaults stays readable: done
