"""HOT versions this service reads and the intrinsic functions each one offers."""

# (version, release alias, functions added in this version)
_HISTORY = [
    ("2013-05-23", None, {"get_param", "get_resource", "get_attr", "get_file", "str_replace",
                          "Fn::Select", "Fn::Join", "Fn::Split", "Fn::Replace",
                          "Fn::Base64", "Fn::MemberListToMap", "Fn::ResourceFacade"}),
    ("2014-10-16", None, {"list_join", "resource_facade"}),
    ("2015-04-30", None, {"repeat", "digest"}),
    ("2015-10-15", None, {"str_split"}),
    ("2016-04-08", None, {"map_merge"}),
    ("2016-10-14", "newton", {"map_replace", "if", "yaql", "equals", "not", "and", "or"}),
    ("2017-02-24", "ocata", {"str_replace_strict", "filter", "make_url", "list_concat",
                             "contains"}),
    ("2017-09-01", "pike", {"str_replace_vstrict", "list_concat_unique"}),
    ("2018-03-02", "queens", set()),
    ("2018-08-31", "rocky", set()),
    ("2021-04-16", "wallaby", set()),
]
_CFN_ONLY = {"Fn::Select", "Fn::Join", "Fn::Split", "Fn::Replace", "Fn::Base64",
             "Fn::MemberListToMap", "Fn::ResourceFacade"}

ALL_FUNCTIONS = set().union(*(added for _, _, added in _HISTORY)) | {"Ref", "Fn::GetAtt",
                                                                      "Fn::GetAZs"}

SUPPORTED_VERSIONS = [
    {"version": f"heat_template_version.{date}", "type": "hot",
     "aliases": [f"heat_template_version.{alias}"] if alias else []}
    for date, alias, _ in _HISTORY]

_BY_NAME = {}
_functions = set()
for _date, _alias, _added in _HISTORY:
    _functions = (_functions | _added) - (_CFN_ONLY if _date >= "2014-10-16" else set())
    _BY_NAME[_date] = (_date, frozenset(_functions))
    if _alias:
        _BY_NAME[_alias] = _BY_NAME[_date]


def version_info(name):
    """``(date, functions)`` for a version date or release name, or None."""
    return _BY_NAME.get(str(name))


def version_names():
    return [date for date, _, _ in _HISTORY]


def has_conditions(date):
    return date >= "2016-10-14"
