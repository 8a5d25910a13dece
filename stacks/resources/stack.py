"""Nested stacks: ``OS::Heat::Stack`` and template resources.

Their backend is this service's own stack lifecycle: creating the resource
creates a child stack, and the resource follows the child's state.
"""
import hashlib
import json
import threading

from django.conf import settings

from heatweb.exceptions import HeatError, InvalidTemplate, RequestLimitExceeded, \
    StackValidationFailed
from stacks.hot import load_text
from stacks.hot.environment import child_environment
from stacks.models import Stack
from stacks.resources.base import ResourceFailure, ResourcePlugin, attribute_path
from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.registry import register
from stacks.resources.nested_stacks import nested
from stacks.resources.schema import Attribute, Property
from stacks.template_limits import limits

# Stored beside a nested stack's attributes: its outputs that cannot be resolved, each with
# Heat's error for a get_attr of it (not an attribute of its own: not shown).
OUTPUT_ERRORS = "_output_errors"


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


# Plugin data of an adopted child stack resource: its child's abandon data (until adopted).
ADOPT_CHILD_KEY = "heatweb_adopt_child"


class ChildStackResource(ResourcePlugin):
    """Shared two-phase actions of resources backed by a child stack."""

    nested_stack = True

    def _template(self):
        raise NotImplementedError

    def _parameters(self):
        raise NotImplementedError

    # The file of a template resource's own template (dropped from its child's registry).
    template_file = None

    def _parent_raw(self):
        return Stack.objects.select_related("raw_template").get(
            pk=self.context.stack_id).raw_template

    def _files(self):
        return self._parent_raw().files or {}

    def _environment(self):
        """The parent's environment as Heat passes it to a child (registry, defaults...)."""
        return child_environment(self._parent_raw().environment, resource_name=self.name,
                                 template_file=self.template_file)

    def handle_create(self):
        self.physical_id = nested.nested_create(
            parent_id=self.context.stack_id, resource_name=self.name,
            template=self._template(), parameters=self._parameters(), files=self._files(),
            timeout_mins=self.properties.get("timeout"), environment=self._environment())
        self.data["nested_stack_id"] = self.physical_id

    def check_create_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "CREATE")

    def handle_adopt(self):
        """Adopt the child stack from its abandon data (Heat's nested adopt)."""
        child = self.data.pop(ADOPT_CHILD_KEY, None)
        if not isinstance(child, dict):
            raise ResourceFailure("Resource ID was not provided.")
        self.physical_id = nested.nested_create(
            parent_id=self.context.stack_id, resource_name=self.name,
            template=self._template(), parameters=self._parameters(), files=self._files(),
            timeout_mins=self.properties.get("timeout"), environment=self._environment(),
            adopt_resources=child.get("resources") or {})
        self.data["nested_stack_id"] = self.physical_id

    def check_adopt_complete(self, cookie):
        return nested.nested_progress(self.physical_id, "ADOPT")

    def handle_update(self, new_properties, changed):
        self.properties = new_properties
        nested.nested_update(self.physical_id, template=self._template(),
                             parameters=self._parameters(), files=self._files(),
                             timeout_mins=new_properties.get("timeout"),
                             environment=self._environment())

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
        return not cookie["started"] or nested.nested_unlock_progress(self.physical_id)

    def get_reference_id(self):
        return self.physical_id or self.name

    def attributes(self):
        outputs, errors = nested.nested_outputs(self.physical_id) if self.physical_id \
            else ({}, {})
        values = {"outputs": outputs, **outputs}
        if errors:  # Heat's get_attr of such an output fails where it is read
            values[OUTPUT_ERRORS] = {key: f"Error in {self.name} output {key}: {error}"
                                     for key, error in errors.items()}
        return values

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        error = (attrs.get(OUTPUT_ERRORS) or {}).get(name)
        if error:
            raise StackValidationFailed(error)
        return super().resolve_attribute(attrs, name, path)

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
        "context": Property("Map", description="Heat's remote stack context: region_name "
                            "must be a region of this service's catalog (the stack is made "
                            "here); credential_secret_id, a Barbican secret holding a cloud "
                            "credential of the stack's project (Heat's format: auth_type "
                            "and auth), is read and authenticated with; ca_cert and "
                            "insecure are accepted.", update_allowed=True),
    }
    attributes_schema = {"outputs": Attribute("The outputs of the nested stack.")}

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        """As Heat: a ``context.region_name`` the catalog lacks is refused at the parent's
        create (400)."""
        props = super().validate_properties(raw, resource_name=resource_name)
        region = cls._region(props)
        if isinstance(region, str) and region and region not in known_regions():
            raise StackValidationFailed(
                f'Cannot establish connection to Heat endpoint at region "{region}" due to '
                f'"public endpoint for orchestration service in {region} region not found"')
        return props

    @classmethod
    def validate_with_files(cls, properties, *, files, resource_name):
        """As Heat's remote stack: its template validated with the parent's ``files`` (a
        template resource or ``get_file`` in it names one); failing, the parent's 400."""
        template = properties.get("template")
        if not isinstance(template, str):
            return
        parameters = properties.get("parameters")
        try:
            nested.nested_template_check(template, files=files, parameters=parameters
                                  if isinstance(parameters, dict) else None)
        except HeatError as error:
            region = cls._region(properties) or next(iter(sorted(known_regions())), "")
            raise StackValidationFailed(
                f'Failed validating stack template using Heat endpoint at region '
                f'"{region}" due to "ERROR: {error.message}"') from None

    @staticmethod
    def _region(properties):
        return (properties.get("context") or {}).get("region_name")

    def handle_create(self):
        self._check_credential(self.properties)
        return super().handle_create()

    def handle_update(self, new_properties, changed):
        self._check_credential(new_properties)
        return super().handle_update(new_properties, changed)

    def _check_credential(self, properties):
        """Heat's multi-cloud stack (``context.credential_secret_id``): the Barbican
        secret read as the stack's owner, its credential parsed and authenticated with as
        Heat does; the remote cloud is this one, so the stack is made here, and only for
        a credential of the stack's own project (a stack of this project cannot be the
        child of another project's). The simulated cloud, without Keystone, checks the
        secret and its format."""
        secret_id = (properties.get("context") or {}).get("credential_secret_id")
        if not secret_id:
            return
        from heatweb import keystone

        def refused(why):
            return ResourceFailure(f'Cannot establish connection to Heat endpoint at remote '
                                   f'cloud due to "{why}"')

        payload = _cloud_call(self.context.cloud.secret_payload, secret_id)
        credential = remote_credential(payload)
        if isinstance(credential, str):
            raise refused(credential)
        if not keystone.enabled():
            return
        try:
            project_id = keystone.credential_project(credential["auth_type"],
                                                     credential["auth"])
        except HeatError as error:
            raise refused(error.message) from None
        if project_id != self.context.project_id:
            raise refused(f"the credential authenticates in project {project_id}; this "
                          f"cloud makes the remote stack as a child of this stack, so it "
                          f"must be of the stack's project {self.context.project_id}")

    def _template(self):
        return self.properties["template"]

    def _parameters(self):
        return self.properties.get("parameters") or {}


