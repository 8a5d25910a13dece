"""Template resources (a type named by a file in ``files``): their properties are checked
against the file's parameters, and the file is read once however many resources use it."""
import pytest
import yaml

from heatweb.exceptions import StackValidationFailed
from stacks.definitions import build_definition
from stacks.resources import stack as stack_module

CHILD = yaml.safe_dump({
    "heat_template_version": "2018-08-31",
    "parameters": {"marker": {"type": "string"}},
    "resources": {f"r{j}": {"type": "OS::Heat::None",
                            "properties": {"marker": {"get_param": "marker"}}}
                  for j in range(20)}})


def parent(k, properties):
    return {"heat_template_version": "2018-08-31",
            "resources": {f"c{i}": {"type": "child.yaml", "properties": properties}
                          for i in range(k)}}


def test_the_file_is_read_once_for_every_resource_of_its_type(monkeypatch):
    body = CHILD + "# a body of its own for this test\n"
    reads = []
    original = stack_module.load_text

    def counting_load_text(text, *args, **kwargs):
        if text == body:
            reads.append(1)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(stack_module, "load_text", counting_load_text)
    for _ in range(2):  # a create, then an update of the same parent
        definition = build_definition(parent(30, {"marker": "a"}), environment={},
                                      files={"child.yaml": body}, stack_name="p")
        assert len(definition.resources) == 30
    assert len(reads) == 1


def test_an_unknown_property_is_refused_on_every_resource():
    files = {"child.yaml": CHILD + "# another body\n"}
    build_definition(parent(3, {"marker": "a"}), environment={}, files=files)
    with pytest.raises(StackValidationFailed) as info:
        build_definition(parent(3, {"marker": "a", "colour": "red"}), environment={},
                         files=files)
    assert "Unknown Property colour" in str(info.value)


def test_a_file_that_is_not_yaml_or_not_a_mapping_is_a_validation_error():
    with pytest.raises(StackValidationFailed) as info:
        build_definition(parent(2, {"marker": "a"}), environment={},
                         files={"child.yaml": "resources: [unclosed\n"})
    assert "child.yaml" in str(info.value)
    with pytest.raises(StackValidationFailed) as info:
        build_definition(parent(2, {"marker": "a"}), environment={},
                         files={"child.yaml": "- a list\n- not a template\n"})
    assert "Unknown Property marker" in str(info.value)
