"""Aodh's alarm types as Heat 27 has them: ``OS::Aodh::Alarm`` (threshold),
``EventAlarm``, ``GnocchiResourcesAlarm``, ``GnocchiAggregationByMetricsAlarm``,
``GnocchiAggregationByResourcesAlarm``, ``CompositeAlarm``, ``PrometheusAlarm`` and
``LBMemberHealthAlarm``, and the hidden placeholder ``CombinationAlarm``.

Each is one ``alarm`` object of the alarming service: Aodh's shape (``type``, the
``<type>_rule`` of the type's own properties, the common ``alarm_actions`` ... and
``enabled``), as Heat's ``BaseAlarm._reformat_properties`` sends it. A queue of
``alarm_queues`` becomes Heat's ``trust+zaqar://?queue_name=...`` action; an action that
is the name of a resource of the stack is that resource's ``AlarmUrl`` (Heat's
``actions_to_urls``: the engine waits for the resource and puts the URL in,
``named_resource_attributes``). Suspend disables the alarm, resume enables it, as Heat.
On a cloud whose catalog has no ``alarming`` service, validation answers Heat's
ResourceTypeUnavailable. The
simulated cloud keeps alarms as generic objects that never evaluate: a test
fires one by calling its ``alarm_actions`` as Aodh's notifier does.
"""
from urllib.parse import urlencode

from stacks.resources.base import cloud_call as _cloud_call
from stacks.resources.cloud_object import CloudObjectResource, attributes, prop
from stacks.resources.registry import register
from stacks.resources.schema import AllowedValues, Length
from stacks.resources.unavailable import HiddenPlaceholder

AODH = ("aodh", "alarming")
OPERATORS = (AllowedValues(("le", "ge", "eq", "lt", "gt", "ne")),)
# One of an event alarm's query conditions, as Heat's BaseAlarm QUERY_FACTOR_FIELDS.
QUERY_FACTOR = prop("Map", "", schema={
    "field": prop("String", "Name of attribute to compare."),
    "type": prop("String", "The type of the attribute.", default="string",
                 constraints=(AllowedValues(("integer", "float", "string", "boolean",
                                             "datetime")),)),
    "op": prop("String", "Comparison operator.", constraints=OPERATORS),
    "value": prop("String", "String value with which to compare.")})
ACTION_QUEUES = {"alarm_actions": "alarm_queues", "ok_actions": "ok_queues",
                 "insufficient_data_actions": "insufficient_data_queues"}


def _updatable(kind, description, **kwargs):
    return prop(kind, description, update_allowed=True, **kwargs)


COMMON = {
    "description": _updatable("String", "Description for the alarm."),
    "enabled": _updatable("Boolean", "True if alarm evaluation/actioning is enabled.",
                          default=True),
    "alarm_actions": _updatable("List", "A list of URLs (webhooks) to invoke when state "
                                "transitions to alarm."),
    "ok_actions": _updatable("List", "A list of URLs (webhooks) to invoke when state "
                             "transitions to ok."),
    "insufficient_data_actions": _updatable("List", "A list of URLs (webhooks) to invoke "
                                            "when state transitions to insufficient-data."),
    "alarm_queues": _updatable("List", "A list of Zaqar queues to post to when state "
                               "transitions to alarm.", default=[]),
    "ok_queues": _updatable("List", "A list of Zaqar queues to post to when state "
                            "transitions to ok.", default=[]),
    "insufficient_data_queues": _updatable("List", "A list of Zaqar queues to post to when "
                                           "state transitions to insufficient-data.",
                                           default=[]),
    "repeat_actions": _updatable("Boolean", "False to trigger actions when the threshold is "
                                 "reached AND the alarm's state has changed.", default=True),
    "severity": _updatable("String", "Severity of the alarm.", default="low",
                           constraints=(AllowedValues(("low", "moderate", "critical")),)),
    "time_constraints": prop("List", "Describe time constraints for the alarm (name, start "
                             "as a cron expression, duration in seconds, timezone).",
                             default=[]),
}
GNOCCHI = {
    "comparison_operator": _updatable("String", "Operator used to compare specified "
                                      "statistic with threshold.", constraints=OPERATORS),
    "evaluation_periods": _updatable("Integer", "Number of periods to evaluate over."),
    "aggregation_method": _updatable("String", "The aggregation method to compare to the "
                                     "threshold."),
    "granularity": _updatable("Integer", "The time range in seconds."),
    "threshold": _updatable("Number", "Threshold to evaluate against.", required=True),
}


