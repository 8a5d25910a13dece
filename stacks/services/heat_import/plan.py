"""What an import of Heat's stacks would do: per root stack, import it (with its nested
stacks) or skip it whole, and why.

A root stack and everything nested under it are one unit: it is imported
whole or not at all. It is skipped when one of its stacks is in progress in
Heat, already here, in a project heatweb does not know, refers to a nested
stack Heat has no row of, or holds what heatweb cannot represent (a template
version or resource type it refuses: the definition is built and validated as
a create's would be, with no call to the cloud).
"""
from dataclasses import dataclass, field

from heatweb.exceptions import HeatError
from heatweb.models import Project
from stacks.definitions import build_definition, plugin_class_for_type
from stacks.models import Stack
from stacks.models import states as st
from stacks.services.heat_import.source import SourceError

IMPORT, SKIP, DONE = "import", "skip", "already imported"


class CannotImport(HeatError):
    """What heatweb cannot represent of a Heat stack (its tree is skipped whole)."""

    status = 400


@dataclass
class StackPlan:
    """One Heat stack to import: its row, its definition's parts, and its resources."""

    row: dict
    template: dict
    files: dict
    environment: dict
    definition: object
    resources: list
    tags: list
    children: list = field(default_factory=list)


@dataclass
class TreePlan:
    """A root stack and its nested stacks: the verdict, its reason, and the plans."""

    root: dict
    verdict: str
    reason: str = ""
    stacks: list = field(default_factory=list)  # StackPlan, parents before children
    project: object = None

    @property
    def name(self):
        return self.root["name"]


def adopt_remote_stacks(rows, source):
    """Heat's ``OS::Heat::Stack`` makes its stack a root stack of its own (a "remote"
    stack, reached through Heat's API) held by the resource only by its physical id;
    here it is a nested stack. Such a root row of the same project as the stack that
    holds it gets that stack as its owner, so it is imported under it, never alone."""
    by_id = {r["id"]: r for r in rows}
    roots = [r["id"] for r in rows if not r["owner_id"]]
    for stack_id, (holder, resource) in source.holders(roots).items():
        row, parent = by_id.get(stack_id), by_id.get(holder)
        if row is None or parent is None or holder == stack_id or \
                row["tenant"] != parent["tenant"]:
            continue
        row["owner_id"], row["parent_resource_name"] = holder, resource
    return rows


def trees(rows):
    """``(roots, children by parent id)`` of the stack rows."""
    children = {}
    for row in rows:
        if row["owner_id"]:
            children.setdefault(row["owner_id"], []).append(row)
    return [r for r in rows if not r["owner_id"]], children


def plan_import(source, *, projects=()):
    """A ``TreePlan`` per root stack of Heat's database (``source``: a HeatDatabase),
    limited to ``projects`` (ids or names) when given."""
    rows = adopt_remote_stacks(source.stacks(), source)
    roots, children = trees(rows)
    wanted = set(projects)
    known = {p.pk: p for p in Project.objects.filter(pk__in={r["tenant"] for r in roots})}
    plans = []
    for root in roots:
        project = known.get(root["tenant"])
        if wanted and root["tenant"] not in wanted and \
                (project is None or project.name not in wanted):
            continue
        plans.append(_plan_tree(source, root, children, project))
    return plans


def _tree_rows(root, children):
    order, queue = [], [root]
    while queue:
        row = queue.pop(0)
        order.append(row)
        queue.extend(children.get(row["id"], []))
    return order


def _plan_tree(source, root, children, project):
    rows = _tree_rows(root, children)
    plan = TreePlan(root=root, verdict=SKIP, project=project)
    busy = [r for r in rows if r["status"] == st.IN_PROGRESS]
    if busy:
        plan.reason = "; ".join(f"stack {r['name']} is {r['action']}_{r['status']} in Heat"
                                for r in busy)
        return plan
    if Stack.objects.filter(pk=root["id"]).exists():
        plan.verdict, plan.reason = DONE, "imported before (same stack id)"
        return plan
    if project is None:
        plan.reason = (f"project {root['tenant']} is not known to heatweb (its users sign in "
                       f"once, or manage.py issue_token makes it)")
        return plan
    try:
        by_id = {}
        for row in rows:
            stack_plan = _plan_stack(source, row, project)
            by_id[row["id"]] = stack_plan
            parent = by_id.get(row["owner_id"])
            if parent is not None:
                parent.children.append(stack_plan)
            plan.stacks.append(stack_plan)
        _check_nested(plan.stacks, by_id)
    except (HeatError, SourceError) as error:
        plan.stacks = []
        plan.reason = str(getattr(error, "message", None) or error)
        return plan
    plan.verdict = IMPORT
    plan.reason = f"{len(plan.stacks)} stack(s), " \
                  f"{sum(len(s.resources) for s in plan.stacks)} resource(s)"
    return plan


