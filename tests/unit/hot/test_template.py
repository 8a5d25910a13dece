"""HOT parsing, parameters, functions and limits (pure Python, no database)."""
import tracemalloc

import pytest

from heatweb.exceptions import CircularDependencyException, InvalidTemplate, \
    InvalidTemplateReference, InvalidTemplateVersion, RequestLimitExceeded, \
    StackValidationFailed, UnknownUserParameter, UserParameterMissing
from stacks.hot import UNRESOLVED, Limits, Template

BASE = """
heat_template_version: {version}
parameters:
  count: {{type: number, default: 2, constraints: [{{range: {{min: 1, max: 5}}}}]}}
  flavor:
    type: string
    default: m1.tiny
    constraints:
      - allowed_values: [m1.tiny, m1.small]
        description: Must be tiny or small
  names: {{type: comma_delimited_list, default: "a, b"}}
  conf: {{type: json, default: {{"k": 1}}}}
  debug: {{type: boolean, default: "yes"}}
  secret: {{type: string, hidden: true, immutable: true, default: x}}
resources:
  first:
    type: OS::Heat::None
  second:
    type: OS::Heat::Value
    depends_on: first
    properties:
      value: {{get_attr: [third, value]}}
  third:
    type: OS::Heat::Value
    properties:
      value: {{list_join: ["-", {{get_param: names}}]}}
outputs:
  joined: {{value: {{get_attr: [third, value]}}}}
"""


def parse(text=None, version="2016-10-14", **kw):
    return Template.parse(text or BASE.format(version=version), **kw)


class Lookup:
    def __init__(self, refs, attrs):
        self.refs, self.attrs = refs, attrs

    def get_reference_id(self, name):
        return self.refs[name]

    def get_attribute(self, name, attr, *path):
        return self.attrs[name][attr]


def test_versions_by_date_and_release_name():
    assert parse(version="newton").version == "2016-10-14"
    assert parse(version="2021-04-16").version == "2021-04-16"
    with pytest.raises(InvalidTemplateVersion, match="2012-12-12"):
        parse(version="2012-12-12")


def test_yaml_dates_stay_strings_and_json_is_accepted():
    tmpl = parse()
    assert tmpl.raw["heat_template_version"] == "2016-10-14"
    assert Template.parse('{"heat_template_version": "2015-04-30"}').version == "2015-04-30"


def test_parameters_are_typed():
    tmpl = parse()
    params = tmpl.parameters({"count": "5", "debug": "false", "names": "x,y , z",
                              "conf": '{"a": [1]}'})
    assert params["count"] == 5
    assert params["debug"] is False
    assert params["names"] == ["x", "y", "z"]
    assert params["conf"] == {"a": [1]}
    assert tmpl.param_schemas["secret"].hidden and tmpl.param_schemas["secret"].immutable


def test_updatable_false_means_immutable():
    tmpl = Template.parse({"heat_template_version": "2016-10-14",
                           "parameters": {"p": {"type": "string", "updatable": False}}})
    assert tmpl.param_schemas["p"].immutable


@pytest.mark.parametrize("values,error,fragment", [
    ({"flavor": "m1.huge"}, StackValidationFailed, "Parameter 'flavor' is invalid: Must be tiny"),
    ({"count": "many"}, StackValidationFailed, "Parameter 'count' is invalid"),
    ({"count": 9}, StackValidationFailed, "range 1 to 5"),
    ({"debug": "perhaps"}, StackValidationFailed, "debug"),
    ({"nope": 1}, UnknownUserParameter, "nope"),
])
def test_bad_parameter_values(values, error, fragment):
    with pytest.raises(error, match=fragment):
        parse().parameters(values)


def test_missing_parameter():
    tmpl = Template.parse({"heat_template_version": "2016-10-14",
                           "parameters": {"p": {"type": "string"}}})
    with pytest.raises(UserParameterMissing, match=r"\(p\)"):
        tmpl.parameters({})


def test_dependencies_from_functions_and_depends_on():
    tmpl = parse()
    defs = tmpl.resource_definitions(tmpl.parameters({}))
    assert defs["second"].depends_on == ("first", "third")
    assert defs["third"].depends_on == ()


