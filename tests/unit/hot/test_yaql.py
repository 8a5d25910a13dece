"""Heat's yaql function within its budgets (pure: no server)."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.hot import Limits, Template, YaqlLimits


def resolved(expression, *, limits=Limits(), data=None):
    template = Template.parse({"heat_template_version": "2016-10-14"}, limits=limits)
    function = {"expression": expression} | ({} if data is None else {"data": data})
    return template.resolve({"yaql": function}, {}, None)


def test_data_is_passed_as_heat_passes_it():
    assert resolved("$.data.var1.sum()", data={"var1": [3, 2, 1]}) == 6


def test_heats_options_are_settings():
    limits = Limits(yaql=YaqlLimits(limit_iterators=5))
    with pytest.raises(StackValidationFailed, match="exceeds 5 elements"):
        resolved("range(6).select($)", limits=limits)
    assert resolved("range(5).select($)", limits=limits) == [0, 1, 2, 3, 4]


def test_a_spent_clock_refuses_the_next_expression():
    limits = Limits(yaql=YaqlLimits(total_seconds=0))
    with pytest.raises(StackValidationFailed, match="took more than 0 s together"):
        resolved("1 + 1", limits=limits)


def test_the_budget_is_the_expressions_cpu_time_not_the_wait_for_a_core():
    """A hostile expression is stopped once its CPU time passes the budget, and what it
    spent is that CPU time; a quick one's is far below it, however busy the machine."""
    from stacks.hot.yaql_expressions import YaqlError, evaluate

    limits = YaqlLimits(limit_iterators=1000)
    spent = []
    with pytest.raises(YaqlError, match="took more than 0.3 s"):
        evaluate("range(1000).select(range(1000).select(range(1000).sum()).sum()).sum()",
                 {}, limits, seconds=0.3, spent=spent)
    assert 0.3 <= spent[0] < 3
    spent.clear()
    assert evaluate("$.data.sum()", [1, 2], limits, seconds=0.3, spent=spent) == 3
    assert spent[0] < 0.3
