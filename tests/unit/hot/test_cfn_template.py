"""CloudFormation-format templates: sections, parameters, functions, conditions, versions."""
import pytest

from heatweb.exceptions import InvalidTemplate, InvalidTemplateReference, \
    InvalidTemplateVersion, StackValidationFailed
from stacks.hot import Template
from stacks.hot.values import UNRESOLVED
from stacks.hot.versions import SUPPORTED_VERSIONS, functions_of

WORDPRESS = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Description": "WordPress on a single instance",
    "Parameters": {
        "KeyName": {"Description": "Name of an existing KeyPair", "Type": "String"},
        "InstanceType": {"Description": "WebServer EC2 instance type", "Type": "String",
                         "Default": "m1.small",
                         "AllowedValues": ["m1.tiny", "m1.small", "m1.medium"],
                         "ConstraintDescription": "must be a valid EC2 instance type."},
        "DBName": {"Default": "wordpress", "Description": "The WordPress database name",
                   "Type": "String", "MinLength": "1", "MaxLength": "64",
                   "AllowedPattern": "[a-zA-Z][a-zA-Z0-9]*",
                   "ConstraintDescription": "must begin with a letter and contain only "
                                            "alphanumeric characters."},
        "DBPassword": {"NoEcho": "true", "Type": "String", "Default": "admin1",
                       "MinLength": "1", "MaxLength": "41"},
        "Port": {"Type": "Number", "Default": "80", "MinValue": "1", "MaxValue": "65535"},
    },
    "Mappings": {
        "AWSInstanceType2Arch": {"m1.tiny": {"Arch": "32"}, "m1.small": {"Arch": "64"},
                                 "m1.medium": {"Arch": "64"}},
        "DistroArch2AMI": {"F18": {"32": "F18-i386-cfntools", "64": "F18-x86_64-cfntools"}},
    },
    "Resources": {
        "WikiDatabase": {
            "Type": "AWS::EC2::Instance",
            "Metadata": {"AWS::CloudFormation::Init": {"config": {"packages": {}}}},
            "Properties": {
                "ImageId": {"Fn::FindInMap": ["DistroArch2AMI", "F18", {
                    "Fn::FindInMap": ["AWSInstanceType2Arch", {"Ref": "InstanceType"},
                                      "Arch"]}]},
                "InstanceType": {"Ref": "InstanceType"},
                "KeyName": {"Ref": "KeyName"},
                "UserData": {"Fn::Base64": {"Fn::Join": ["", [
                    "#!/bin/bash -v\n", "echo ", {"Ref": "DBName"}, " ",
                    {"Ref": "AWS::StackName"}, "\n"]]}}}},
    },
    "Outputs": {"WebsiteURL": {
        "Value": {"Fn::Join": ["", ["http://", {"Fn::GetAtt": ["WikiDatabase", "PublicIp"]},
                                    "/wordpress"]]},
        "Description": "URL for Wordpress wiki"}},
}


class Lookup:
    def get_reference_id(self, name):
        return f"id-of-{name}"

    def get_attribute(self, name, *path):
        return f"{name}:{'.'.join(path)}"


def parsed(body=WORDPRESS):
    return Template.parse(body)


def params(tmpl, values=None):
    return tmpl.parameters(values or {"KeyName": "k"}, stack_name="wp", stack_id="abc",
                           project_id="p1")


def test_wordpress_shape_parses_validates_and_resolves():
    tmpl = parsed()
    values = params(tmpl)
    tmpl.validate(values, resource_type_exists=lambda t: True)
    (defn,) = tmpl.resource_definitions(values).values()
    props = tmpl.resolve(defn.properties, values, Lookup())
    assert props["ImageId"] == "F18-x86_64-cfntools"
    assert props["InstanceType"] == "m1.small"
    # Fn::Base64 is a placeholder, as in Heat: the text is not encoded.
    assert props["UserData"] == "#!/bin/bash -v\necho wordpress wp\n"
    assert defn.metadata == {"AWS::CloudFormation::Init": {"config": {"packages": {}}}}
    (out,) = tmpl.resolve_outputs(values, Lookup())
    assert out == {"output_key": "WebsiteURL", "description": "URL for Wordpress wiki",
                   "output_value": "http://WikiDatabase:PublicIp/wordpress"}
    assert tmpl.dependencies == {"WikiDatabase": ()}
    assert tmpl.description == "WordPress on a single instance"


