"""What a template may use: the resource types and the template versions with their functions.

Read by the API (``/resource_types``, ``/template_versions``) and by the pages
(Resource types, Template versions), so both list the same.
"""
from heatweb.exceptions import EntityNotFound
from stacks.hot import SUPPORTED_VERSIONS
from stacks.hot.versions import functions_of
from stacks.resources import registry
from stacks.resources.unavailable import refuse_unavailable, type_available

FUNCTIONS = {
    "get_param": "A function for resolving parameter references.",
    "get_resource": "A function for resolving resource references.",
    "get_attr": "A function for resolving resource attributes.",
    "get_file": "A function for including a file inline.",
    "str_replace": "A function for performing string substitutions.",
    "str_replace_strict": "A function for performing string substitutions.",
    "str_replace_vstrict": "A function for performing string substitutions.",
    "list_join": "A function for joining strings.",
    "map_merge": "A function for merging maps.",
    "str_split": "A function for splitting strings.",
    "repeat": "A function for iterating over a list of items.",
    "digest": "A function for performing digest operations.",
    "resource_facade": "A function for retrieving data in a parent provider template.",
    "map_replace": "A function for performing substitutions on maps.",
    "yaql": "A function for executing a yaql expression.",
    "if": "A function to return corresponding value based on condition evaluation.",
    "filter": "A function for filtering out values from lists.",
    "make_url": "A function for performing substitutions on maps.",
    "list_concat": "A function for extending lists.",
    "list_concat_unique": "A function for extending lists with unique items.",
    "contains": "A function for checking whether specific value is in sequence.",
    "equals": "A function for comparing whether two values are equal.",
    "not": "A function acts as a NOT operator.",
    "and": "A function acts as an AND operator.",
    "or": "A function acts as an OR operator.",
    "Ref": "A function for resolving parameters or resource references.",
    "Fn::GetAZs": "A function for retrieving the availability zones.",
    "Fn::Select": "A function for selecting an item from a list or map.",
    "Fn::Join": "A function for joining strings.",
    "Fn::Split": "A function for splitting delimited strings into a list.",
    "Fn::Replace": "A function for performing string substitutions.",
    "Fn::Base64": "A placeholder function for converting to base64.",
    "Fn::MemberListToMap": "A function to convert lists with enumerated keys and values "
                           "to mapping.",
    "Fn::ResourceFacade": "A function for retrieving data in a parent provider template.",
    "Fn::FindInMap": "A function for resolving keys in the template mappings.",
    "Fn::GetAtt": "A function for resolving resource attributes.",
    "Fn::If": "A function to return corresponding value based on condition evaluation.",
    "Fn::Equals": "A function for comparing whether two values are equal.",
    "Fn::Not": "A function that acts as a NOT operator on a condition.",
    "Fn::And": "A function that acts as an AND operator on conditions.",
    "Fn::Or": "A function that acts as an OR operator on conditions.",
}


def resource_types(query=None):
    """The available types' names, those containing ``query`` when given (Heat's ``name``)."""
    names = [n for n in registry.list_types() if type_available(n)]
    return [n for n in names if query in n] if query else names


def resource_type_description(name):
    return (registry.get_plugin(name).__doc__ or "").strip()


def resource_type_schema(name):
    """Heat's resource type show: the type's properties and attributes schema."""
    refuse_unavailable(name)
    if not registry.has_type(name):
        raise EntityNotFound(entity="Resource Type", name=name)
    return registry.get_plugin(name).schema_doc()


def template_versions():
    return SUPPORTED_VERSIONS


def template_functions(version, *, with_conditions=False):
    """``[{"functions": name, "description": ...}]`` of a template version (404 unknown)."""
    known = {v["version"] for v in SUPPORTED_VERSIONS}
    known |= {a for v in SUPPORTED_VERSIONS for a in v.get("aliases", [])}
    if version not in known:
        raise EntityNotFound(entity="Template version", name=version)
    table = functions_of(version)
    names = set(table.functions) | (table.conditions if with_conditions else set())
    return [{"functions": name, "description": FUNCTIONS.get(name, "")}
            for name in sorted(names)]
