"""Resources an update can leave out of its traversal: each would find itself unchanged.

Growing a group of 10,000 members by 1,000 updates its members' stack: every
kept member got an update node that only found its properties unchanged, so
the cost of a scaling grew with the group, not with the change. A resource
is settled, and gets no node at all, when nothing about it can differ:

* it is complete as created or updated, no engine holds it, and it is not
  replaced;
* it stands alone: it requires nothing and nothing requires it, in the old
  template or the new (so no successor needs its data, and no input of its
  own can have changed);
* the template it was last converged to (its ``template_id``) has the same
  definition of it as the new template, and the same parameters, conditions,
  version, environment and files (so its properties resolve as before);
* no update hook is set on it (as in Heat, a hook pauses an unchanged
  resource too) and its type is not replaced on every update.

Its update node would have decided "unchanged" and changed nothing; leaving
it out changes nothing but the cost.
"""
from stacks.hot.hooks import hook_resources, matches_hook
from stacks.models import RawTemplate
from stacks.models import states as st

SETTLED_ACTIONS = ("CREATE", "UPDATE")
NOT_THE_RESOURCES = ("resources", "outputs", "description")


def _frame(template):
    """The parts of a template, other than its resources, that a resource's properties
    can read."""
    return {k: v for k, v in (template or {}).items() if k not in NOT_THE_RESOURCES}


def settled_resources(*, current, definition, raw, old_raw, new_requires, existing_requires):
    """Ids of the rows of ``current`` ({name: row}) that need no node in the update to ``raw``.

    ``new_requires`` / ``existing_requires``: resource id -> ids it requires, in
    the new template and as last converged.
    """
    if definition is None or raw is None:
        return set()
    required = {rid for ids in new_requires.values() for rid in ids}
    required |= {rid for ids in existing_requires.values() for rid in ids}
    candidates = {
        res.pk: res for name, res in current.items()
        if name in definition.resources and definition.resources[name].type == res.type
        and res.status == st.COMPLETE and res.action in SETTLED_ACTIONS
        and res.engine_id is None and res.replaced_by_id is None
        and not res.requires and not new_requires.get(res.pk) and res.pk not in required
        and res.template_id is not None
        and not definition.plugins[name].replace_on_update
        and not definition.plugins[name].may_update_unchanged}
    if not candidates:
        return set()
    hooks = hook_resources(raw.environment)
    new_template = raw.template or {}
    new_resources, new_frame = new_template.get("resources") or {}, _frame(new_template)
    templates = {old_raw.pk: old_raw} if old_raw is not None else {}
    missing = {r.template_id for r in candidates.values()} - set(templates)
    if missing:
        templates.update(RawTemplate.objects.in_bulk(list(missing)))
    alike = {pk for pk, old in templates.items()
             if old.environment == raw.environment and old.files == raw.files
             and _frame(old.template) == new_frame}
    settled = set()
    for pk, res in candidates.items():
        if res.template_id not in alike:
            continue
        old_resources = templates[res.template_id].template.get("resources") or {}
        if old_resources.get(res.name) != new_resources.get(res.name):
            continue
        if any(matches_hook(hooks, res.name, h) for h in ("pre-update", "post-update")):
            continue
        settled.add(pk)
    return settled
