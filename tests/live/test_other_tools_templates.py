"""Issue 36: templates other tools write (Magnum, Rally, Tacker, heat-tempest-plugin) run
unchanged, through python-heatclient against the live service."""
import json
import time
import uuid

import pytest
import requests
from heatclient import exc as heat_exc

from tests.live.test_stack_lifecycle import create, hc, wait_deleted, wait_stack  # noqa: F401

pytestmark = pytest.mark.live


def outputs_of(stack):
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


# Duplicate mapping keys: Heat's loader keeps the last value ---------------------------------

MAGNUM_LIKE = """
heat_template_version: 2014-10-16
parameters:
  fixed_subnet_cidr: {type: string, default: 10.0.0.0/24}
  fixed_subnet_cidr: {type: string, default: 10.9.0.0/24}
resources:
  network:
    type: fragment.yaml
    properties:
      cidr: {get_param: fixed_subnet_cidr}
outputs:
  cidr: {value: {get_attr: [network, cidr]}}
"""

FRAGMENT = """
heat_template_version: 2014-10-16
parameters:
  cidr: {type: string}
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {get_param: cidr}
      value: {list_join: ["", ["net-", {get_param: cidr}]]}
outputs:
  cidr: {value: {get_attr: [value, value]}}
"""


def test_a_key_named_twice_keeps_its_last_value_as_in_heat(hc):
    # The template and the file go as text (heatclient sends `files` as read), so
    # heatweb's loader reads both; the environment too.
    environment = "parameter_defaults:\n  fixed_subnet_cidr: 10.1.0.0/24\n" \
                  "  fixed_subnet_cidr: 10.2.0.0/24\n"
    files = {"fragment.yaml": FRAGMENT}
    shown = hc.stacks.validate(template=MAGNUM_LIKE, files=files)
    assert shown["Parameters"]["fixed_subnet_cidr"]["Default"] == "10.9.0.0/24"
    _, sid = create(hc, MAGNUM_LIKE, files=files, environment=environment)
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    assert outputs_of(stack)["cidr"] == "net-10.2.0.0/24"
    assert stack.parameters["fixed_subnet_cidr"] == "10.2.0.0/24"


def test_a_json_template_naming_a_key_twice_keeps_the_last(hc):
    text = ('{"heat_template_version": "2021-04-16", "outputs": {"o": {"value": "first"}, '
            '"o": {"value": "last"}}}')
    _, sid = create(hc, text)
    assert outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE")) == {"o": "last"}


# yaql, with Heat's semantics and limits --------------------------------------------------

YAQL = """
heat_template_version: 2017-09-01
parameters:
  master_flavors: {type: comma_delimited_list, default: "m1.small,m1.large"}
  count: {type: number, default: 3}
conditions:
  many: {yaql: {expression: "$.data.n > 2", data: {n: {get_param: count}}}}
resources:
  token:
    type: OS::Heat::RandomString
    properties: {length: 6}
  picked:
    type: OS::Heat::Value
    properties:
      value:
        yaql:
          expression: $.data.flavors.where($.endsWith('large')).first()
          data: {flavors: {get_param: master_flavors}}
  from_attr:
    type: OS::Heat::Value
    properties:
      value:
        yaql:
          # Magnum's kind: a value known only once a resource exists.
          expression: $.data.token.toUpper() + '-' + str($.data.n)
          data: {token: {get_attr: [token, value]}, n: {get_param: count}}
  only_if_many:
    type: OS::Heat::None
    condition: many
outputs:
  picked: {value: {get_attr: [picked, value]}}
  from_attr: {value: {get_attr: [from_attr, value]}}
  token: {value: {get_attr: [token, value]}}
  squares: {value: {yaql: {expression: "$.data.l.select($ * $)", data: {l: [1, 2, 3]}}}}
  keyed: {value: {yaql: {expression: "dict($.data.names.select([$, len($)]))",
                         data: {names: [ab, cde]}}}}
"""


def test_yaql_as_heat_evaluates_it(hc):
    hc.stacks.validate(template=YAQL)
    _, sid = create(hc, YAQL)
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    outputs = outputs_of(stack)
    assert outputs["picked"] == "m1.large"
    assert outputs["from_attr"] == outputs["token"].upper() + "-3"
    assert outputs["squares"] == [1, 4, 9]
    assert outputs["keyed"] == {"ab": 2, "cde": 3}
    assert {r.resource_name for r in hc.resources.list(sid)} >= {"only_if_many"}
    _, sid = create(hc, YAQL, parameters={"count": 2})
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    assert "only_if_many" not in {r.resource_name for r in hc.resources.list(sid)}


def yaql_value(expression, version="2016-10-14", data=None):
    function = {"expression": expression}
    if data is not None:
        function["data"] = data
    return {"heat_template_version": version, "resources": {"v": {
        "type": "OS::Heat::Value", "properties": {"value": {"yaql": function}}}}}


