"""Heat's template semantics: which one-key maps are calls, and allowed_pattern."""
import time

import pytest

from heatweb.exceptions import InvalidTemplate, InvalidTemplateVersion, StackValidationFailed
from stacks.hot import Template
from stacks.hot.versions import version_info


def resolve(snippet, version="2021-04-16", params=None, **sections):
    tmpl = Template.parse({"heat_template_version": version, **sections})
    return tmpl.resolve(snippet, tmpl.parameters(params or {}), None)


@pytest.mark.parametrize("snippet", [
    {"get_input": "deploy_server_id"},       # a StructuredConfig's input reference
    {"get_vm_id": {"action": "std.noop"}},   # a Mistral task named get_vm_id
    {"str_replace_vstrict_typo": "x"},
    {"Fn::GetAtt": ["a", "b"]},             # a CloudFormation function, not HOT's
])
def test_a_one_key_map_that_is_not_a_function_of_the_version_is_data(snippet):
    assert resolve({"config": snippet}) == {"config": snippet}


def test_functions_of_a_later_version_are_data_in_an_earlier_one():
    # Heat 2016-10-14 has no "filter" and no "contains": they are plain keys there.
    assert resolve({"filter": [[1], [1, 2]]}, "2016-10-14") == {"filter": [[1], [1, 2]]}
    assert resolve({"filter": [[1], [1, 2]]}, "2017-02-24") == [2]
    assert resolve({"contains": [1, [1]]}, "2017-02-24") == {"contains": [1, [1]]}
    assert resolve({"contains": [1, [1]]}, "2017-09-01") is True


def test_condition_functions_are_calls_only_in_conditions():
    tmpl = Template.parse({
        "heat_template_version": "2016-10-14",
        "parameters": {"env": {"type": "string", "default": "prod"}},
        "conditions": {"prod": {"equals": [{"get_param": "env"}, "prod"]}},
        "outputs": {"data": {"value": {"equals": [1, 1]}},
                    "chosen": {"value": {"if": ["prod", "big", "small"]}}}})
    outputs = {o["output_key"]: o["output_value"]
               for o in tmpl.resolve_outputs(tmpl.parameters({}), None)}
    assert outputs == {"data": {"equals": [1, 1]}, "chosen": "big"}


def test_list_join_and_cfn_functions_work_in_2013_05_23():
    params = {"names": {"type": "comma_delimited_list", "default": "a,b"}}
    assert resolve({"list_join": ["-", {"get_param": "names"}]}, "2013-05-23",
                   parameters=params) == "a-b"
    assert resolve({"Fn::Join": [",", ["x", "y"]]}, "2013-05-23") == "x,y"
    assert resolve({"Fn::Split": [",", "x,y"]}, "2013-05-23") == ["x", "y"]
    assert resolve({"Fn::Replace": [{"$n": "w"}, "hi $n"]}, "2013-05-23") == "hi w"
    assert resolve({"Ref": "names"}, "2013-05-23", parameters=params) == ["a", "b"]
    assert resolve({"Fn::Select": [1, ["x", "y"]]}, "2014-10-16") == "y"
    assert resolve({"Fn::MemberListToMap": ["Name", "Value", [
        ".member.0.Name=key", ".member.0.Value=door", ".member.1.Name=k2",
        ".member.1.Value=v2", "other=x"]]}, "2013-05-23") == {"key": "door", "k2": "v2"}


@pytest.mark.parametrize("version,function", [
    ("2014-10-16", "Fn::Join"), ("2014-10-16", "Ref"), ("2015-10-15", "Fn::Select"),
    ("2021-04-16", "Fn::Base64")])
def test_a_removed_function_is_refused_as_heat_refuses_it(version, function):
    with pytest.raises(InvalidTemplateVersion, match=f"The function {function} is not "
                                                     f"supported in this version of HOT"):
        resolve({function: ["a", ["b"]]}, version)


