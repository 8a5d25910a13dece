"""Template versions this service reads and the intrinsic functions each one offers.

As in Heat (heat/engine/hot/template.py), each version has three tables:
the functions a template may call in its values, the functions it used to
have (calling one is an error naming the function), and the functions of
its ``conditions``. A one-key mapping whose key is in none of them is data.
"""
from dataclasses import dataclass

_CFN_GONE = frozenset({"Fn::GetAZs", "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
                       "Fn::MemberListToMap", "Fn::ResourceFacade", "Ref"})
_CONDITIONS_NEWTON = frozenset({"get_param", "equals", "not", "and", "or"})

# (version, release alias, functions added, functions removed, condition functions)
_HISTORY = [
    ("2013-05-23", None, {"get_param", "get_resource", "get_attr", "get_file", "str_replace",
                          "list_join", "resource_facade", "Ref", "Fn::GetAZs", "Fn::Select",
                          "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
                          "Fn::MemberListToMap", "Fn::ResourceFacade"}, set(), frozenset()),
    ("2014-10-16", None, set(), _CFN_GONE, frozenset()),
    ("2015-04-30", None, {"repeat", "digest"}, set(), frozenset()),
    ("2015-10-15", None, {"str_split"}, {"Fn::Select"}, frozenset()),
    ("2016-04-08", None, {"map_merge"}, set(), frozenset()),
    ("2016-10-14", "newton", {"map_replace", "if", "yaql"}, set(), _CONDITIONS_NEWTON),
    ("2017-02-24", "ocata", {"filter", "str_replace_strict"}, set(), _CONDITIONS_NEWTON),
    ("2017-09-01", "pike", {"make_url", "list_concat", "str_replace_vstrict",
                            "list_concat_unique", "contains"}, set(),
     _CONDITIONS_NEWTON | {"yaql", "contains"}),
    ("2018-03-02", "queens", set(), set(), _CONDITIONS_NEWTON | {"yaql", "contains"}),
    ("2018-08-31", "rocky", set(), set(), _CONDITIONS_NEWTON | {"yaql", "contains"}),
    ("2021-04-16", "wallaby", set(), set(), _CONDITIONS_NEWTON | {"yaql", "contains"}),
]


@dataclass(frozen=True)
class VersionFunctions:
    """What one HOT version calls, refuses as removed, and evaluates in conditions."""
    functions: frozenset
    removed: frozenset
    conditions: frozenset


# The CloudFormation formats (heat/engine/cfn/template.py): the 2012-12-12 Heat
# format has no conditions; 2010-09-09 adds ``Conditions`` and ``Fn::If``.
_CFN_FUNCTIONS = frozenset({"Fn::FindInMap", "Fn::GetAZs", "Ref", "Fn::GetAtt", "Fn::Select",
                            "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
                            "Fn::MemberListToMap", "Fn::ResourceFacade"})
CFN_FORMATS = {
    ("AWSTemplateFormatVersion", "2010-09-09"): VersionFunctions(
        _CFN_FUNCTIONS | {"Fn::If"}, frozenset(),
        frozenset({"Fn::Equals", "Ref", "Fn::FindInMap", "Fn::Not", "Fn::And", "Fn::Or"})),
    ("HeatTemplateFormatVersion", "2012-12-12"): VersionFunctions(
        _CFN_FUNCTIONS, frozenset(), frozenset()),
}

# Heat lists them sorted by name, so the CloudFormation formats come first.
SUPPORTED_VERSIONS = [{"version": f"{key}.{date}", "type": "cfn", "aliases": []}
                      for key, date in sorted(CFN_FORMATS)] + [
    {"version": f"heat_template_version.{date}", "type": "hot",
     "aliases": [f"heat_template_version.{alias}"] if alias else []}
    for date, alias, *_ in _HISTORY]

_BY_NAME = {}
_functions, _removed = frozenset(), frozenset()
for _date, _alias, _added, _gone, _conditions in _HISTORY:
    _functions = (_functions | _added) - _gone
    _removed = _removed | _gone
    _BY_NAME[_date] = (_date, VersionFunctions(_functions, _removed, _conditions))
    if _alias:
        _BY_NAME[_alias] = _BY_NAME[_date]


def version_info(name):
    """``(date, VersionFunctions)`` for a version date or release name, or None."""
    return _BY_NAME.get(str(name))


def cfn_format(key, version):
    """The function tables of a CloudFormation format, or None for an unknown version."""
    return CFN_FORMATS.get((key, str(version)))


def functions_of(full_name):
    """The tables of ``heat_template_version.<date|alias>`` or ``<CFN key>.<date>``."""
    key, _, version = full_name.partition(".")
    if key == "heat_template_version":
        info = version_info(version)
        return info and info[1]
    return cfn_format(key, version)


def version_names():
    return [date for date, *_ in _HISTORY]


def has_conditions(date):
    return date >= "2016-10-14"