def refused(hc, template, *fragments):
    with pytest.raises(heat_exc.HTTPBadRequest) as error:
        hc.stacks.validate(template=template)
    body = error.value.error["error"]
    assert body["type"] == "StackValidationFailed", body
    for fragment in fragments:
        assert fragment in body["message"], body["message"]
    name = f"y{uuid.uuid4().hex[:8]}"
    with pytest.raises(heat_exc.HTTPBadRequest):
        hc.stacks.create(stack_name=name, template=template)
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.stacks.get(name)


@pytest.mark.parametrize("expression, fragments", [
    # Heat's limit_iterators (200) and memory_quota (10000 bytes).
    ("range(201).select($)", ["Collection length exceeds 200 elements"]),
    ("'x' * 20000", ["Expression consumed too much memory"]),
    # Within both, but billions of steps, or one long call into C: heatweb's clock.
    ("range(200).select(range(200).select(range(200).select(range(200)).sum()).sum()).sum()",
     ["took more than 1 s and was stopped"]),
    ("pow(10, 100000000)", ["took more than 1 s and was stopped"]),
    # Parsed at validate, as Heat does.
    ("$.data.(", ["Bad expression", "Parse error"]),
], ids=["iterators", "memory", "steps", "long-call", "syntax"])
def test_a_hostile_or_bad_yaql_expression_is_a_400(hc, expression, fragments):
    refused(hc, yaql_value(expression), "resources.v.properties.value.yaql", *fragments)
    # The web worker that answered is free: the next request is served.
    hc.stacks.validate(template=yaql_value("$.data.a", data={"a": 1}))


def test_yaql_needs_a_2016_10_14_template_and_its_syntax(hc):
    with pytest.raises(heat_exc.HTTPBadRequest):
        hc.stacks.validate(template=yaql_value("1", data={}, version="2016-10-14") | {
            "resources": {"v": {"type": "OS::Heat::Value", "properties": {
                "value": {"yaql": {"expression": "1", "date": {}}}}}}})
    # Before Newton, a one-key map named yaql is data, as in Heat.
    hc.stacks.validate(template=yaql_value("$.data", version="2015-10-15"))


# Heat 27's hidden legacy types ----------------------------------------------------------

LBAAS_V1 = """
heat_template_version: 2015-04-30
resources:
  monitor:
    type: OS::Neutron::HealthMonitor
    properties: {type: HTTP, delay: 3, max_retries: 5, timeout: 5}
  pool:
    type: OS::Neutron::Pool
    properties:
      protocol: HTTP
      monitors: [{get_resource: monitor}]
      subnet: private-subnet
      lb_method: ROUND_ROBIN
      vip: {protocol_port: 80}
  member:
    type: OS::Neutron::PoolMember
    properties: {pool_id: {get_resource: pool}, address: 10.0.0.5, protocol_port: 80}
  lb:
    type: OS::Neutron::LoadBalancer
    properties: {protocol_port: 80, pool_id: {get_resource: pool}}
  v2:
    type: OS::Neutron::LBaaS::LoadBalancer
    properties: {vip_subnet: private-subnet}
  listener:
    type: OS::Neutron::LBaaS::Listener
    properties: {loadbalancer: {get_resource: v2}, protocol: HTTP, protocol_port: 80}
  v2_pool:
    type: OS::Neutron::LBaaS::Pool
    properties: {listener: {get_resource: listener}, lb_algorithm: ROUND_ROBIN,
                 protocol: HTTP}
  v2_member:
    type: OS::Neutron::LBaaS::PoolMember
    properties: {pool: {get_resource: v2_pool}, address: 10.0.0.6, protocol_port: 80}
  v2_monitor:
    type: OS::Neutron::LBaaS::HealthMonitor
    properties: {pool: {get_resource: v2_pool}, type: HTTP, delay: 3, max_retries: 3,
                 timeout: 3}
  policy:
    type: OS::Neutron::LBaaS::L7Policy
    properties: {listener: {get_resource: listener}, action: REJECT}
  rule:
    type: OS::Neutron::LBaaS::L7Rule
    properties: {l7policy: {get_resource: policy}, type: PATH, compare_type: STARTS_WITH,
                 value: /api}
  domain:
    type: OS::Designate::Domain
    properties: {name: example.com., email: admin@example.com}
  record:
    type: OS::Designate::Record
    properties: {domain: {get_resource: domain}, name: www.example.com., type: A,
                 data: 10.0.0.5}
  bay:
    type: OS::Magnum::Bay
    properties: {baymodel: k8s, node_count: 2}
  restarter:
    type: OS::Heat::HARestarter
    properties: {InstanceId: abc}
outputs:
  vip: {value: {get_attr: [pool, vip, address]}}
  pool: {value: {get_resource: pool}}
"""


