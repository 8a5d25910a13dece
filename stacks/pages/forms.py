"""The launch page's first step (the template and environment) and the lock form."""
import re

from django import forms
from django.conf import settings

from stacks.models.states import LOCK_MODES
from stacks.services.locking import LEVELS

MODE_LABELS = {"signal": "signals (scaling alarms, wait conditions)",
               "suspend_resume": "suspend and resume", "check": "check"}

# The API's budgets (settings.HEATWEB) for a template and an environment.
BUDGETS = {"template": ("Template", "MAX_TEMPLATE_BYTES"),
           "environment": ("Environment", "MAX_ENVIRONMENT_BYTES")}


def _budget(what):
    """``(limit, refusal)``: the refusal in the API's words, "{size}" standing for the size."""
    label, setting = BUDGETS[what]
    limit = settings.HEATWEB[setting]
    return limit, f"{label} size ({{size}} bytes) exceeds maximum allowed size ({limit} bytes)."


def size_refusal(what, size):
    """The API's refusal of a template or environment of ``size`` bytes, or ""."""
    limit, refusal = _budget(what)
    return refusal.replace("{size}", str(size)) if size > limit else ""


def _with_budgets(form, fields):
    """Fields carry their budget, for the browser to refuse before it uploads (live.js)."""
    for name, what in fields.items():
        limit, refusal = _budget(what)
        form.fields[name].widget.attrs.update(
            {"data-max-bytes": limit, "data-size-refusal": refusal})


def _text(upload, what):
    refusal = size_refusal(what, upload.size)
    if refusal:
        raise forms.ValidationError(refusal)
    try:
        return upload.read().decode("utf-8")
    except UnicodeDecodeError:
        raise forms.ValidationError(f"The {what} file is not UTF-8 text.") from None


NAME_CHARACTERS = re.compile(r"\A[a-zA-Z][a-zA-Z0-9_.-]*\Z")


class LaunchSourceForm(forms.Form):
    """Stack name, template and environment: pasted, or uploaded (an upload wins)."""

    # The characters only: the length is max_length's to refuse (the API's STACK_NAME_RE
    # bounds both, so a long name of letters got the characters' message too).
    stack_name = forms.RegexField(
        regex=NAME_CHARACTERS, max_length=255, label="Stack name",
        error_messages={"invalid": 'Use letters, digits and "_-.", starting with a letter.'})
    template = forms.CharField(
        required=False, label="Template (HOT, YAML or JSON)",
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "class": "code"}))
    template_file = forms.FileField(required=False, label="…or upload a template file")
    environment = forms.CharField(
        required=False, label="Environment (optional)",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "class": "code"}))
    environment_file = forms.FileField(required=False, label="…or upload an environment file")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _with_budgets(self, {"template": "template", "template_file": "template",
                             "environment": "environment",
                             "environment_file": "environment"})

    def clean(self):
        cleaned = super().clean()
        for what in ("template", "environment"):
            refusal = size_refusal(what, len((cleaned.get(what) or "").encode()))
            if refusal:  # refused before anything parses it
                self.add_error(what, refusal)
                cleaned[what] = ""
            upload = cleaned.get(f"{what}_file")
            if upload:
                try:
                    cleaned[what] = _text(upload, what)
                except forms.ValidationError as error:
                    self.add_error(f"{what}_file", error)
        if not (cleaned.get("template") or "").strip() and \
                not {"template", "template_file"} & set(self.errors):
            self.add_error("template", "Paste a template or upload a template file.")
        return cleaned


class LaunchOptionsForm(forms.Form):
    """How the stack is created: its timeout and whether a failed create rolls back."""

    timeout_mins = forms.IntegerField(
        required=False, min_value=1, max_value=7 * 24 * 60, label="Timeout (minutes)",
        help_text="Empty: no timeout.", widget=forms.NumberInput(attrs={"min": 1}))
    rollback = forms.BooleanField(required=False, label="Roll back if the create fails",
                                  help_text="Deletes what was created (disable_rollback off).")


class UpdateSourceForm(forms.Form):
    """The update page's optional new template and environment (empty: keep the stack's)."""

    template = forms.CharField(
        required=False, label="New template (empty: keep the current one)",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "code"}))
    environment = forms.CharField(
        required=False, label="Environment to merge (optional)",
        help_text="YAML or JSON; its parameters and registry entries are laid over the "
                  "stack's environment.",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "code"}))
    converge = forms.BooleanField(
        required=False, label="Converge with the cloud",
        help_text="Also bring back what changed behind the stack's back (drift): modified "
                  "objects are updated, deleted ones made again.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _with_budgets(self, {"template": "template", "environment": "environment"})

    def clean(self):
        cleaned = super().clean()
        for what in ("template", "environment"):
            text = cleaned.get(what) or ""
            refusal = size_refusal(what, len(text.encode()))
            if refusal:
                self.add_error(what, refusal)
            cleaned[what] = text if text.strip() else None
        return cleaned


class LockForm(forms.Form):
    level = forms.ChoiceField(choices=[(level, level) for level in LEVELS],
                              initial="all", label="Lock level",
                              help_text="stacks: this stack and its nested stacks; "
                                        "all: their physical resources too.")
    reason = forms.CharField(required=False, max_length=255, label="Reason")
    expires_in = forms.CharField(required=False, max_length=32, label="Unlock after",
                                 help_text='Optional: "30m", "2h", "1d"; the engine unlocks '
                                           'the stack then.',
                                 widget=forms.TextInput(attrs={"placeholder": "e.g. 2h",
                                                               "size": 8}))
    allow = forms.MultipleChoiceField(
        required=False, label="Still allowed", widget=forms.CheckboxSelectMultiple,
        choices=[(mode, MODE_LABELS[mode]) for mode in LOCK_MODES],
        help_text="What stays permitted while the lock holds (default: nothing).")


def constraint_notes(schema):
    """Short texts for a parameter's type and constraints, shown under its field."""
    notes = [schema.type.replace("_", " ")]
    for constraint in schema.constraints:
        spec = constraint.spec
        if constraint.kind in ("length", "range"):
            low, high = spec.get("min"), spec.get("max")
            what = "length" if constraint.kind == "length" else "value"
            notes.append(f"{what} {low if low is not None else '…'} to "
                         f"{high if high is not None else '…'}")
        elif constraint.kind == "allowed_values":
            notes.append("one of " + ", ".join(str(v) for v in spec))
        elif constraint.kind == "allowed_pattern":
            notes.append(f"matches {spec}")
        elif constraint.kind == "modulo":
            notes.append(f"multiple of {spec.get('step')} (offset {spec.get('offset', 0)})")
    return notes
