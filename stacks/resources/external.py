"""``external_id``: a resource that adopts an existing cloud object instead of making one.

As Heat's HOT ``external_id``: the properties are not used, the create only
checks that the object exists (``Invalid external resource: Resource <id>
(<type>) can not be found.`` otherwise), ``get_resource`` answers the
external id and attributes come from the object. heatweb never deletes,
suspends, resumes or locks it: it is not the stack's. Adding, changing or
removing ``external_id`` in an update is refused as Heat refuses it.
"""
from heatweb.exceptions import InvalidTemplate, NotSupported
from stacks.resources.base import ResourceFailure

# The one property an external resource stores: the update sees a change when
# ``external_id`` is added, changed or removed (and refuses it).
EXTERNAL_ID = "__external_id__"


def refused_change(old_properties, new_properties, *, resource_name, type_name):
    """Heat's refusal (NotSupported) when an update adds, changes or removes
    ``external_id``; None otherwise."""
    if old_properties.get(EXTERNAL_ID) == new_properties.get(EXTERNAL_ID):
        return None
    return NotSupported(feature=f"Update to property external_id of {resource_name} "
                                f"({type_name})")


def check_external(external_id, *, resource_name, type_name, depends_on):
    """The external id as a string; Heat's refusals for a bad one or an explicit dependency."""
    if not isinstance(external_id, str) or not external_id:
        raise InvalidTemplate(f"Resource {resource_name}: external_id must be a string")
    if depends_on:
        raise InvalidTemplate(f"Invalid dependency with external {type_name} resource: "
                              f"{external_id}")
    return external_id


def external_plugin(cls, external_id):
    """``cls`` adopting ``external_id``: its reads, none of its writes."""

    class External(cls):
        __doc__ = cls.__doc__

        @classmethod
        def validate_properties(cls_, raw, *, resource_name):
            return {EXTERNAL_ID: external_id}

        @classmethod
        def needs_replacement_for(cls_, old_properties, new_properties, changed):
            return False

        @classmethod
        def never_replaced(cls_):
            return True

        def handle_create(self):
            self.physical_id = external_id
            try:
                self.handle_check()
            except ResourceFailure:
                raise ResourceFailure(f"Invalid external resource: Resource {external_id} "
                                      f"({cls.type_name}) can not be found.") from None

        def check_create_complete(self, cookie):
            return True

        def handle_update(self, new_properties, changed):
            refused = refused_change(self.properties, new_properties, resource_name=self.name,
                                     type_name=cls.type_name)
            if refused:
                raise ResourceFailure(refused.message)
            self.properties = new_properties

        def check_update_complete(self, cookie):
            return True

        def handle_delete(self):
            return None  # never deleted: the object is not the stack's

        def check_delete_complete(self, cookie):
            return True

        def handle_suspend(self):
            return None

        def check_suspend_complete(self, cookie):
            return True

        def handle_resume(self):
            return None

        def check_resume_complete(self, cookie):
            return True

        def check_check_complete(self, cookie):
            return True

        def prepare_for_replace(self):
            return None

        def handle_lock(self):
            self.lock_note = f"{external_id} is an external resource: not locked"

        def handle_unlock(self):
            return None

        def physical_lock_state(self):
            return None

        physical_lock_word = None

    External.__name__ = External.__qualname__ = f"External{cls.__name__}"
    External.type_name = cls.type_name
    External.adopted_from = cls
    External.external_id = external_id
    return External
