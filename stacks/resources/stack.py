"""Nested stacks: ``OS::Heat::Stack`` and template resources.

Their backend is this service's own stack lifecycle: creating the resource
creates a child stack, and the resource follows the child's state.
"""
import hashlib

import yaml

from django.conf import settings

from heatweb.exceptions import RequestLimitExceeded, StackValidationFailed
from stacks.models import Stack
from stacks.resources.base import ResourcePlugin
from stacks.resources.registry import register
from stacks.resources.nested_stacks import nested
from stacks.resources.schema import Attribute, Property


def members_within_budget(count, *, resource_name, prop):
    """Refuse, at validation, a group whose members alone exceed the stack tree's budget.

    The whole tree is counted when the child stack is made; a count far
    past it (10**9) must not get that far: making its template alone
    would not end.
    """
    limit = settings.HEATWEB["MAX_RESOURCES_PER_STACK"]
    if isinstance(count, int) and count > limit:
        raise RequestLimitExceeded(
            f"Maximum resources per stack exceeded: resources.{resource_name}.properties."
            f"{prop} is {count} (at most {limit}).")


class ChildStackResource(ResourcePlugin):
    """Shared two-phase actions of resources backed by a child stack."""

    nested_stack = True

    def _template(self):
        raise NotImplementedError

    def _parameters(self):
        raise NotImplementedError

    def _files(self):
        parent = Stack.objects.select_related("raw_template").get(pk=self.context.stack_id)
        return parent.raw_template.files or {}

    def handle_create(self):
        self.physical_id = nested.nested_create(
            parent_id=self.context.stack_id, resource_name=self.name,
            template=self._template(), parameters=self._parameters(), files=self._files(),
            timeout_mins=self.properties.get("timeout"))
        self.data["nested_stack_id"] = self.physical_id

    def check_create_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "CREATE")

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        nested.nested_update(self.physical_id, template=self._template(),
                             parameters=self._parameters(), files=self._files(),
                             timeout_mins=new_properties.get("timeout"))

    def check_update_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "UPDATE")

    def handle_delete(self):
        if not self.physical_id:
            return True
        return nested.nested_delete(self.physical_id)

    def check_delete_complete(self, cookie):
        return cookie is True or nested.nested_delete(self.physical_id, first_step=False)

    def handle_suspend(self):
        nested.nested_action(self.physical_id, "SUSPEND")

    def check_suspend_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "SUSPEND")

    def handle_resume(self):
        nested.nested_action(self.physical_id, "RESUME")

    def check_resume_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "RESUME")

    def handle_check(self):
        nested.nested_action(self.physical_id, "CHECK")

    def check_check_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "CHECK")

    def handle_lock(self):
        return {"started": nested.nested_lock(self.physical_id, parent_id=self.context.stack_id)}

    def check_lock_complete(self, cookie):
        return not cookie["started"] or nested.nested_progress(self.physical_id, "LOCK")

    def handle_unlock(self):
        return {"started": nested.nested_unlock(self.physical_id)}

    def check_unlock_complete(self, cookie):
        return not cookie["started"] or nested.nested_progress(self.physical_id, "UNLOCK")

    def get_reference_id(self):
        return self.physical_id or self.name

    def attributes(self):
        outputs = nested.nested_outputs(self.physical_id) if self.physical_id else {}
        return {"outputs": outputs, **outputs}

    def get_attribute(self, name, *path):
        value = self.attributes().get(name)
        for step in path:
            value = value[step] if isinstance(value, dict) else None
        return value


@register
class NestedStackResource(ChildStackResource):
    """A nested stack from an inline template (``OS::Heat::Stack``).

    The ``outputs`` attribute holds the child's outputs; the child is
    created, updated, suspended, resumed, checked and deleted with this
    resource.
    """

    type_name = "OS::Heat::Stack"
    properties_schema = {
        "template": Property("String", description="The nested template (HOT text).",
                             required=True, update_allowed=True),
        "parameters": Property("Map", description="Parameters for the nested stack.",
                               default={}, update_allowed=True),
        "timeout": Property("Integer", description="Timeout in minutes.", update_allowed=True),
        "context": Property("Map", description="Accepted for Heat compatibility; ignored."),
    }
    attributes_schema = {"outputs": Attribute("The outputs of the nested stack.")}

    def _template(self):
        return self.properties["template"]

    def _parameters(self):
        return self.properties.get("parameters") or {}


class TemplateResource(ChildStackResource):
    """A resource whose type names a template in ``files``: properties become parameters."""

    type_name = "heatweb::TemplateResource"
    allow_unknown_properties = True
    template_file = ""
    template_body = ""

    @classmethod
    def for_file(cls, file_name, body):
        key = hashlib.sha256(body.encode()).hexdigest()[:12]
        cached = _TEMPLATE_TYPES.get((file_name, key))
        if cached is None:
            cached = type(f"TemplateResource_{key}", (cls,),
                          {"type_name": file_name, "template_file": file_name,
                           "template_body": body, "__doc__": cls.__doc__})
            _TEMPLATE_TYPES[(file_name, key)] = cached
        return cached

    @classmethod
    def _declared_parameters(cls):
        """The names of the template's parameters, read once per class (per body).

        A parent of K resources of one template type validates each of them:
        reading the body K times cost O(K x template size) on every parent
        create and update (bench_nested).
        """
        declared = cls.__dict__.get("_declared")
        if declared is None:
            try:
                loaded = yaml.safe_load(cls.template_body) or {}
            except yaml.YAMLError as error:
                raise StackValidationFailed(f"{cls.template_file}: {error}") from None
            params = loaded.get("parameters") if isinstance(loaded, dict) else None
            declared = frozenset(params or {}) if isinstance(params, dict) else frozenset()
            cls._declared = declared
        return declared

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        if cls.template_body:
            declared = cls._declared_parameters()
            for key in raw:
                if key not in declared:
                    raise StackValidationFailed(
                        f"Property error: resources.{resource_name}.properties: "
                        f"Unknown Property {key}")
        return dict(raw)

    @classmethod
    def needs_replacement(cls, changed):
        return False

    def _template(self):
        return self.template_body

    def _parameters(self):
        return dict(self.properties)


_TEMPLATE_TYPES = {}