def test_static_resolution_leaves_resource_values_unresolved():
    tmpl = parse()
    params = tmpl.parameters({})
    assert tmpl.resolve({"get_attr": ["third", "value"]}, params, None) is UNRESOLVED
    assert tmpl.resolve({"list_join": ["-", {"get_param": "names"}]}, params, None) == "a-b"
    # "equals" is a condition function, not a value function: in a value it is data (Heat).
    assert tmpl.resolve({"equals": [{"get_attr": ["third", "value"]}, "x"]}, params,
                        None) == {"equals": [UNRESOLVED, "x"]}


def test_resolution_with_resources():
    tmpl = parse()
    params = tmpl.parameters({})
    lookup = Lookup({"first": "id-1"}, {"third": {"value": "a-b"}})
    outputs = tmpl.resolve_outputs(params, lookup)
    assert outputs == [{"output_key": "joined", "description": "No description given",
                        "output_value": "a-b"}]
    snippet = {"str_replace": {"template": "$id/$v", "params": {
        "$id": {"get_resource": "first"}, "$v": {"get_attr": ["third", "value"]}}}}
    assert tmpl.resolve(snippet, params, lookup) == "id-1/a-b"


def test_functions():
    tmpl = parse(version="2017-02-24")
    params = tmpl.parameters({})
    resolve = lambda s: tmpl.resolve(s, params, None)  # noqa: E731
    assert resolve({"map_merge": [{"a": 1}, {"b": 2}, {"a": 3}]}) == {"a": 3, "b": 2}
    assert resolve({"str_split": [",", "a,b,c", 1]}) == "b"
    assert resolve({"repeat": {"for_each": {"%x%": [1, 2]}, "template": "n%x%"}}) == ["n1", "n2"]
    assert resolve({"if": [{"equals": [{"get_param": "count"}, 2]}, "two", "other"]}) == "two"
    assert resolve({"get_param": ["conf", "k"]}) == 1
    assert resolve({"map_replace": [{"k": "v"}, {"keys": {"k": "K"}, "values": {"v": "V"}}]}) \
        == {"K": "V"}


def test_conditions_disable_resources():
    tmpl = Template.parse({
        "heat_template_version": "2016-10-14",
        "parameters": {"env": {"type": "string", "default": "dev"}},
        "conditions": {"prod": {"equals": [{"get_param": "env"}, "prod"]},
                       "not_prod": {"not": "prod"}},
        "resources": {"big": {"type": "OS::Heat::None", "condition": "prod"},
                      "small": {"type": "OS::Heat::None", "condition": "not_prod"}}})
    assert list(tmpl.resource_definitions(tmpl.parameters({}))) == ["small"]
    assert list(tmpl.resource_definitions(tmpl.parameters({"env": "prod"}))) == ["big"]


def test_get_file_reads_the_files_map():
    tmpl = Template.parse({"heat_template_version": "2016-10-14",
                           "outputs": {"o": {"value": {"get_file": "a.sh"}}}},
                          files={"a.sh": "echo hi"})
    assert tmpl.resolve_outputs(tmpl.parameters({}), None)[0]["output_value"] == "echo hi"


@pytest.mark.parametrize("resources,error,fragment", [
    ({"a": {"type": "X", "depends_on": "ghost"}}, InvalidTemplateReference, "ghost"),
    ({"a": {"type": "X", "properties": {"p": {"get_resource": "ghost"}}}},
     InvalidTemplateReference, "ghost"),
    ({"a": {"type": "X", "depends_on": "b"}, "b": {"type": "X", "depends_on": "a"}},
     CircularDependencyException, "Circular"),
    ({"a": {"type": "X", "propertys": {}}}, InvalidTemplate, "propertys"),
    ({"a": {"properties": {}}}, InvalidTemplate, "type"),
])
def test_structural_errors(resources, error, fragment):
    with pytest.raises(error, match=fragment):
        Template.parse({"heat_template_version": "2016-10-14", "resources": resources})


