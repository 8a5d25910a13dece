"""Heat's ``custom_constraint``s of parameters, checked against the cloud (or the value's
form) when a stack is validated, created or updated, as Heat checks them.

A constraint on a kind the cloud keeps (``neutron.network``, ``nova.keypair``, ...)
looks the value up by name or id; ``glance.image`` and ``nova.flavor`` ask the
driver's ``find_boot_source``; ``ip_addr``, ``net_cidr`` and ``mac_addr`` check
the value's form. A constraint name not listed here is accepted unchecked.
An empty value is not looked up (a parameter left to its empty default).

Resource properties whose schema names a constraint the cloud answers
(``PROPERTY_CONSTRAINTS``: ``mistral.workflow``, Heat's ``WorkflowConstraint``) are
looked up at create and update as Heat's strict validation does: a value given in the
template or by a parameter; one that comes from another resource (``get_resource``,
``get_attr``) is not known yet and not looked up, as Heat's.
"""
import functools
import ipaddress
import re

from heatweb.exceptions import StackValidationFailed
from stacks.cloud.driver import CloudError
from stacks.hot import UNRESOLVED
from stacks.resources.schema import Property

# Heat's constraint name -> the cloud's object kind
OBJECT_CONSTRAINTS = {
    "neutron.network": "network", "neutron.subnet": "subnet", "neutron.port": "port",
    "neutron.router": "router", "neutron.subnetpool": "subnetpool",
    "neutron.address_scope": "address_scope", "neutron.qos_policy": "qos_policy",
    "nova.keypair": "keypair", "cinder.volume": "volume", "cinder.snapshot": "volume_snapshot",
    "cinder.backup": "volume_backup", "cinder.vtype": "volume_type", "cinder.qos_specs": "qos_specs",
    "keystone.project": "project", "keystone.user": "user", "keystone.group": "group",
    "keystone.role": "role", "keystone.domain": "domain", "keystone.region": "region",
    "keystone.service": "service", "octavia.loadbalancer": "loadbalancer",
    "octavia.listener": "listener", "octavia.pool": "pool",
}
BOOT_SOURCE_CONSTRAINTS = {"glance.image": "image", "nova.flavor": "flavor"}
# Heat's constraint name -> (the cloud's object kind, its name in Heat's "not found")
GET_CONSTRAINTS = {"mistral.workflow": ("workflow", "Workflow")}
PROPERTY_CONSTRAINTS = set(GET_CONSTRAINTS)
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def _form_problem(name, value):
    """Why ``value`` is not of the form constraint ``name`` wants, or None."""
    try:
        if name == "ip_addr":
            ipaddress.ip_address(value)
        elif name in ("net_cidr", "cidr"):
            ipaddress.ip_network(value, strict=False)
        elif name == "mac_addr" and not _MAC.match(value):
            return f"{value} is not a valid MAC address"
    except ValueError as error:
        return str(error)
    return None


def _problem(cloud, name, value):
    if name in OBJECT_CONSTRAINTS:
        cloud.object_find(OBJECT_CONSTRAINTS[name], value)
    elif name in BOOT_SOURCE_CONSTRAINTS:
        cloud.find_boot_source(BOOT_SOURCE_CONSTRAINTS[name], value)
    elif name in GET_CONSTRAINTS:
        kind, entity = GET_CONSTRAINTS[name]
        if cloud.object_get(kind, value) is None:
            return f"The {entity} ({value}) could not be found."
    else:
        return _form_problem(name, value)
    return None


def check_custom_constraints(params, cloud, *, only=None):
    """Raise StackValidationFailed (400) naming the first parameter whose value fails a
    custom constraint; ``params``: a stack's typed Parameters, ``only``: the names to
    check (default all)."""
    for pname, schema in params.schemas.items():
        names = [c.spec for c in schema.constraints if c.kind == "custom_constraint"]
        if not names or pname not in params.values or (only is not None and pname not in only):
            continue
        value = params.values[pname]
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, str) or not item:
                continue
            problem = _first_problem(cloud, names, item)
            if problem:
                raise StackValidationFailed(
                    f"Parameter '{pname}' is invalid: Error validating value '{item}': "
                    f"{problem}")


def check_property_constraints(definition, cloud):
    """Raise StackValidationFailed (400, Heat's ``Property error``) for the first resource
    property whose value fails a constraint of ``PROPERTY_CONSTRAINTS``."""
    template = definition.template
    for name, defn in definition.resources.items():
        if defn.external_id is not None:
            continue  # an external resource's properties are not used (Heat)
        plugin = definition.plugins[name]
        if not _looks_up(plugin):
            continue
        schema = plugin.properties_schema
        props = template.resolve(defn.properties, definition.params, None)
        if isinstance(props, dict):
            for path, item, names in _constrained_values(schema, props, ""):
                _check_property(cloud, f"resources.{name}.properties{path}", item, names)


def _check_property(cloud, where, item, names):
    problem = _first_problem(cloud, names, item)
    if problem:
        raise StackValidationFailed(f"Property error: {where}: Error validating value "
                                    f"'{item}': {problem}")


def _first_problem(cloud, names, item):
    """What the first of the constraints ``names`` finds wrong with ``item`` (the cloud's
    refusal of the look-up counts), or None."""
    for name in names:
        try:
            problem = _problem(cloud, name, item)
        except CloudError as error:
            problem = str(error)
        if problem:
            return problem
    return None


@functools.lru_cache(maxsize=1024)
def _looks_up(plugin):
    """Whether a plugin class's properties have a constraint to look up (asked once)."""
    return _names_constraints(getattr(plugin, "properties_schema", None) or {})


def _constraint_names(prop):
    return [c.name for c in prop.constraints
            if getattr(c, "name", None) in PROPERTY_CONSTRAINTS]


def _names_constraints(schema):
    """Whether a properties schema (``{name: Property}``) has a constraint to look up."""
    for prop in schema.values():
        if _constraint_names(prop):
            return True
        inner = prop.schema
        if isinstance(inner, dict) and _names_constraints(inner):
            return True
        if isinstance(inner, Property) and _names_constraints({"*": inner}):
            return True
    return False


def _constrained_values(schema, values, path):
    """``(path, value, constraint names)`` of each known string value under ``schema``."""
    for key, prop in schema.items():
        value = values.get(key)
        if value is None or value is UNRESOLVED:
            continue
        here = f"{path}.{key}"
        names = _constraint_names(prop)
        if names and isinstance(value, str) and value:
            yield here, value, names
        inner = prop.schema
        if isinstance(inner, dict) and isinstance(value, dict):
            yield from _constrained_values(inner, value, here)
        elif isinstance(inner, Property) and isinstance(value, list):
            for index, item in enumerate(value):
                yield from _constrained_values({f"{key}[{index}]": inner},
                                               {f"{key}[{index}]": item}, path)
