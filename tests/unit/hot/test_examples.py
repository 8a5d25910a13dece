"""The shipped examples parse and validate against the real resource type registry."""
from pathlib import Path

import pytest

from stacks.hot import Template
from stacks.resources.registry import has_type, list_types

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.yaml"))


def test_the_registry_is_loaded():
    assert "OS::Heat::SoftwareComponent" in list_types()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_validates(path):
    template = Template.parse(path.read_text())
    template.validate(template.parameters({}), resource_type_exists=has_type)
    assert template.resources