def test_parameters_types_constraints_noecho_and_pseudo_parameters():
    tmpl = parsed()
    values = params(tmpl, {"KeyName": "k", "Port": "8080"})
    assert values["Port"] == 8080
    assert values["AWS::StackName"] == "wp"
    assert values["AWS::StackId"] == "arn:openstack:heat::p1:stacks/wp/abc"
    assert values["AWS::Region"] == "ap-southeast-1"
    assert "OS::stack_name" not in values
    assert values.shown()["DBPassword"] == "******"
    heat = tmpl.param_schemas["DBName"].to_heat_dict()
    assert heat["MinLength"] == 1 and heat["MaxLength"] == 64
    assert heat["AllowedPattern"] == "[a-zA-Z][a-zA-Z0-9]*"
    with pytest.raises(StackValidationFailed, match="must be a valid EC2 instance type"):
        params(tmpl, {"KeyName": "k", "InstanceType": "m1.huge"})
    with pytest.raises(StackValidationFailed, match="must begin with a letter"):
        params(tmpl, {"KeyName": "k", "DBName": "1abc"})
    with pytest.raises(StackValidationFailed, match="Port"):
        params(tmpl, {"KeyName": "k", "Port": "70000"})


@pytest.mark.parametrize("kind,value,typed", [
    ("CommaDelimitedList", "a, b", ["a", "b"]), ("Json", '{"a": 1}', {"a": 1}),
    ("Boolean", "yes", True), ("Number", "2.5", 2.5), ("String", 5, "5")])
def test_cfn_parameter_types(kind, value, typed):
    tmpl = Template.parse({"HeatTemplateFormatVersion": "2012-12-12",
                           "Parameters": {"p": {"Type": kind}}})
    assert tmpl.parameters({"p": value})["p"] == typed


@pytest.mark.parametrize("body,error,message", [
    ({"AWSTemplateFormatVersion": "2010-09-10"}, InvalidTemplateVersion,
     '"AWSTemplateFormatVersion" should be: 2010-09-09'),
    ({"AWSTemplateFormatVersion": "2010-09-09", "heat_template_version": "2016-10-14"},
     InvalidTemplateVersion, "Ambiguous versions"),
    ({"HeatTemplateFormatVersion": "2012-12-12", "Conditions": {}}, InvalidTemplate,
     "The template section is invalid: Conditions"),
    ({"AWSTemplateFormatVersion": "2010-09-09", "resources": {}}, InvalidTemplate,
     "The template section is invalid: resources"),
    ({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"a": {"Properties": {}}}},
     InvalidTemplate, 'Resource a is missing "Type"'),
    ({"AWSTemplateFormatVersion": "2010-09-09",
      "Resources": {"a": {"Type": "OS::Heat::None", "type": "x"}}},
     InvalidTemplate, '"type" is not a valid keyword inside a resource definition'),
    ({"AWSTemplateFormatVersion": "2010-09-09", "Outputs": {"o": {"Description": "x"}}},
     InvalidTemplate, "must contain a Value key"),
    ({"AWSTemplateFormatVersion": "2010-09-09", "Parameters": {"p": {"Type": "string"}}},
     InvalidTemplate, r"Invalid type \(string\)"),
    ({"AWSTemplateFormatVersion": "2010-09-09",
      "Parameters": {"p": {"Type": "String", "constraints": []}}},
     InvalidTemplate, "Invalid key 'constraints' for parameter"),
    ({"AWSTemplateFormatVersion": "2010-09-09",
      "Resources": {"a": {"Type": "OS::Heat::None", "DependsOn": "b"}}},
     InvalidTemplateReference, r"\"b\" \(in a.DependsOn\)"),
])
def test_structure_errors(body, error, message):
    with pytest.raises(error, match=message):
        Template.parse(body)