def test_unknown_function_and_parameter_are_rejected_on_validate():
    for snippet, error, fragment in [({"Fn::GetAZs": ""}, InvalidTemplateVersion, "Fn::GetAZs"),
                                     ({"get_param": "nope"}, StackValidationFailed,
                                      r"^Property error: : resources.v.properties.value: : "
                                      r"The Parameter \(nope\) was not provided.$"),
                                     ({"map_merge": "x"}, StackValidationFailed, "map_merge")]:
        tmpl = Template.parse({"heat_template_version": "2016-10-14", "resources": {
            "v": {"type": "OS::Heat::Value", "properties": {"value": snippet}}}})
        with pytest.raises(error, match=fragment):
            tmpl.validate(tmpl.parameters({}), resource_type_exists=lambda t: True)


def test_functions_of_later_versions_are_data():
    tmpl = Template.parse({"heat_template_version": "2015-04-30", "outputs": {
        "o": {"value": {"map_merge": [{}, {}]}}}})
    tmpl.validate(tmpl.parameters({}), resource_type_exists=lambda t: True)
    assert tmpl.resolve_outputs(tmpl.parameters({}), None)[0]["output_value"] == {
        "map_merge": [{}, {}]}


def test_unknown_section():
    with pytest.raises(InvalidTemplate, match="section is invalid: foo"):
        Template.parse({"heat_template_version": "2016-10-14", "foo": {}})


def test_limits():
    limits = Limits(max_template_bytes=100, max_resources=2, max_yaml_aliases=5)
    with pytest.raises(RequestLimitExceeded, match="exceeds maximum"):
        Template.parse("heat_template_version: 2016-10-14\ndescription: " + "x" * 200,
                       limits=limits)
    with pytest.raises(RequestLimitExceeded, match="Maximum resources"):
        Template.parse({"heat_template_version": "2016-10-14", "resources": {
            n: {"type": "X"} for n in "abc"}}, limits=Limits(max_resources=2))


def test_alias_bomb_is_rejected_quickly_with_flat_memory():
    lines = ["heat_template_version: 2016-10-14", 'a0: &a0 ["lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    tracemalloc.start()
    with pytest.raises(RequestLimitExceeded):
        Template.parse("\n".join(lines))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 20 * 1024 * 1024
    many = ["heat_template_version: 2016-10-14", "x: &x 1", "y: [" + ", ".join(["*x"] * 200) + "]"]
    with pytest.raises(RequestLimitExceeded, match="aliases"):
        Template.parse("\n".join(many))


def test_validate_shape_of_parameter_schema():
    schema = parse().param_schemas["flavor"].to_heat_dict()
    assert schema["Type"] == "String"
    assert schema["Default"] == "m1.tiny"
    assert schema["AllowedValues"] == ["m1.tiny", "m1.small"]
    assert schema["ConstraintDescription"] == "Must be tiny or small"
    assert parse().param_schemas["secret"].to_heat_dict()["NoEcho"] == "true"


@pytest.mark.parametrize("flags", [{"immutable": True, "updatable": True},
                                   {"immutable": False, "updatable": False}])
def test_contradicting_immutability_flags(flags):
    with pytest.raises(InvalidTemplate, match="says both"):
        Template.parse({"heat_template_version": "2016-10-14",
                        "parameters": {"p": {"type": "string", **flags}}})


@pytest.mark.parametrize("snippet", [
    {"str_split": [",", "," * 400_000]},  # 400 KB of text, 400,001 parts
    {"map_merge": [{f"k{i}-{j}": "v" * 100 for i in range(400)} for j in range(3)]},
])
def test_split_and_merge_are_refused_before_they_are_built(snippet):
    template = Template.parse({"heat_template_version": "2016-10-14"},
                              limits=Limits(max_value_bytes=64 * 1024))
    tracemalloc.start()
    with pytest.raises(RequestLimitExceeded, match="larger than 65536 bytes"):
        template.resolve(snippet, {}, None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2 * 1024 * 1024  # 400,001 parts would take ~25 MB


def test_str_split_needs_a_delimiter():
    template = Template.parse({"heat_template_version": "2016-10-14"})
    with pytest.raises(StackValidationFailed, match="non-empty delimiter"):
        template.resolve({"str_split": ["", "abc"]}, {}, None)
    assert template.resolve({"str_split": [",", "a,b"]}, {}, None) == ["a", "b"]
