"""``AWS::CloudWatch::Alarm``: CloudFormation's alarm, on Aodh.

Heat 27 has no plugin for it: its global environment maps the type to a template of its
installation (etc/heat/templates/AWS_CloudWatch_Alarm.yaml, "AWS::CloudWatch::Alarm
using Aodh"), so it is a template resource whose properties are CloudFormation's
(``AlarmActions``, ``ComparisonOperator``, ``MetricName``, ...) and whose one resource is
an ``OS::Aodh::Alarm``. heatweb ships its own such template
(``templates/AWS_CloudWatch_Alarm.yaml``) and registers the type as a template resource
on it, as ``AWS::RDS::DBInstance`` (``aws_rds.py``).
"""
from pathlib import Path

from stacks.resources.aws_rds import template_parameter
from stacks.resources.base import ResourcePlugin
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues
from stacks.resources.stack import TemplateResource

ALARM_TYPE = "AWS::CloudWatch::Alarm"
TEMPLATE = Path(__file__).with_name("templates") / "AWS_CloudWatch_Alarm.yaml"

UNITS = ("Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes",
         "Gigabytes", "Terabytes", "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
         "Percent", "Count", "Bytes/Second", "Kilobytes/Second", "Megabytes/Second",
         "Gigabytes/Second", "Terabytes/Second", "Bits/Second", "Kilobits/Second",
         "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None")


def _one_of(*values, **kwargs):
    return template_parameter(constraints=(AllowedValues(values),), **kwargs)


def flatten_list(values):
    """A list property as Heat's ``TemplateResource.child_params`` gives it to a
    ``CommaDelimitedList`` parameter: its items joined with commas, a list of maps as
    ``.member.<N>.<key>=<value>`` items (which ``Fn::MemberListToMap`` reads back)."""
    if not values:
        return ""
    if isinstance(values[0], dict):
        return ",".join(f".member.{count}.{key}={value}"
                        for count, item in enumerate(values) for key, value in item.items())
    return ",".join("" if value is None else str(value) for value in values)


@register
class CloudWatchAlarm(TemplateResource):
    """A CloudFormation alarm: an Aodh threshold alarm on ``MetricName`` (Heat's built-in
    template). ``Statistic`` and ``ComparisonOperator`` take CloudFormation's names
    (``Average``, ``GreaterThanThreshold``, ...), ``Dimensions`` (``[{Name, Value}]``) is
    the alarm's ``matching_metadata``; ``Namespace`` and ``Units`` are taken and unused, as
    in Heat. Every property changes in place (the child stack is updated with it)."""

    type_name = ALARM_TYPE
    template_file = None
    template_body = TEMPLATE.read_text()
    allow_unknown_properties = False
    properties_schema = {
        "AlarmDescription": template_parameter(default="An alarm"),
        "EvaluationPeriods": template_parameter(),
        "MetricName": template_parameter(),
        "Namespace": template_parameter(default="system/linux"),
        "Period": template_parameter(),
        "ComparisonOperator": _one_of("GreaterThanOrEqualToThreshold", "GreaterThanThreshold",
                                      "LessThanThreshold", "LessThanOrEqualToThreshold"),
        "Statistic": _one_of("SampleCount", "Average", "Sum", "Minimum", "Maximum"),
        "Threshold": template_parameter(),
        "Units": _one_of(*UNITS, default="None"),
        "AlarmActions": template_parameter("List", default=[]),
        "OKActions": template_parameter("List", default=[]),
        "InsufficientDataActions": template_parameter("List", default=[]),
        "Dimensions": template_parameter("List", default=[]),
    }

    @classmethod
    def validate_properties(cls, raw, *, resource_name):
        # the declared schema (Heat's, from the parameters), not the template's names only
        return ResourcePlugin.validate_properties.__func__(cls, raw,
                                                           resource_name=resource_name)

    def _parameters(self):
        return {name: flatten_list(value) if isinstance(value, list) else value
                for name, value in self.properties.items()}
