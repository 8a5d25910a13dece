"""AWS::CloudWatch::Alarm: Heat 27's global-environment template resource (its properties,
and the list properties as Heat's TemplateResource.child_params hands them over)."""
from stacks.resources import registry
from stacks.resources.aws_cloudwatch import CloudWatchAlarm, flatten_list


def test_the_type_is_a_template_resource_with_cfns_properties():
    assert registry.get_plugin("AWS::CloudWatch::Alarm") is CloudWatchAlarm
    props = CloudWatchAlarm.schema_doc()["properties"]
    assert {name for name, p in props.items() if p["required"]} == {
        "MetricName", "Statistic", "ComparisonOperator", "Threshold", "Period",
        "EvaluationPeriods"}
    assert props["Statistic"]["constraints"][0]["allowed_values"] == [
        "SampleCount", "Average", "Sum", "Minimum", "Maximum"]
    assert props["Units"]["default"] == "None"
    assert all(p["update_allowed"] for p in props.values())


def test_lists_reach_the_comma_delimited_parameters_as_heats_do():
    assert flatten_list([]) == ""
    assert flatten_list(["http://a/1", None]) == "http://a/1,"
    assert flatten_list([{"Name": "AutoScalingGroupName", "Value": "g1"}, {"Name": "x",
                                                                         "Value": "y"}]) == (
        ".member.0.Name=AutoScalingGroupName,.member.0.Value=g1,"
        ".member.1.Name=x,.member.1.Value=y")