class AodhAlarm(CloudObjectResource):
    """Base of Aodh's alarms: one ``alarm`` object whose rule is the type's properties."""

    required_service = AODH
    kind = "alarm"
    alarm_type = "threshold"
    rule_properties = ()
    attributes_schema = attributes()
    # Heat's actions_to_urls: an action that is the name of a resource of the stack is
    # that resource's AlarmUrl (an AWS::AutoScaling::ScalingPolicy's).
    named_resource_attributes = {action: "AlarmUrl" for action in ACTION_QUEUES}

    def cloud_fields(self, props, names=None):
        """Aodh's whole alarm (an update sends it whole too: ``names`` is not used)."""
        fields = {"type": self.alarm_type}
        rule = {k: props[k] for k in self.rule_properties if props.get(k) is not None}
        if rule:
            fields[f"{self.alarm_type}_rule"] = rule
        for key in COMMON:
            if key in ACTION_QUEUES.values() or props.get(key) is None:
                continue
            fields[key] = props[key]
        for action, queues in ACTION_QUEUES.items():
            urls = [url for url in props.get(action) or [] if url]  # Heat drops empty ones
            urls += [f"trust+zaqar://?{urlencode({'queue_name': q})}"
                     for q in props.get(queues) or []]
            fields[action] = urls
        return fields

    def handle_update(self, new_properties, changed):
        # Aodh replaces the rule and the actions whole: send them all.
        self.existing()
        _cloud_call(self.cloud.object_update, self.kind, self.physical_id,
                    **self.cloud_fields(new_properties))
        self.properties = new_properties

    def handle_suspend(self):
        if self.physical_id:
            _cloud_call(self.cloud.object_update, self.kind, self.physical_id, enabled=False)

    def handle_resume(self):
        if self.physical_id:
            _cloud_call(self.cloud.object_update, self.kind, self.physical_id, enabled=True)


@register
class ThresholdAlarm(AodhAlarm):
    """An Aodh threshold alarm on Ceilometer's meters (deprecated in Heat, still there)."""

    type_name = "OS::Aodh::Alarm"
    rule_properties = ("comparison_operator", "evaluation_periods", "meter_name", "period",
                       "statistic", "threshold", "matching_metadata", "query")
    properties_schema = {
        "comparison_operator": GNOCCHI["comparison_operator"],
        "evaluation_periods": GNOCCHI["evaluation_periods"],
        "meter_name": prop("String", "Meter name watched by the alarm.", required=True),
        "period": _updatable("Integer", "Period (seconds) to evaluate over."),
        "statistic": _updatable("String", "Meter statistic to evaluate.", constraints=(
            AllowedValues(("count", "avg", "sum", "min", "max")),)),
        "threshold": GNOCCHI["threshold"],
        "matching_metadata": _updatable("Map", "Meter should match this resource metadata "
                                        "(key=value) additionally to the meter_name.",
                                        default={}),
        "query": _updatable("List", "A list of query factors (field, op, value, type).",
                            default=[]),
        **COMMON}


@register
class EventAlarm(AodhAlarm):
    """An Aodh alarm on events of a type (Tacker's VNF monitoring)."""

    type_name = "OS::Aodh::EventAlarm"
    alarm_type = "event"
    rule_properties = ("event_type", "query")
    properties_schema = {
        "event_type": _updatable("String", "Event type to evaluate against. If not "
                                 "specified will match all events.", default="*"),
        "query": _updatable("List", "A list for filtering events. Query conditions used to "
                            "filter specific events when evaluating the alarm.", default=[],
                            schema=QUERY_FACTOR),
        **COMMON}


@register
class GnocchiResourcesAlarm(AodhAlarm):
    """An Aodh alarm on one Gnocchi resource's metric."""

    type_name = "OS::Aodh::GnocchiResourcesAlarm"
    alarm_type = "gnocchi_resources_threshold"
    rule_properties = ("metric", "resource_id", "resource_type", *GNOCCHI)
    properties_schema = {
        "metric": _updatable("String", "Metric name watched by the alarm.", required=True),
        "resource_id": _updatable("String", "Id of a resource.", required=True),
        "resource_type": _updatable("String", "Resource type.", required=True),
        **GNOCCHI, **COMMON}