def test_heats_hidden_legacy_types_validate_and_are_placeholders(hc):
    # Heat 27 keeps them registered as its NoneResource, HIDDEN: any properties,
    # nothing made, attributes null; never listed nor described.
    hc.stacks.validate(template=LBAAS_V1)
    _, sid = create(hc, LBAAS_V1)
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    outputs = outputs_of(stack)
    assert outputs["vip"] is None
    assert outputs["pool"] == hc.resources.get(sid, "pool").physical_resource_id
    listed = {t.resource_type for t in hc.resource_types.list()}
    for type_name in ("OS::Neutron::Pool", "OS::Neutron::LBaaS::Listener",
                      "OS::Designate::Domain", "OS::Magnum::Bay",
                      "OS::Heat::SoftwareDeployments", "OS::Heat::StructuredDeployments"):
        assert type_name not in listed
        with pytest.raises(heat_exc.HTTPBadRequest) as raised:
            hc.resource_types.get(type_name)
        assert raised.value.error["error"]["type"] == "NotSupported"
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)


# OS::Heat::TestResource as Rally's templates use it -----------------------------------------

RALLY_OUTPUTS = """
heat_template_version: 2013-05-23
parameters:
  attr_wait_secs: {type: number, default: 0.5}
resources:
  test_resource:
    type: OS::Heat::TestResource
    properties:
      value: Rally
      attr_wait_secs: {get_param: attr_wait_secs}
outputs:
  val1: {value: {get_attr: [test_resource, output]}}
"""


def test_test_resource_takes_rallys_attr_wait_secs(hc):
    _, sid = create(hc, RALLY_OUTPUTS)
    assert outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE")) == {"val1": "Rally"}
    schema = hc.resource_types.get("OS::Heat::TestResource")["properties"]["attr_wait_secs"]
    assert schema["type"] == "number" and schema["update_allowed"] is True
    hc.stacks.update(sid, template=RALLY_OUTPUTS, parameters={"attr_wait_secs": 2})
    stack = wait_stack(hc, sid, "UPDATE_COMPLETE")
    assert hc.resources.get(sid, "test_resource").physical_resource_id
    assert outputs_of(stack) == {"val1": "Rally"}


# Nested stacks see the parent's files ----------------------------------------------------

# heat-tempest-plugin's remote_nested_root.yaml, intermediate and base (the router and
# network replaced by values, so the shape is the point).
REMOTE_ROOT = """
heat_template_version: 2015-10-15
parameters:
  name: {type: string, constraints: [{allowed_pattern: "[a-z][a-z0-9-]{1,}"}]}
  region: {type: string, default: RegionOne}
resources:
  network_stack:
    type: OS::Heat::Stack
    properties:
      template: {get_file: remote_nested_intermediate.yaml}
      context:
        region_name: {get_param: region}
      parameters:
        name: {get_param: name}
outputs:
  router:
    value: {get_attr: [network_stack, outputs, router]}
"""

REMOTE_INTERMEDIATE = """
heat_template_version: 2015-10-15
parameters:
  name: {type: string, constraints: [{allowed_pattern: "[a-z][a-z0-9-]{1,}"}]}
resources:
  network_stack_as_custom_type:
    type: remote_nested_base.yaml
    properties:
      name: {get_param: name}
outputs:
  router:
    value: {get_attr: [network_stack_as_custom_type, router]}
"""

REMOTE_BASE = """
heat_template_version: 2015-10-15
parameters:
  name: {type: string}
resources:
  router:
    type: OS::Heat::Value
    properties:
      value: {list_join: ["-", [router, {get_param: name}, {get_file: suffix.txt}]]}
outputs:
  router:
    value: {get_attr: [router, value]}
"""


def test_a_nested_stack_sees_the_parents_files(hc):
    files = {"remote_nested_intermediate.yaml": REMOTE_INTERMEDIATE,
             "remote_nested_base.yaml": REMOTE_BASE, "suffix.txt": "x1"}
    parameters = {"name": "edge"}
    hc.stacks.validate(template=REMOTE_ROOT, files=files, parameters=parameters)
    _, sid = create(hc, REMOTE_ROOT, files=files, parameters=parameters)
    stack = wait_stack(hc, sid, "CREATE_COMPLETE")
    assert outputs_of(stack) == {"router": "router-edge-x1"}


# A server's addresses and networks keyed by network id as well as name --------------------