def _plan_stack(source, row, project):
    state = f"{row['action']}_{row['status']}"
    if state not in st.ALL_STATES:
        raise CannotImport(f"stack {row['name']}: state {state} has no equal here")
    template, files, env = source.raw_template(row["raw_template_id"])
    try:
        definition = build_definition(template, environment=env, files=files,
                                      stack_name=row["name"], stack_id=row["id"],
                                      project_id=project.pk)
    except HeatError as error:
        raise CannotImport(f"stack {row['name']}: {error.message}") from None
    live = [r for r in source.resources(row["id"])
            if not (r["action"] == "DELETE" and r["status"] == st.COMPLETE)]
    live_ids = {r["id"] for r in live}
    resources = []
    for res in live:
        if res["replaced_by"] in live_ids:  # its old object would be held by no one
            raise CannotImport(f"stack {row['name']}: resource {res['name']} was replaced and "
                               f"Heat has not cleaned up the old one (let Heat converge it)")
        res["type"] = _resource_type(source, res, definition, env, files, row)
        res["properties"] = _as_validated(res, definition, env, files)
        res["nova_instance"] = _physical_id(res)
        state = f"{res['action']}_{res['status']}"
        if state not in st.ALL_STATES:
            raise CannotImport(f"stack {row['name']}: resource {res['name']} is {state}")
        resources.append(res)
    names = [r["name"] for r in resources]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CannotImport(f"stack {row['name']}: resource {twice[0]} has more than one live "
                           f"row in Heat (a replacement not cleaned up)")
    return StackPlan(row=row, template=template, files=files, environment=env,
                     definition=definition, resources=resources, tags=source.tags(row["id"]))


def _resource_type(source, res, definition, env, files, row):
    if res["name"] in definition.resources:
        return definition.resources[res["name"]].type
    # A resource the current template no longer has (kept by a failed update): its type
    # is the one of the template it was made from.
    template, tfiles, tenv = source.raw_template(res["current_template_id"]) \
        if res.get("current_template_id") else ({}, files, env)
    section = template.get("resources") or template.get("Resources") or {}
    given = (section.get(res["name"]) or {})
    type_name = given.get("type") or given.get("Type")
    if not type_name:
        raise CannotImport(f"stack {row['name']}: the type of resource {res['name']} is "
                           f"in no template Heat kept")
    try:
        plugin_class_for_type(type_name, tenv, tfiles)
    except HeatError as error:
        raise CannotImport(f"stack {row['name']}: resource {res['name']}: "
                           f"{error.message}") from None
    return type_name


# Types whose physical id in Heat names no cloud object (Heat's own row id): heatweb's is
# the floating IP's id, from the properties (its drivers disassociate by it).
ASSOCIATION_PROPERTY = {"OS::Neutron::FloatingIPAssociation": "floatingip_id",
                        "OS::Nova::FloatingIPAssociation": "floating_ip"}


def _physical_id(res):
    """The physical id heatweb keeps for Heat's resource row: Heat's, but for a floating IP
    association, whose id in Heat is the resource row's own (``resource_id_set(self.id)``)."""
    key = ASSOCIATION_PROPERTY.get(res["type"])
    if key and str(res["nova_instance"]) == str(res["id"]) and res["properties"].get(key):
        return res["properties"][key]
    return res["nova_instance"]


def _as_validated(res, definition, env, files):
    """Heat's stored properties as heatweb's engine stores them: Heat keeps only the
    values the template gave (resolved); the engine keeps them typed, with the schema's
    defaults, and compares an update's properties with them. Stored as Heat had them,
    every default would read as a change (a subnet's ``ip_version``: a replacement)."""
    cls = definition.plugins.get(res["name"])
    if cls is None or cls.type_name != res["type"]:
        try:
            cls = plugin_class_for_type(res["type"], env, files)
        except HeatError:
            return res["properties"]
    try:
        return cls.validate_properties(dict(res["properties"] or {}), resource_name=res["name"])
    except HeatError:  # kept as Heat stored it: an update then compares with that
        return res["properties"]


def _check_nested(stacks, by_id):
    for plan in stacks:
        for res in plan.resources:
            plugin = plan.definition.plugins.get(res["name"])
            if plugin is None or not plugin.nested_stack or not res["nova_instance"]:
                continue
            child = by_id.get(res["nova_instance"])
            if child is None or child.row["owner_id"] != plan.row["id"]:
                raise CannotImport(f"stack {plan.row['name']}: resource {res['name']}'s nested "
                                   f"stack {res['nova_instance']} has no row in Heat's database")