def test_tables_match_heat():
    _, newton = version_info("2016-10-14")
    assert {"get_param", "if", "map_replace", "yaql"} <= newton.functions
    assert not {"equals", "contains", "filter", "Ref"} & newton.functions
    assert newton.conditions == {"get_param", "equals", "not", "and", "or"}
    _, pike = version_info("pike")
    assert {"contains", "list_concat", "make_url"} <= pike.functions
    assert {"yaql", "contains"} <= pike.conditions
    _, first = version_info("2013-05-23")
    assert {"list_join", "Ref", "Fn::Join", "resource_facade"} <= first.functions


def test_a_ref_to_a_resource_is_a_dependency_and_to_a_parameter_is_not():
    tmpl = Template.parse({
        "heat_template_version": "2013-05-23",
        "parameters": {"p": {"type": "string", "default": "x"}},
        "resources": {"a": {"type": "OS::Heat::None"},
                      "b": {"type": "OS::Heat::Value",
                            "properties": {"value": {"Fn::Join": ["", [{"Ref": "a"},
                                                                       {"Ref": "p"}]]}}}}})
    assert tmpl.dependencies["b"] == ("a",)


# allowed_pattern ------------------------------------------------------------------------

def pattern_param(pattern, value):
    tmpl = Template.parse({"heat_template_version": "2021-04-16", "parameters": {"p": {
        "type": "string", "constraints": [{"allowed_pattern": pattern}]}}})
    return tmpl.parameters({"p": value})["p"]


@pytest.mark.parametrize("pattern,good,bad", [
    (r"(\w)\1+", "aaa", "aab"),                         # back-reference
    (r"(?=.*\d)(?=.*[a-z])[a-z\d]{6,}", "abc123", "abcdef"),  # look-aheads (passwords)
    (r"(?<!-)[a-z-]+(?<!-)", "ab-c", "abc-"),           # look-behinds
    (r"a|ab", "a", "ab"),                               # Heat: match at start, must reach the end
])
def test_python_patterns(pattern, good, bad):
    assert pattern_param(pattern, good) == good
    with pytest.raises(StackValidationFailed, match="does not match pattern"):
        pattern_param(pattern, bad)


def test_a_backtracking_pattern_is_stopped():
    with pytest.raises(StackValidationFailed, match="was stopped"):
        pattern_param("(x+x+)+y", "x" * 3000)


def test_a_pattern_that_does_not_compile_is_an_invalid_template():
    with pytest.raises(InvalidTemplate, match="allowed_pattern"):
        pattern_param("(a", "a")


@pytest.mark.parametrize("pattern", [r"((a{1000}){1000}){1000}", r"(?:a{65535}){65535}",
                                     r"(?:(?:x|y){400}){400}"])
def test_a_pattern_too_large_to_compile_quickly_is_refused(pattern):
    with pytest.raises(InvalidTemplate, match="larger than"):
        pattern_param(pattern, "a")


def test_the_patterns_of_a_template_together_are_bounded_too():
    one = "(?:[a-z]{1000}){9}"  # 9 000 items: fine alone, not four times
    parameters = {f"p{i}": {"type": "string", "constraints": [{"allowed_pattern": one}]}
                  for i in range(4)}
    Template.parse({"heat_template_version": "2021-04-16",
                    "parameters": dict(list(parameters.items())[:3])})
    with pytest.raises(InvalidTemplate, match="together"):
        Template.parse({"heat_template_version": "2021-04-16", "parameters": parameters})


def test_all_patterns_of_one_set_of_parameters_share_one_budget():
    """Once the set's budget is spent, every further match is stopped at once."""
    from stacks.hot import parameters
    token = parameters._PATTERN_DEADLINE.set(time.monotonic())
    try:
        with pytest.raises(parameters.ParameterValueError, match="was stopped"):
            parameters.pattern_matches("a", "a")
    finally:
        parameters._PATTERN_DEADLINE.reset(token)
    assert parameters.pattern_matches("a", "a")