# test_server_signal.yaml's shape (heat-tempest-plugin): the floating IP association reads
# the port from the server's addresses by the network's id.
SERVER_SIGNAL = """
heat_template_version: 2013-05-23
resources:
  public:
    type: OS::Neutron::Net
    properties: {value_specs: {"router:external": true}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: public}, cidr: 172.25.4.0/24, enable_dhcp: false}
  floating_ip:
    type: OS::Neutron::FloatingIP
    depends_on: public_subnet
    properties: {floating_network: {get_resource: public}}
  network:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: network}, ip_version: 4, cidr: 10.100.0.0/16}
  router:
    type: OS::Neutron::Router
    depends_on: public_subnet
    properties: {external_gateway_info: {network: {get_resource: public}}}
  router_interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  server:
    type: OS::Nova::Server
    properties:
      image: cirros
      flavor: m1.small
      networks: [{subnet: {get_resource: subnet}}]
  server_floating_ip_assoc:
    type: OS::Neutron::FloatingIPAssociation
    depends_on: router_interface
    properties:
      floatingip_id: {get_resource: floating_ip}
      port_id: {get_attr: [server, addresses, {get_resource: network}, 0, port]}
outputs:
  by_id: {value: {get_attr: [server, networks, {get_resource: network}, 0]}}
  by_name: {value: {get_attr: [server, networks, {get_attr: [network, name]}, 0]}}
  port: {value: {get_attr: [server, addresses, {get_resource: network}, 0, port]}}
"""


def test_a_servers_addresses_and_networks_are_keyed_by_network_id_too(hc):
    _, sid = create(hc, SERVER_SIGNAL, disable_rollback=True)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["by_id"] and outputs["by_id"] == outputs["by_name"]
    assert outputs["by_id"].startswith("10.100.")
    ports = {r.resource_name: r for r in hc.resources.list(sid)}
    assert ports["server_floating_ip_assoc"].resource_status == "CREATE_COMPLETE"
    assert outputs["port"]


# The simulated cloud as strict as Neutron and Octavia --------------------------------------

def _network_template(extra):
    return f"""
heat_template_version: 2018-08-31
resources:
  public:
    type: OS::Neutron::Net
    properties: {{value_specs: {{"router:external": true}}}}
  public_subnet:
    type: OS::Neutron::Subnet
    properties: {{network: {{get_resource: public}}, cidr: 172.26.4.0/24, enable_dhcp: false}}
  net:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties: {{network: {{get_resource: net}}, cidr: 10.77.0.0/24}}
{extra}"""


def _failure(hc, template):
    _, sid = create(hc, template, disable_rollback=True)
    wait_stack(hc, sid, "CREATE_FAILED")
    failed = [r for r in hc.resources.list(sid) if r.resource_status == "CREATE_FAILED"]
    assert len(failed) == 1, [(r.resource_name, r.resource_status) for r in failed]
    subnets = {r.resource_name: r.physical_resource_id for r in hc.resources.list(sid)}
    return failed[0], subnets


def test_two_ports_with_one_fixed_ip_are_refused_as_neutron_refuses_them(hc):
    template = _network_template("""
  first:
    type: OS::Neutron::Port
    depends_on: subnet
    properties: {network: {get_resource: net}, fixed_ips: [{ip_address: 10.77.0.50}]}
  second:
    type: OS::Neutron::Port
    depends_on: first
    properties: {network: {get_resource: net}, fixed_ips: [{ip_address: 10.77.0.50}]}
""")
    failed, ids = _failure(hc, template)
    assert failed.resource_name == "second"
    assert (f"IP address 10.77.0.50 already allocated in subnet {ids['subnet']}"
            in failed.resource_status_reason)


def test_two_floating_ips_with_one_address_are_refused_as_neutron_refuses_them(hc):
    template = _network_template("""
  first:
    type: OS::Neutron::FloatingIP
    depends_on: public_subnet
    properties: {floating_network: {get_resource: public}, floating_ip_address: 172.26.4.9}
  second:
    type: OS::Neutron::FloatingIP
    depends_on: first
    properties: {floating_network: {get_resource: public}, floating_ip_address: 172.26.4.9}
""")
    failed, ids = _failure(hc, template)
    assert failed.resource_name == "second"
    assert (f"IP address 172.26.4.9 already allocated in subnet {ids['public_subnet']}"
            in failed.resource_status_reason)


# Magnum's lb_api.yaml: the API's floating IP goes to the load balancer's VIP port.
LB_API = _network_template("""
  router:
    type: OS::Neutron::Router
    depends_on: public_subnet
    properties: {external_gateway_info: {network: {get_resource: public}}}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  loadbalancer:
    type: OS::Octavia::LoadBalancer
    properties: {vip_subnet: {get_resource: subnet}, vip_address: 10.77.0.20}
  taken:
    type: OS::Neutron::Port
    depends_on: loadbalancer
    properties: {network: {get_resource: net}, fixed_ips: [{ip_address: 10.77.0.21}]}
  floating:
    type: OS::Neutron::FloatingIP
    depends_on: interface
    properties:
      floating_network: {get_resource: public}
      port_id: {get_attr: [loadbalancer, vip_port_id]}
outputs:
  vip_port: {value: {get_attr: [loadbalancer, vip_port_id]}}
  fip_port: {value: {get_attr: [floating, port_id]}}
  fixed: {value: {get_attr: [floating, fixed_ip_address]}}
""")


