"""Masking hidden parameter values in what is shown (pure: no database)."""
from stacks.hidden import MASK, mask


def test_whole_values_and_substrings_are_masked_everywhere_in_json():
    hidden = frozenset({"s3cret-long", "ab"})
    data = {"a": "s3cret-long", "b": ["x-s3cret-long-y", {"c": "ab"}], "d": "abc", "e": 5}
    assert mask(data, hidden) == {"a": MASK, "b": [f"x-{MASK}-y", {"c": MASK}],
                                  "d": "abc", "e": 5}


def test_numbers_equal_to_a_hidden_value_are_masked_and_nothing_is_without_values():
    assert mask({"port": 4711, "flag": True}, frozenset({"4711"})) == {"port": MASK,
                                                                        "flag": True}
    data = {"a": "s3cret"}
    assert mask(data, frozenset()) is data