def remote_credential(payload):
    """A credential secret's payload as Heat's ``parse_auth_credential_to_dict`` reads
    it: the dict, or Heat's words for what is wrong with it."""
    if isinstance(payload, bytes):
        payload = payload.decode("utf-8", "replace")
    try:
        credential = json.loads(payload or "")
    except ValueError:
        return "Failed to parse credential, please check your Stack Credential format."
    if not isinstance(credential, dict) or not all(k in credential
                                                   for k in ("auth_type", "auth")):
        return ("Missing key in auth information, the correct format contains "
                "['auth_type', 'auth'].")
    if not isinstance(credential["auth"], dict):
        return "Failed to parse credential, please check your Stack Credential format."
    return credential


def known_regions():
    """The regions of this service's catalog (the simulated cloud has one)."""
    return {r for r in (settings.HEATWEB.get("OS_REGION"), settings.KEYSTONE.get("REGION"))
            if r}


class TemplateResource(ChildStackResource):
    """A resource whose type names a template in ``files``: properties become parameters."""

    type_name = "heatweb::TemplateResource"
    allow_unknown_properties = True
    template_body = ""

    @classmethod
    def for_file(cls, file_name, body):
        key = hashlib.sha256(body.encode()).hexdigest()[:12]
        with _TEMPLATE_TYPES_LOCK:
            cached = _TEMPLATE_TYPES.pop((file_name, key), None)
            if cached is None:
                cached = type(f"TemplateResource_{key}", (cls,),
                              {"type_name": file_name, "template_file": file_name,
                               "template_body": body, "__doc__": cls.__doc__})
            _TEMPLATE_TYPES[(file_name, key)] = cached  # the most recently used last
            while len(_TEMPLATE_TYPES) > TEMPLATE_TYPES_KEPT:
                del _TEMPLATE_TYPES[next(iter(_TEMPLATE_TYPES))]
        return cached

    @classmethod
    def _declared_parameters(cls):
        """The names of the template's parameters, read once per class (per body).

        A parent of K resources of one template type validates each of them:
        reading the body K times cost O(K x template size) on every parent
        create and update (bench_nested).
        """
        if "_declared" not in cls.__dict__:
            cls._read_body()
        return cls._declared

    @classmethod
    def nested_types(cls):
        """``(name, type)`` of the template's resources that always exist (no
        ``condition``), read once per class as ``_declared_parameters``."""
        if "_types" not in cls.__dict__:
            cls._read_body()
        return cls._types

    @classmethod
    def _read_body(cls):
        try:
            loaded = load_text(cls.template_body, limits(),
                               limit=settings.HEATWEB["MAX_FILE_BYTES"],
                               what=f"template {cls.template_file}") or {}
        except InvalidTemplate as error:
            raise StackValidationFailed(f"{cls.template_file}: {error.message}") from None
        loaded = loaded if isinstance(loaded, dict) else {}
        # "Parameters", "Resources", "Type": a CloudFormation-format template
        params = loaded.get("parameters", loaded.get("Parameters"))
        resources = loaded.get("resources", loaded.get("Resources"))
        cls._declared = frozenset(params) if isinstance(params, dict) else frozenset()
        cls._types = tuple(
            (name, data.get("type", data.get("Type")))
            for name, data in (resources.items() if isinstance(resources, dict) else ())
            if isinstance(data, dict) and isinstance(data.get("type", data.get("Type")), str)
            and "condition" not in data and "Condition" not in data)

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

    def attributes(self):
        # The child stack's id last: resolve_attribute reads it, whatever the outputs say.
        return {**super().attributes(), "OS::stack_id": self.physical_id}

    def get_reference_id(self):
        """As Heat: the template's ``OS::stack_id`` output when it has one (a provider
        template standing for a server answers the server's id), else the child stack."""
        # (the text test spares reading every child's outputs for templates without it)
        if self.physical_id and "OS::stack_id" in self.template_body:
            outputs, _ = nested.nested_outputs(self.physical_id)
            if outputs.get("OS::stack_id"):
                return outputs["OS::stack_id"]
        return super().get_reference_id()

    @classmethod
    def resolve_attribute(cls, attrs, name, path):
        """Heat's ``resource.<name>[.<attribute>]``: a resource of the template's stack."""
        child_id = attrs.get("OS::stack_id")
        if not name.startswith("resource.") or not child_id:
            return super().resolve_attribute(attrs, name, path)
        member, *rest = name[len("resource."):].split(".", 1)
        data = nested.nested_resources_data(child_id, names=[member]).get(member)
        path = (*rest, *path)
        if data is None or not path:
            return data and data["ref"]
        return attribute_path((data["attrs"] or {}).get(path[0]), path[1:])

    def _template(self):
        return self.template_body

    def _parameters(self):
        return dict(self.properties)


# The classes of recently used template files (each holds its file's text, up
# to MAX_FILE_BYTES): a bounded cache, or every distinct file a client ever
# sent would stay in the web worker's memory.
TEMPLATE_TYPES_KEPT = 16
_TEMPLATE_TYPES = {}
_TEMPLATE_TYPES_LOCK = threading.Lock()