def test_a_load_balancers_vip_port_is_a_real_port(hc):
    _, sid = create(hc, LB_API, disable_rollback=True)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["fip_port"] == outputs["vip_port"]
    assert outputs["fixed"] == "10.77.0.20"
    # Deleting the load balancer deletes its port (or the network could not go).
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
    # The VIP's address is the port's: no other port gets it.
    failed, ids = _failure(hc, LB_API.replace("ip_address: 10.77.0.21", "ip_address: 10.77.0.20"))
    assert failed.resource_name == "taken"
    assert (f"IP address 10.77.0.20 already allocated in subnet {ids['subnet']}"
            in failed.resource_status_reason)


# Aodh's alarms on the simulated cloud ---------------------------------------------------------

# Heat's classic autoscaling template (hot/autoscaling.yaml's shape): an Aodh alarm whose
# action is a scaling policy's alarm_url.
AUTOSCALING = """
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 4
      resource:
        type: OS::Nova::Server
        properties:
          image: cirros
          flavor: m1.small
          metadata: {"metering.server_group": {get_param: "OS::stack_id"}}
  scaleup_policy:
    type: OS::Heat::ScalingPolicy
    properties:
      adjustment_type: change_in_capacity
      auto_scaling_group_id: {get_resource: group}
      cooldown: 0
      scaling_adjustment: 1
  cpu_alarm_high:
    type: OS::Aodh::GnocchiAggregationByResourcesAlarm
    properties:
      description: Scale up if CPU > 80%
      metric: cpu
      aggregation_method: rate:mean
      granularity: 300
      evaluation_periods: 1
      threshold: 4800000000.0
      resource_type: instance
      comparison_operator: gt
      alarm_actions:
        - str_replace:
            template: trust+url
            params:
              url: {get_attr: [scaleup_policy, signal_url]}
        - {get_attr: [scaleup_policy, alarm_url]}
      query:
        str_replace:
          template: '{"=": {"server_group": "stack_id"}}'
          params:
            stack_id: {get_param: "OS::stack_id"}
  event_alarm:
    type: OS::Aodh::EventAlarm
    properties:
      event_type: compute.instance.update
      query: [{field: traits.state, value: error, op: eq}]
      alarm_queues: [vnf-events]
  threshold_alarm:
    type: OS::Ceilometer::Alarm
    properties: {meter_name: cpu_util, statistic: avg, period: 60, evaluation_periods: 1,
                 threshold: 50, comparison_operator: gt}
  metrics_alarm:
    type: OS::Aodh::GnocchiAggregationByMetricsAlarm
    properties: {metrics: [m1, m2], threshold: 10, aggregation_method: mean}
  resource_alarm:
    type: OS::Aodh::GnocchiResourcesAlarm
    properties: {metric: cpu, resource_id: {get_param: "OS::stack_id"}, resource_type: instance,
                 threshold: 80, comparison_operator: gt}
  composite_alarm:
    type: OS::Aodh::CompositeAlarm
    properties:
      composite_rule:
        operator: or
        rules:
          - {type: gnocchi_resources_threshold, metric: cpu, resource_id: r1,
             resource_type: instance, threshold: 80}
          - {type: gnocchi_resources_threshold, metric: memory, resource_id: r1,
             resource_type: instance, threshold: 90}
  prometheus_alarm:
    type: OS::Aodh::PrometheusAlarm
    properties: {query: avg(cpu_usage), threshold: 80, comparison_operator: gt}
  member_health_alarm:
    type: OS::Aodh::LBMemberHealthAlarm
    properties: {pool: pool-1, stack: {get_param: "OS::stack_id"},
                 autoscaling_group_id: {get_resource: group}}
outputs:
  size: {value: {get_attr: [group, current_size]}}
  alarm: {value: {get_attr: [cpu_alarm_high, show]}}
  alarm_url: {value: {get_attr: [scaleup_policy, alarm_url]}}
  event: {value: {get_attr: [event_alarm, show]}}
  others:
    value:
      resource: {get_attr: [resource_alarm, show]}
      composite: {get_attr: [composite_alarm, show]}
      prometheus: {get_attr: [prometheus_alarm, show]}
      member_health: {get_attr: [member_health_alarm, show]}
  group_id: {value: {get_resource: group}}
"""


def notify(url, alarm):
    """What Aodh's notifier posts to an alarm action when the alarm goes to ``alarm``."""
    body = {"alarm_name": alarm["name"], "alarm_id": alarm["id"], "severity": "low",
            "previous": "insufficient data", "current": "alarm",
            "reason": "Transition to alarm due to 1 samples outside threshold",
            "reason_data": {"type": "threshold", "disposition": "outside", "count": 1}}
    return requests.post(url, json=body, timeout=30)


