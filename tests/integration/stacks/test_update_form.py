"""The web update form asks the same immutable-parameter check as the API."""
import pytest

from heatweb.models import Project
from stacks.pages.parameter_forms import StackParametersForm, StackUpdateForm
from stacks.services import lifecycle

TEMPLATE = {"heat_template_version": "2016-10-14",
            "parameters": {"zone": {"type": "string", "default": "a", "immutable": True},
                           "count": {"type": "number", "default": 1, "updatable": False,
                                     "constraints": [{"range": {"min": 1, "max": 9}}]},
                           "label": {"type": "string", "default": "x"},
                           "pw": {"type": "string", "hidden": True, "default": "p"}},
            "resources": {"n": {"type": "OS::Heat::None"}}}

pytestmark = pytest.mark.django_db


@pytest.fixture
def stack():
    project = Project.objects.create(name="forms")
    return lifecycle.stack_create(project=project, user=None, name="f", template=TEMPLATE,
                                  parameters={"count": "3"})


def test_fields_are_generated_from_the_template(stack):
    form = StackUpdateForm(stack=stack)
    assert set(form.fields) == {"zone", "count", "label", "pw"}
    assert form.fields["count"].initial == 3
    assert form.fields["zone"].widget.attrs.get("readonly") == "readonly"
    assert "Immutable" in form.fields["zone"].help_text
    assert form.fields["pw"].widget.input_type == "password"


def test_tampered_immutable_values_get_field_errors(stack):
    form = StackUpdateForm({"zone": "b", "count": "3.0", "label": "y", "pw": "p"}, stack=stack)
    assert not form.is_valid()
    assert set(form.errors) == {"zone"}
    assert "immutable" in form.errors["zone"][0]


def test_typed_equal_values_and_mutable_changes_pass(stack):
    form = StackUpdateForm({"zone": "a", "count": "3", "label": "changed", "pw": "p"},
                           stack=stack)
    assert form.is_valid(), form.errors


def test_constraints_are_validators():
    form = StackParametersForm({"zone": "a", "count": "20", "label": "x", "pw": "p"},
                               template=TEMPLATE)
    assert not form.is_valid()
    assert "Parameter 'count' is invalid" in form.errors["count"][0]
