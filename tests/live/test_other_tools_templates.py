"""Issue 36: templates other tools write (Magnum, Rally, Tacker, heat-tempest-plugin) run
unchanged, through python-heatclient against the live service."""
import pytest

from tests.live.test_stack_lifecycle import create, hc, wait_stack  # noqa: F401

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