def test_an_aodh_alarm_calling_a_scaling_policy_grows_the_group(hc):
    hc.stacks.validate(template=AUTOSCALING)
    _, sid = create(hc, AUTOSCALING)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    assert outputs["size"] == 1
    alarm = outputs["alarm"]
    assert alarm["type"] == "gnocchi_aggregation_by_resources_threshold"
    rule = alarm["gnocchi_aggregation_by_resources_threshold_rule"]
    assert rule["metric"] == "cpu" and rule["query"] == '{"=": {"server_group": "%s"}}' % sid
    assert alarm["alarm_actions"][1] == outputs["alarm_url"]
    assert alarm["alarm_actions"][0].startswith("trust+http")
    assert outputs["event"]["alarm_actions"] == ["trust+zaqar://?queue_name=vnf-events"]
    assert outputs["event"]["event_rule"]["event_type"] == "compute.instance.update"
    # The other types in Aodh's shape, as Heat sends them.
    others = outputs["others"]
    assert others["resource"]["gnocchi_resources_threshold_rule"] == {
        "metric": "cpu", "resource_id": sid, "resource_type": "instance", "threshold": 80,
        "comparison_operator": "gt"}
    assert list(others["composite"]["composite_rule"]) == ["or"]
    assert [r["metric"] for r in others["composite"]["composite_rule"]["or"]] == \
        ["cpu", "memory"]
    assert others["prometheus"]["prometheus_rule"] == {
        "query": "avg(cpu_usage)", "threshold": 80, "comparison_operator": "gt"}
    assert others["member_health"]["loadbalancer_member_health_rule"] == {
        "pool_id": "pool-1", "stack_id": sid, "autoscaling_group_id": outputs["group_id"]}
    # The simulated cloud's alarms never evaluate: the test is Aodh's notifier.
    assert notify(alarm["alarm_actions"][1], alarm).status_code == 200
    for _ in range(150):
        if outputs_of(hc.stacks.get(sid))["size"] == 2:
            break
        time.sleep(0.2)
    assert outputs_of(hc.stacks.get(sid))["size"] == 2
    # Suspend disables the alarms, resume enables them, as Heat.
    hc.actions.suspend(sid)
    wait_stack(hc, sid, "SUSPEND_COMPLETE")
    assert outputs_of(hc.stacks.get(sid))["alarm"]["enabled"] is False
    hc.actions.resume(sid)
    wait_stack(hc, sid, "RESUME_COMPLETE")
    assert outputs_of(hc.stacks.get(sid))["alarm"]["enabled"] is True
    listed = {t.resource_type for t in hc.resource_types.list()}
    assert {"OS::Aodh::Alarm", "OS::Aodh::EventAlarm", "OS::Aodh::GnocchiResourcesAlarm",
            "OS::Aodh::GnocchiAggregationByMetricsAlarm",
            "OS::Aodh::GnocchiAggregationByResourcesAlarm", "OS::Aodh::CompositeAlarm",
            "OS::Aodh::PrometheusAlarm", "OS::Aodh::LBMemberHealthAlarm"} <= listed
    assert "OS::Aodh::CombinationAlarm" not in listed
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)


def _grown_to(hc, sid, size):
    for _ in range(150):
        if outputs_of(hc.stacks.get(sid))["size"] == size:
            return True
        time.sleep(0.2)
    return False


def test_an_aodh_alarm_under_a_stack_lock_follows_the_locks_mode(hc):
    name, sid = create(hc, AUTOSCALING)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    alarm, url = outputs["alarm"], outputs["alarm_url"]
    # Locked allowing signals: the alarm's call scales the group, and the lock holds.
    hc.http_client.post(f"/stacks/{name}/{sid}/actions",
                        data={"lock": {"level": "stacks", "allow": ["signal"]}})
    wait_stack(hc, sid, "LOCK_COMPLETE")
    assert notify(url, alarm).status_code == 200
    assert _grown_to(hc, sid, 2)
    wait_stack(hc, sid, "LOCK_COMPLETE")
    hc.http_client.post(f"/stacks/{name}/{sid}/actions", data={"unlock": None})
    wait_stack(hc, sid, "UNLOCK_COMPLETE")
    # Locked without modes: the call is answered and ignored (docs/locking.md).
    hc.http_client.post(f"/stacks/{name}/{sid}/actions", data={"lock": {"level": "stacks"}})
    wait_stack(hc, sid, "LOCK_COMPLETE")
    assert notify(url, alarm).status_code == 200
    events = hc.events.list(sid, resource_name="scaleup_policy")
    assert any("signal ignored: stack is locked" in e.resource_status_reason for e in events)
    assert outputs_of(hc.stacks.get(sid))["size"] == 2


