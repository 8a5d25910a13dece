"""OS::Heat::RandomString's character classes and sequences, as Heat's password generator."""
import pytest

from heatweb.exceptions import StackValidationFailed
from stacks.resources.heat_basic import RandomStringResource


def generate(**props):
    plugin = RandomStringResource.__new__(RandomStringResource)
    plugin.properties = RandomStringResource.validate_properties(props, resource_name="r")
    plugin.data = {}
    plugin.handle_create()
    return plugin.data["value"]


def test_each_class_and_sequence_gets_its_minimum():
    for _ in range(20):
        value = generate(length=12, character_classes=[{"class": "uppercase", "min": 3},
                                                       {"class": "digits", "min": 2}],
                         character_sequences=[{"sequence": "!@#", "min": 4}])
        assert len(value) == 12
        assert sum(c.isupper() for c in value) >= 3 and sum(c.isdigit() for c in value) >= 2
        assert sum(c in "!@#" for c in value) >= 4
        assert set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#")


def test_defaults_and_the_deprecated_sequence():
    assert len(generate()) == 32 and generate(length=8).isalnum()
    assert set(generate(length=40, sequence="octdigits")) <= set("01234567")
    assert set(generate(length=40, character_classes=[{"class": "hexdigits"}])) <= \
        set("0123456789ABCDEF")


@pytest.mark.parametrize(("props", "message"), [
    ({"length": 3, "character_classes": [{"class": "digits", "min": 2}],
      "character_sequences": [{"sequence": "ab", "min": 2}]},
     "Length property cannot be smaller than combined character class and character "
     "sequence minimums"),
    ({"character_classes": [{"class": "emoji"}]}, "is not an allowed value"),
    ({"character_sequences": [{"min": 1}]}, "each entry is a map of sequence and min"),
    ({"character_classes": [{"class": "digits", "min": 0}]}, "must be 1 to 512"),
])
def test_refused_as_heat_refuses(props, message):
    with pytest.raises(StackValidationFailed, match=message):
        RandomStringResource.validate_properties(props, resource_name="r")