def test_conditions_of_2010_09_09():
    tmpl = Template.parse({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"Env": {"Type": "String", "Default": "prod"}},
        "Mappings": {"Sizes": {"prod": {"Count": 3}}},
        "Conditions": {
            "IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
            "NotProd": {"Fn::Not": ["IsProd"]},
            "Both": {"Fn::And": ["IsProd", {"Fn::Equals": [
                {"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "Count"]}, 3]}]},
            "Either": {"Fn::Or": ["NotProd", "Both"]}},
        "Resources": {"big": {"Type": "OS::Heat::None", "Condition": "IsProd"},
                      "small": {"Type": "OS::Heat::None", "Condition": "NotProd"}},
        "Outputs": {"size": {"Value": {"Fn::If": ["IsProd", "big", "small"]}},
                    "either": {"Value": {"Fn::If": ["Either", 1, 0]}},
                    "hidden": {"Value": "x", "Condition": "NotProd"}}})
    for env, names, size in (("prod", ["big"], "big"), ("dev", ["small"], "small")):
        values = tmpl.parameters({"Env": env})
        tmpl.validate(values, resource_type_exists=lambda t: True)
        assert list(tmpl.resource_definitions(values)) == names
        outs = {o["output_key"]: o["output_value"] for o in tmpl.resolve_outputs(values, None)}
        assert outs == {"size": size, "either": 1, "hidden": None if env == "prod" else "x"}


def test_a_condition_ref_names_parameters_only():
    tmpl = Template.parse({"AWSTemplateFormatVersion": "2010-09-09",
                           "Conditions": {"c": {"Fn::Equals": [{"Ref": "r"}, "x"]}},
                           "Resources": {"r": {"Type": "OS::Heat::None"}}})
    with pytest.raises(InvalidTemplateReference):
        tmpl.validate(tmpl.parameters({}), resource_type_exists=lambda t: True)


def resolve(snippet, **sections):
    tmpl = Template.parse({"HeatTemplateFormatVersion": "2012-12-12", **sections})
    return tmpl.resolve(snippet, tmpl.parameters({}, stack_name="s"), Lookup())


def test_functions_of_2012_12_12():
    resources = {"Resources": {"r": {"Type": "OS::Heat::None"}}}
    assert resolve({"Ref": "r"}, **resources) == "id-of-r"
    assert resolve({"Fn::GetAtt": ["r", "first_address"]}, **resources) == "r:first_address"
    assert resolve({"Fn::Select": ["1", ["a", "b"]]}) == "b"
    assert resolve({"Fn::Select": ["9", ["a", "b"]]}) == ""        # Heat: '' when not there
    assert resolve({"Fn::Select": ["k", {"k": "v"}]}) == "v"
    assert resolve({"Fn::Select": ["0", '["j"]']}) == "j"
    assert resolve({"Fn::Split": [",", "a,b"]}) == ["a", "b"]
    assert resolve({"Fn::Replace": [{"%n%": "x"}, "a %n%"]}) == "a x"
    assert resolve({"Fn::GetAZs": ""}) == ["nova"]
    assert resolve({"Fn::Join": ["-", [{"Ref": "AWS::StackName"}, "x"]]}) == "s-x"
    assert resolve({"Fn::FindInMap": ["m", "a", "b"]}, Mappings={"m": {"a": {"b": 7}}}) == 7
    assert resolve({"Fn::MemberListToMap": ["Name", "Value", [
        ".member.0.Name=k", ".member.0.Value=v"]]}) == {"k": "v"}
    # HOT functions and 2010-09-09's Fn::If are data in this format.
    assert resolve({"get_param": "x"}) == {"get_param": "x"}
    assert resolve({"Fn::If": ["c", 1, 2]}) == {"Fn::If": ["c", 1, 2]}


@pytest.mark.parametrize("snippet,message", [
    ({"Fn::GetAtt": ["r"]}, "must be of the form"),
    ({"Fn::GetAtt": ["nope", "a"]}, "nope"),
    ({"Fn::FindInMap": ["m", "a"]}, "must be of the form"),
    ({"Fn::FindInMap": ["m", "zz", "b"]}, "found no 'zz'"),
    ({"Fn::Base64": ["x"]}, "must be a string"),
    ({"Ref": "nothing"}, "nothing"),
])
def test_function_errors(snippet, message):
    with pytest.raises((StackValidationFailed, InvalidTemplateReference), match=message):
        resolve(snippet, Mappings={"m": {"a": {"b": 7}}},
                Resources={"r": {"Type": "OS::Heat::None"}})


def test_dependencies_from_ref_getatt_and_dependson():
    tmpl = Template.parse({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {
        "a": {"Type": "OS::Heat::None"},
        "b": {"Type": "OS::Heat::None", "Properties": {"x": {"Fn::GetAtt": ["a", "v"]}}},
        "c": {"Type": "OS::Heat::None", "DependsOn": ["a"],
              "Properties": {"y": {"Ref": "b"}, "z": {"Ref": "AWS::StackName"}}}}})
    assert tmpl.dependencies == {"a": (), "b": ("a",), "c": ("a", "b")}


def test_template_versions_list_the_cfn_formats_first():
    cfn = [v for v in SUPPORTED_VERSIONS if v["type"] == "cfn"]
    assert cfn == [{"version": "AWSTemplateFormatVersion.2010-09-09", "type": "cfn",
                    "aliases": []},
                   {"version": "HeatTemplateFormatVersion.2012-12-12", "type": "cfn",
                    "aliases": []}]
    assert SUPPORTED_VERSIONS[:2] == cfn
    aws = functions_of("AWSTemplateFormatVersion.2010-09-09")
    heat = functions_of("HeatTemplateFormatVersion.2012-12-12")
    assert aws.functions - heat.functions == {"Fn::If"}
    assert "Fn::FindInMap" in heat.functions and not heat.conditions
    assert aws.conditions == {"Fn::Equals", "Ref", "Fn::FindInMap", "Fn::Not", "Fn::And",
                              "Fn::Or"}


def test_resource_facade_takes_cfn_names():
    # Outside a child stack the parent resource is unknown (resolved when it runs as one).
    assert resolve({"Fn::ResourceFacade": "Metadata"}) is UNRESOLVED
    with pytest.raises(StackValidationFailed, match='should be one of: Metadata, '
                                                    'DeletionPolicy, UpdatePolicy'):
        resolve({"Fn::ResourceFacade": "metadata"})