# The group both CFN autoscaling templates below scale: one to three cirros instances.
CFN_GROUP = {
    "LaunchConfig": {"Type": "AWS::AutoScaling::LaunchConfiguration", "Properties": {
        "ImageId": "cirros", "InstanceType": "m1.small"}},
    "WebServerGroup": {"Type": "AWS::AutoScaling::AutoScalingGroup", "Properties": {
        "AvailabilityZones": {"Fn::GetAZs": ""},
        "LaunchConfigurationName": {"Ref": "LaunchConfig"}, "MinSize": "1",
        "MaxSize": "3"}},
}


# Old CFN-style autoscaling (heat-templates' AutoScalingCeilometer.yaml): an alarm action that
# is the name of a scaling policy of the stack is the policy's AlarmUrl (Heat's
# actions_to_urls), not a URL Aodh would call in vain.
CFN_AUTOSCALING = {
    "HeatTemplateFormatVersion": "2012-12-12",
    "Parameters": {"HighActions": {"Type": "CommaDelimitedList",
                                   "Default": "WebServerScaleUpPolicy"}},
    "Resources": {
        **CFN_GROUP,
        "WebServerScaleUpPolicy": {"Type": "AWS::AutoScaling::ScalingPolicy", "Properties": {
            "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": "1",
            "AutoScalingGroupName": {"Ref": "WebServerGroup"}}},
        "WebServerScaleDownPolicy": {"Type": "AWS::AutoScaling::ScalingPolicy", "Properties": {
            "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": "-1",
            "AutoScalingGroupName": {"Ref": "WebServerGroup"}}},
        "CPUAlarmHigh": {"Type": "OS::Ceilometer::Alarm", "Properties": {
            "meter_name": "cpu_util", "statistic": "avg", "period": "60",
            "evaluation_periods": "1", "threshold": "50", "comparison_operator": "gt",
            "alarm_actions": {"Ref": "HighActions"},
            "ok_actions": ["WebServerScaleDownPolicy", "", "https://example.com/ok"]}}},
    "Outputs": {
        "alarm": {"Value": {"Fn::GetAtt": ["CPUAlarmHigh", "show"]}},
        "up": {"Value": {"Fn::GetAtt": ["WebServerScaleUpPolicy", "AlarmUrl"]}},
        "down": {"Value": {"Fn::GetAtt": ["WebServerScaleDownPolicy", "AlarmUrl"]}}},
}


def _members(hc, sid, group):
    members_id = hc.resources.get(sid, group).physical_resource_id
    return [r for r in hc.resources.list(members_id) if r.resource_status == "CREATE_COMPLETE"]


def test_an_alarm_action_naming_a_scaling_policy_calls_its_alarm_url(hc):
    _, sid = create(hc, CFN_AUTOSCALING)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    alarm = outputs["alarm"]
    assert "/webhooks/signal/" in outputs["up"]
    assert alarm["alarm_actions"] == [outputs["up"]]
    assert alarm["ok_actions"] == [outputs["down"], "https://example.com/ok"]
    # The alarm waited for the policies it names (their URL exists only once they do).
    events = sorted(hc.events.list(sid), key=lambda e: e.event_time)
    done = [e.resource_name for e in events if e.resource_status == "CREATE_COMPLETE"]
    assert done.index("CPUAlarmHigh") > done.index("WebServerScaleUpPolicy")
    assert done.index("CPUAlarmHigh") > done.index("WebServerScaleDownPolicy")
    # Aodh's notifier calling the action grows the group.
    assert notify(alarm["alarm_actions"][0], alarm).status_code == 200
    deadline = time.monotonic() + 60
    while len(_members(hc, sid, "WebServerGroup")) != 2:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # The update preview resolves the names as the update does: unchanged, then updated.
    def preview(actions):
        changes = hc.stacks.preview_update(sid, template=CFN_AUTOSCALING,
                                           parameters={"HighActions": actions})
        return {kind for kind, entries in changes["resource_changes"].items()
                if "CPUAlarmHigh" in {e["resource_name"] for e in entries}}
    assert preview("WebServerScaleUpPolicy") == {"unchanged"}
    assert preview("WebServerScaleDownPolicy") == {"updated"}
    # Naming the other policy updates the alarm in place with that policy's URL.
    physical = hc.resources.get(sid, "CPUAlarmHigh").physical_resource_id
    hc.stacks.update(sid, template=CFN_AUTOSCALING,
                     parameters={"HighActions": "WebServerScaleDownPolicy"})
    outputs = outputs_of(wait_stack(hc, sid, "UPDATE_COMPLETE"))
    assert outputs["alarm"]["alarm_actions"] == [outputs["down"]]
    assert hc.resources.get(sid, "CPUAlarmHigh").physical_resource_id == physical
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)


