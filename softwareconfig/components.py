"""Pure rules of software configs and components (no Django).

Shared by the resource plugins, the API and the pages: checking a
component's ``configs``, the actions a deployment reacts to, the derived
inputs a deployment publishes for one action, and what an agent's signal
means (Heat's failure rules).
"""
from heatweb.exceptions import StackValidationFailed

ACTIONS = ("CREATE", "UPDATE", "SUSPEND", "RESUME", "DELETE")
DEFAULT_ACTIONS = ["CREATE", "UPDATE"]
INPUT_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")
COMPONENT_GROUP = "component"
STATUS_CODE, STDOUT, STDERR = "deploy_status_code", "deploy_stdout", "deploy_stderr"


def check_component(configs, *, name):
    """Refuse an action that appears in more than one entry (Heat's message)."""
    seen = set()
    for entry in configs:
        actions = entry.get("actions") or DEFAULT_ACTIONS
        for action in actions:
            if action in seen:
                raise StackValidationFailed(
                    f'Defining more than one configuration for the same action in '
                    f'SoftwareComponent "{name}" is not allowed.')
        seen.update(actions)


def component_config(configs):
    """The stored ``config`` of a component: every entry, actions defaulted."""
    return {"configs": [{"actions": list(e.get("actions") or DEFAULT_ACTIONS),
                         "config": e.get("config", ""), "tool": e.get("tool")}
                        for e in configs]}


def reacting_actions(group, config, deployment_actions):
    """The actions a deployment runs: the union of a component's entries, else its own."""
    if group == COMPONENT_GROUP:
        found = set()
        for entry in (config or {}).get("configs", []):
            found.update(entry.get("actions") or DEFAULT_ACTIONS)
        return found
    return set(deployment_actions or DEFAULT_ACTIONS)


def _typed(value):
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, (int, float)):
        return "Number"
    if isinstance(value, (dict, list)):
        return "Json"
    return "String"


def derived_inputs(declared, input_values, extra):
    """Inputs of a derived config, in Heat's order.

    Declared inputs take their value from ``input_values`` (else their
    default), then the other ``input_values``, then the ``deploy_*`` inputs
    (``extra``: ``[(name, value, description)]``).
    """
    values = dict(input_values or {})
    inputs = []
    for item in declared or []:
        entry = dict(item)
        entry.setdefault("type", "String")
        entry["value"] = values.pop(entry["name"], entry.get("default"))
        inputs.append(entry)
    for name, value in values.items():
        inputs.append({"name": name, "type": _typed(value), "value": value})
    for name, value, description in extra:
        inputs.append({"name": name, "type": "String", "value": value,
                       "description": description})
    return inputs


def signal_outcome(outputs, details):
    """(status, status_reason, output_values) for what an agent signalled.

    A non-zero ``deploy_status_code`` or any ``error_output`` output present
    fails the deployment; otherwise it is complete with "Outputs received".
    """
    details = details if isinstance(details, dict) else {}
    values = {}
    for item in outputs or []:
        name = item.get("name")
        if name in details:
            values[name] = details[name]
    for key in (STDOUT, STDERR, STATUS_CODE):
        if key in details:
            values[key] = details[key]
    reasons = []
    code = details.get(STATUS_CODE, 0)
    try:
        failed_code = int(code or 0) != 0
    except (TypeError, ValueError):
        failed_code = True
    if failed_code:
        reason = f"{STATUS_CODE} : Deployment exited with non-zero status code: {code}"
        stderr = str(details.get(STDERR) or "").strip()
        if stderr:
            reason += f" ({stderr.splitlines()[-1][:200]})"
        reasons.append(reason)
    for item in outputs or []:
        if item.get("error_output") and item.get("name") in details:
            reasons.append(f"{item['name']} : {details[item['name']]}")
    if reasons:
        return "FAILED", ", ".join(reasons), values
    return "COMPLETE", "Outputs received", values


def check_io(inputs, outputs, *, where):
    """Check the shape of inputs/outputs lists; StackValidationFailed otherwise."""
    for label, items in (("inputs", inputs), ("outputs", outputs)):
        if items is None:
            continue
        if not isinstance(items, list):
            raise StackValidationFailed(f"{where}.{label}: must be a list")
        for number, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                    or not item["name"]:
                raise StackValidationFailed(
                    f"{where}.{label}[{number}]: each entry needs a name")
            if label == "inputs" and item.get("type", "String") not in INPUT_TYPES:
                raise StackValidationFailed(
                    f'{where}.{label}[{number}].type: "{item["type"]}" is not an allowed '
                    f"value {list(INPUT_TYPES)}")
