"""What openstack/heat-templates (scripts/public-corpus, docs/corpus.md "The public
corpus") showed heatweb refused where Heat's validate accepts: a ``get_param`` path into a
parameter not given, and a CloudFormation ``Ref`` to nothing in an output."""
import pytest

from stacks.definitions import build_definition, normalize_environment
from stacks.hot import Template
from stacks.hot.values import UNRESOLVED

RANDOM = {  # hot/resource_group/random.yaml
    "heat_template_version": "2015-10-15",
    "parameters": {"lengths": {"type": "comma_delimited_list"}, "index": {"type": "number"}},
    "resources": {"random": {"type": "OS::Heat::RandomString",
                             "properties": {"length": {"get_param": [
                                 "lengths", {"get_param": "index"}]}}}},
    "outputs": {"value": {"value": {"get_param": ["lengths", 0]}}},
}


def test_a_path_into_a_parameter_not_given_is_unknown_at_validate():
    tmpl = Template.parse(RANDOM)
    # validate's stand-ins: an empty list and 0 (its placeholders), known as unknown
    env = normalize_environment({}, {"lengths": [], "index": 0})
    definition = build_definition(tmpl, environment=env, stack_name="validate",
                                  unknown=("lengths", "index"))
    assert set(definition.resources) == {"random"}
    known = {**definition.params, "lengths": UNRESOLVED, "index": UNRESOLVED}
    props = tmpl.resolve(definition.resources["random"].properties, known, None)
    assert props == {"length": UNRESOLVED}


def test_a_path_into_a_given_parameter_is_still_checked():
    tmpl = Template.parse(RANDOM)
    env = normalize_environment({}, {"lengths": ["8"], "index": 3})
    with pytest.raises(Exception, match="cannot take item 3"):
        build_definition(tmpl, environment=env, stack_name="s")


NEUTRON_WORDPRESS = {  # cfn/F17/WordPress_Single_Instance_With_Neutron.template, cut down
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {"WikiDatabase": {"Type": "AWS::EC2::Instance", "Properties": {
        "ImageId": "cirros", "InstanceType": "m1.small"}}},
    "Outputs": {"InstanceIPAddress": {"Value": {"Ref": "IPAddress"}},
                "Instance": {"Value": {"Ref": "WikiDatabase"}}},
}


class Lookup:
    def get_reference_id(self, name):
        return f"id-of-{name}"

    def get_attribute(self, name, *path):
        return None


def test_a_ref_to_nothing_in_an_output_is_the_outputs_error_not_a_refusal():
    tmpl = Template.parse(NEUTRON_WORDPRESS)
    values = tmpl.parameters({}, stack_name="wp", stack_id="abc", project_id="p1")
    tmpl.validate(values, resource_type_exists=lambda t: True)
    outputs = {o["output_key"]: o for o in tmpl.resolve_outputs(values, Lookup())}
    assert outputs["Instance"]["output_value"] == "id-of-WikiDatabase"
    assert outputs["InstanceIPAddress"]["output_value"] is None
    assert outputs["InstanceIPAddress"]["output_error"] == \
        'The specified reference "IPAddress" (in unknown) is incorrect.'