def test_an_alarm_action_naming_a_resource_without_alarm_url_fails_as_heats(hc):
    """Heat 27 asks the named resource for ``AlarmUrl``: an OS::Heat::ScalingPolicy has
    ``alarm_url`` (given with get_attr), so naming it is Heat's InvalidTemplateAttribute."""
    template = """
heat_template_version: 2016-10-14
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties: {min_size: 1, max_size: 2, resource: {type: OS::Heat::None}}
  scaleup_policy:
    type: OS::Heat::ScalingPolicy
    properties: {adjustment_type: change_in_capacity, scaling_adjustment: 1,
                 auto_scaling_group_id: {get_resource: group}}
  cpu_alarm_high:
    type: OS::Aodh::GnocchiAggregationByMetricsAlarm
    properties: {metrics: [m1], threshold: 10, aggregation_method: mean,
                 alarm_actions: [scaleup_policy]}
"""
    failed, _ = _failure(hc, template)
    assert failed.resource_name == "cpu_alarm_high"
    assert "The Referenced Attribute (scaleup_policy AlarmUrl) is incorrect." in \
        failed.resource_status_reason


# Heat's classic CFN autoscaling (heat-templates' AutoScalingMultiAZSample shape): an
# AWS::CloudWatch::Alarm with CloudFormation's properties whose AlarmActions is
# {Ref: <AWS::AutoScaling::ScalingPolicy>}, the policy's AlarmUrl. Heat 27's global
# environment makes the type a template of one OS::Aodh::Alarm; heatweb's does the same.
CFN_CLOUDWATCH = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {
        **CFN_GROUP,
        "WebServerScaleUpPolicy": {"Type": "AWS::AutoScaling::ScalingPolicy", "Properties": {
            "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": "1", "Cooldown": "60",
            "AutoScalingGroupName": {"Ref": "WebServerGroup"}}},
        "CPUAlarmHigh": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
            "AlarmDescription": "Scale-up if CPU > 50% for 1 minute",
            "MetricName": "CPUUtilization", "Namespace": "system/linux",
            "Statistic": "Average", "Period": "60", "EvaluationPeriods": "1",
            "Threshold": "50", "ComparisonOperator": "GreaterThanThreshold",
            "AlarmActions": [{"Ref": "WebServerScaleUpPolicy"}],
            "Dimensions": [{"Name": "AutoScalingGroupName",
                            "Value": {"Ref": "WebServerGroup"}}]}}},
    "Outputs": {
        "up": {"Value": {"Fn::GetAtt": ["WebServerScaleUpPolicy", "AlarmUrl"]}},
        "up_ref": {"Value": {"Ref": "WebServerScaleUpPolicy"}},
        "group": {"Value": {"Ref": "WebServerGroup"}}},
}


def test_a_cloudwatch_alarm_with_cfn_properties_grows_the_group(hc):
    hc.stacks.validate(template=CFN_CLOUDWATCH)
    # CloudFormation's names only, as Heat's template's AllowedValues.
    bad = json.loads(json.dumps(CFN_CLOUDWATCH))
    bad["Resources"]["CPUAlarmHigh"]["Properties"]["Statistic"] = "avg"
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        hc.stacks.validate(template=bad)
    assert "Statistic" in str(refused.value)
    _, sid = create(hc, CFN_CLOUDWATCH)
    outputs = outputs_of(wait_stack(hc, sid, "CREATE_COMPLETE"))
    # {Ref: <AWS::AutoScaling::ScalingPolicy>} is its AlarmUrl (Heat's get_reference_id).
    assert "/webhooks/signal/" in outputs["up"] and outputs["up_ref"] == outputs["up"]
    child = hc.resources.get(sid, "CPUAlarmHigh").physical_resource_id
    alarm = hc.resources.get(child, "__alarm__").attributes["show"]
    assert alarm["type"] == "threshold" and alarm["repeat_actions"] is True
    assert alarm["alarm_actions"] == [outputs["up"]]
    assert alarm["description"] == "Scale-up if CPU > 50% for 1 minute"
    rule = alarm["threshold_rule"]
    assert (rule["meter_name"], rule["statistic"], rule["comparison_operator"]) == \
        ("CPUUtilization", "avg", "gt")
    assert (rule["period"], rule["evaluation_periods"], rule["threshold"]) == (60, 1, 50)
    assert rule["matching_metadata"] == {"AutoScalingGroupName": outputs["group"]}
    # Aodh's notifier calling the action grows the group.
    assert notify(alarm["alarm_actions"][0], alarm).status_code == 200
    deadline = time.monotonic() + 60
    while len(_members(hc, sid, "WebServerGroup")) != 2:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    hc.stacks.delete(sid)
    wait_deleted(hc, sid)
