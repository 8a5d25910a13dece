"""Forms generated from a template's parameters, for the launch and update pages.

Typing and constraints come from the template's own ``ParamSchema`` (the
same code the API uses), and the update form asks the one immutable-
parameter check, so a tampered POST is refused exactly as the API refuses.
"""
import json

from django import forms

from heatweb.exceptions import HeatError, ImmutableParameterModified
from stacks.definitions import definition_cache, normalize_environment, parse_template, \
    update_definition
from stacks.pages.hidden_carry import FIELD as CARRY_FIELD, seal, unseal
from stacks.services.parameters import check_immutable_parameters


def _constraint(schema, kind):
    return next((c.spec for c in schema.constraints if c.kind == kind), None)


def _field(schema, *, immutable_note):
    """A form field for a parameter: a select for allowed_values, a number input with
    the range's bounds, a checkbox for a boolean; immutable ones marked (read-only on
    update). The values are still checked by the template's own schema (``clean``)."""
    label = schema.label or schema.name
    help_text = schema.description or ""
    attrs = {}
    if schema.immutable:
        if immutable_note:
            attrs["readonly"] = "readonly"
        help_text = (help_text + " " if help_text else "") + \
            "Immutable: this value cannot be changed by an update."
    common = {"label": label, "help_text": help_text, "required": schema.default is None}
    if schema.type == "boolean":
        return forms.BooleanField(**{**common, "required": False},
                                  widget=forms.CheckboxInput(attrs=attrs))
    if schema.hidden:
        # A hidden value never goes back to a browser, not even the one just typed:
        # the field is always rendered empty (the value typed before a preview is
        # carried sealed, see hidden_carry; the update form keeps the stored value).
        return forms.CharField(**common, widget=forms.PasswordInput(attrs=attrs,
                                                                     render_value=False))
    if schema.type == "json":
        return forms.CharField(**common, widget=forms.Textarea(attrs={"rows": 3, **attrs}))
    allowed = _constraint(schema, "allowed_values")
    if allowed is not None and schema.type in ("string", "number"):
        choices = [(str(v), str(v)) for v in allowed]
        if schema.default is None:
            choices.insert(0, ("", "— choose —"))
        if attrs.get("readonly"):  # a select cannot be read-only: offer the one value
            attrs = {"aria-readonly": "true", "data-immutable": "true"}
        return forms.TypedChoiceField(**common, choices=choices, coerce=str,
                                      widget=forms.Select(attrs=attrs))
    if schema.type == "number":
        attrs = {**attrs, "type": "number", "step": "any"}
        bounds = _constraint(schema, "range") or {}
        for key in ("min", "max"):
            if bounds.get(key) is not None:
                attrs[key] = bounds[key]
        return forms.CharField(**common, widget=forms.TextInput(attrs=attrs))
    return forms.CharField(**common, widget=forms.TextInput(attrs=attrs))


def _shown(schema, value):
    if value is None:
        return None
    if schema.type == "json":
        return json.dumps(value)
    if schema.type == "comma_delimited_list" and isinstance(value, list):
        return ",".join(str(v) for v in value)
    return value


class StackParametersForm(forms.Form):
    """One field per template parameter, typed and constrained by the template."""

    immutable_note = False

    def __init__(self, *args, template, files=None, initial_values=None, carry_scope=None,
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.template = parse_template(template, files or {})
        self.schemas = self.template.param_schemas
        values = initial_values or {}
        for name, schema in self.schemas.items():
            field = _field(schema, immutable_note=self.immutable_note)
            field.initial = None if schema.hidden else \
                _shown(schema, values.get(name, schema.default))
            self.fields[name] = field
        self.carry_scope = carry_scope
        self.carried = {}
        if self.is_bound and carry_scope:
            self.carried = {n: v for n, v in unseal(self.data.get(CARRY_FIELD),
                                                    scope=carry_scope).items()
                            if n in self.schemas and self._carries(n) and isinstance(v, str)}
        for name in self.carried:
            field = self.fields[name]
            field.required = False
            field.widget.attrs["placeholder"] = "(the value typed before the preview)"
            field.help_text = (field.help_text + " " if field.help_text else "") + \
                "Left empty: the value typed before the preview (not shown)."

    def _carries(self, name):
        schema = self.schemas[name]
        return schema.hidden and schema.type != "boolean"

    def sealed_hidden(self):
        """The hidden values typed (or carried) in this submission, sealed for the next
        step of the form; "" when there are none. The page holds only this token."""
        if not self.is_bound or not self.carry_scope:
            return ""
        values = {}
        for name in self.schemas:
            if self._carries(name):
                typed = self.data.get(self.add_prefix(name)) or self.carried.get(name)
                if typed:
                    values[name] = typed
        return seal(values, scope=self.carry_scope)

    def clean(self):
        cleaned = super().clean()
        for name, schema in self.schemas.items():
            value = cleaned.get(name)
            if value in (None, "") and name in self.carried:
                value = self.carried[name]
            if value in (None, "") and schema.type != "boolean":
                cleaned.pop(name, None)
                continue
            try:
                cleaned[name] = schema.coerce(value)
            except HeatError as error:
                self.add_error(name, error.message)
        return cleaned

    def parameter_groups(self):
        """``[(label, [bound fields])]`` in the template's parameter_groups order."""
        grouped, seen = [], set()
        for group in self.template.parameter_groups:
            names = [n for n in group.get("parameters", []) if n in self.fields]
            seen.update(names)
            grouped.append((group.get("label") or "Parameters", [self[n] for n in names]))
        rest = [self[n] for n in self.fields if n not in seen]
        if rest:
            grouped.append(("Parameters" if not grouped else "Other parameters", rest))
        return grouped


class StackUpdateForm(StackParametersForm):
    """Update form: current values filled in, immutable fields read-only and checked."""

    immutable_note = True

    def __init__(self, *args, stack, template=None, files=None, environment=None, **kwargs):
        self.stack = stack
        self.environment = environment
        raw = stack.raw_template
        current = definition_cache.get(stack).params
        values = {n: current[n] for n in current.schemas}
        if environment:  # an environment to merge: its parameters are the new values
            values.update(normalize_environment(environment).get("parameters") or {})
        super().__init__(*args, template=template or raw.template,
                         files=files if files is not None else raw.files,
                         initial_values=values, **kwargs)
        for name, schema in self.schemas.items():
            field = self.fields[name]
            if schema.immutable and isinstance(field, forms.ChoiceField):
                field.choices = [(str(field.initial), str(field.initial))]
            if schema.hidden and name in current.schemas and name not in self.carried:
                # Left empty, the stored value stays (as Heat's PATCH keeps it).
                field.required = False
                field.help_text = (field.help_text + " " if field.help_text else "") + \
                    "Hidden: leave empty to keep the stored value."

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            definition, _, _ = update_definition(
                self.stack, template=self.template.raw, environment=self.environment,
                parameters={n: cleaned[n] for n in self.schemas if n in cleaned},
                files=self.template.files, patch=True, clear_parameters=())
            check_immutable_parameters(self.stack, definition)
        except ImmutableParameterModified as error:
            for name in error.names:
                if name in self.fields:
                    self.add_error(name, "This parameter is immutable and may not be updated.")
                else:
                    self.add_error(None, error.message)
        except HeatError as error:
            self.add_error(None, error.message)
        return cleaned


def environment_from_text(text):
    """The environment a page's text area holds (YAML or JSON), normalized."""
    return normalize_environment(text or {})
