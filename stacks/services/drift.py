"""Drift detection: does each physical object still have the properties the template set?

``stack_drift_detect`` (through the door: ``stack_action(stack, "detect_drift")``)
asks every live resource's plugin for ``drift_pairs()`` (``{property:
(expected, actual)}``, compared from the cloud's own answer) and records one
``DriftReport``: per resource IN_SYNC, MODIFIED (with each differing property,
expected and actual), DELETED (the object is gone) or NOT_CHECKED (a type that
compares nothing). Nothing changes in the cloud or in the stack's state; an
event on the stack gives the counts. A nested stack's resource is MODIFIED
when something in it drifted, and its row carries the nested rows
(``nested``), to ``MAX_DEPTH`` levels.
Lock healing's periodic check of a locked stack looks for drift too
(``drift_while_locked``): a new report, and a line in the lock history, each
time what drifted changes.

An update with ``converge`` (Heat's ``openstack stack update --converge``;
``reconcile`` is taken as its other name) brings drifted resources back to
the template: ``converge_drifted`` detects drift first, then, as the update
starts, ``converge_apply`` writes the cloud's actual values into each
MODIFIED resource's stored properties (so the update finds them changed and
updates them in place, or replaces what cannot be), and marks each DELETED one
CHECK_FAILED (so the update replaces it, as after ``mark_unhealthy``).
"""
from collections import Counter

from stacks.models import DriftReport, Resource, Stack
from stacks.models.events import stack_event
from stacks.plugins import plugin_for, stack_context
from stacks.resources.base import ResourceFailure
from stacks.services.lock_history import lock_record
from stacks.services.resource_health import resource_health_set

MAX_DEPTH = 5


def _resource_drift(ctx, res, depth, children):
    row = {"resource_name": res.name, "resource_type": res.type,
           "physical_resource_id": res.physical_resource_id or None, "differences": []}
    plugin = plugin_for(ctx, res)
    if plugin.nested_stack:
        child = children.get(res.name)
        if child is None or depth >= MAX_DEPTH:
            return {**row, "drift_status": "NOT_CHECKED"}
        nested = _drift_rows(child, depth + 1)
        return {**row, "nested": nested,
                "drift_status": "MODIFIED" if _drifted(nested) else "IN_SYNC"}
    try:
        pairs = plugin.drift_pairs()
    except ResourceFailure as gone:
        return {**row, "drift_status": "DELETED", "detail": str(gone)}
    if pairs is None:
        return {**row, "drift_status": "NOT_CHECKED"}
    row["differences"] = [{"property": name, "expected": expected, "actual": actual}
                          for name, (expected, actual) in sorted(pairs.items())
                          if expected != actual]
    return {**row, "drift_status": "MODIFIED" if row["differences"] else "IN_SYNC"}


def _drift_rows(stack, depth=0):
    ctx = stack_context(stack)
    rows = Resource.objects.filter(stack=stack, replaced_by__isnull=True).exclude(
        state__in=("DELETE_COMPLETE", "INIT_COMPLETE")).order_by("name")
    children = {child.parent_resource_name: child for child in Stack.objects.filter(
        parent=stack, deleted_at__isnull=True)}  # one query, not one per nested resource
    return [_resource_drift(ctx, res, depth, children) for res in rows]


def stack_drift_detect(stack, *, user=None):
    """Compare every live resource of ``stack`` with its physical object; the new report."""
    return _record(stack, _drift_rows(stack), user=user)


def _record(stack, resources, *, user):
    report = DriftReport.objects.create(stack=stack, resources=resources,
                                        username=user.username if user else "the engine")
    counts = Counter(r["drift_status"] for r in resources)
    summary = ", ".join(f"{counts[s]} {s}" for s in ("IN_SYNC", "MODIFIED", "DELETED",
                                                     "NOT_CHECKED") if counts[s])
    stack_event(stack, f"Drift detection: {summary or 'no resources'}").save()
    return report


def _drifted(resources):
    return [r for r in resources if r["drift_status"] in ("MODIFIED", "DELETED")]


def _essence(resources):
    return sorted((r["resource_name"], r["drift_status"],
                   tuple((d["property"], str(d["actual"])) for d in r.get("differences", [])),
                   tuple(_essence(r.get("nested", []))))
                  for r in _drifted(resources))


def drift_while_locked(stack):
    """Lock healing's periodic look at a locked stack: a new report (and a line in the lock
    history) only when what drifted changed since the last report; the line, or None."""
    resources = _drift_rows(stack)
    last = last_drift_report(stack)
    if _essence(resources) == _essence(last.resources if last else []):
        return None
    _record(stack, resources, user=None)
    drifted = _drifted(resources)
    text = "Drift found while locked: " + (", ".join(
        f"{r['resource_name']} {r['drift_status']}" + (
            f" ({', '.join(d['property'] for d in r['differences'])})"
            if r.get("differences") else "") for r in drifted) or "none now, in sync again")
    lock_record(stack, "heal", level=stack.lock_level, reason=stack.lock_reason,
                expires_at=stack.lock_expires_at, detail=text)
    return text


def converge_drifted(stack, *, user=None):
    """A new drift report's MODIFIED and DELETED rows, by resource name."""
    return {row["resource_name"]: row
            for row in _drifted(stack_drift_detect(stack, user=user).resources)}


def converge_apply(stack, resources, drifted):
    """Make the update starting over ``resources`` bring the ``drifted`` ones back.

    Only while no engine holds a resource (the update has not started its nodes yet).
    """
    for res in resources:
        row = drifted.get(res.name)
        if row is None or res.replaced_by_id is not None:
            continue
        if row["drift_status"] == "DELETED":  # as mark_unhealthy: the update replaces it
            resource_health_set(res, "CHECK_FAILED",
                                "Deleted outside heatweb: the update makes it again")
            continue
        actual = {d["property"]: d["actual"] for d in row["differences"]}
        properties = {**(res.properties_data or {}), **actual}
        if Resource.objects.filter(pk=res.pk, engine_id__isnull=True).update(
                properties_data=properties):
            res.properties_data = properties
    if drifted:
        stack_event(stack, f"Converging {len(drifted)} drifted resource(s) with the "
                           f"template: {', '.join(sorted(drifted))}").save()


def drift_report_body(report):
    """The API's shape of a report (``GET .../drift``)."""
    counts = Counter(r["drift_status"] for r in report.resources)
    return {"detected_at": report.at.strftime("%Y-%m-%dT%H:%M:%SZ"), "user": report.username,
            "stack_drift_status": "DRIFTED" if counts["MODIFIED"] or counts["DELETED"]
            else "IN_SYNC", "counts": dict(counts), "resources": report.resources}


def last_drift_report(stack):
    return DriftReport.objects.filter(stack=stack).order_by("-id").first()