@register
class GnocchiAggregationByMetricsAlarm(AodhAlarm):
    """An Aodh alarm on an aggregation of Gnocchi metrics."""

    type_name = "OS::Aodh::GnocchiAggregationByMetricsAlarm"
    alarm_type = "gnocchi_aggregation_by_metrics_threshold"
    rule_properties = ("metrics", *GNOCCHI)
    properties_schema = {
        "metrics": _updatable("List", "A list of metric ids.", required=True),
        **GNOCCHI, **COMMON}


@register
class GnocchiAggregationByResourcesAlarm(AodhAlarm):
    """An Aodh alarm on a metric of the Gnocchi resources a query selects (the classic
    autoscaling template's alarm calling a scaling policy's ``alarm_url``)."""

    type_name = "OS::Aodh::GnocchiAggregationByResourcesAlarm"
    alarm_type = "gnocchi_aggregation_by_resources_threshold"
    rule_properties = ("metric", "query", "resource_type", *GNOCCHI)
    properties_schema = {
        "metric": _updatable("String", "Metric name watched by the alarm.", required=True),
        "query": _updatable("String", "The query to filter the metrics.", required=True),
        "resource_type": _updatable("String", "Resource type.", required=True),
        **GNOCCHI, **COMMON}


@register
class CompositeAlarm(AodhAlarm):
    """An Aodh alarm combining other alarms' rules with ``and``/``or``."""

    type_name = "OS::Aodh::CompositeAlarm"
    alarm_type = "composite"

    properties_schema = {
        "composite_rule": _updatable("Map", "Composite threshold rules in JSON format.",
                                     required=True, schema={
            "operator": _updatable("String", "The operator indicates how to combine the "
                                   "rules.", required=True,
                                   constraints=(AllowedValues(("or", "and")),)),
            "rules": _updatable("List", "Rules list. Basic threshold/gnocchi rules and nested "
                                "dict which combine threshold/gnocchi rules by \"and\" or "
                                "\"or\" are allowed. For example, the form is like: [RULE1, "
                                "RULE2, {\"and\": [RULE3, RULE4]}], the basic "
                                "threshold/gnocchi rules must include a \"type\" field.",
                                required=True, constraints=(Length(min=2),))}),
        **COMMON}

    def cloud_fields(self, props, names=None):
        """Aodh's ``composite_rule`` is ``{operator: rules}`` (Heat's parse_composite_rule)."""
        rule = props["composite_rule"]
        return {**super().cloud_fields(props),
                "composite_rule": {rule["operator"]: rule["rules"]}}


@register
class PrometheusAlarm(AodhAlarm):
    """An Aodh alarm on a Prometheus query."""

    type_name = "OS::Aodh::PrometheusAlarm"
    alarm_type = "prometheus"
    rule_properties = ("comparison_operator", "query", "threshold")
    properties_schema = {
        "comparison_operator": GNOCCHI["comparison_operator"],
        "query": _updatable("String", "The PromQL query string to fetch metrics data from "
                            "Prometheus.", required=True),
        "threshold": GNOCCHI["threshold"],
        **COMMON}


@register
class LBMemberHealthAlarm(AodhAlarm):
    """An Aodh alarm on the health of an Octavia pool's members (marks the scaling
    group's unhealthy members)."""

    type_name = "OS::Aodh::LBMemberHealthAlarm"
    alarm_type = "loadbalancer_member_health"
    rule_properties = ("pool_id", "stack_id", "autoscaling_group_id")
    properties_schema = {
        "pool": prop("String", "Name or ID of the loadbalancer pool for which the health of "
                     "each member will be evaluated.", required=True, update_allowed=True),
        "stack": prop("String", "Name or ID of the root / top level Heat stack containing "
                      "the loadbalancer pool and members.", required=True, update_allowed=True),
        "autoscaling_group_id": prop("String", "ID of the autoscaling group that contains "
                                     "the loadbalancer members.", required=True,
                                     update_allowed=True),
        **COMMON}

    def cloud_fields(self, props, names=None):
        renamed = {**props, "pool_id": props.get("pool"), "stack_id": props.get("stack")}
        return super().cloud_fields(renamed)


@register
class CombinationAlarm(HiddenPlaceholder):
    """Heat 27's hidden placeholder: Aodh removed combination alarms."""

    type_name = "OS::Aodh::CombinationAlarm"
    required_service = AODH

