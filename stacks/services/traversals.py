"""How a stack action starts: the state table's transition, then the traversal.

Every stack service (lifecycle, locking, snapshots, restarts, lock modes)
starts its work here: ``stack_begin`` applies the ``begin_<action>``
transition or raises the state table's refusal, ``stack_converge`` makes the
resource rows, the graph, the compare-and-swap save and the traversal.
"""
from django_fsm import TransitionNotAllowed

from convergence.graph import Graph, converge_graph
from convergence.services import new_traversal_id, stack_save_cas, traversal_begin
from convergence.waiting import stack_stopped
from stacks.models import Resource
from stacks.models import states as st
from stacks.services.settled import settled_resources


def stack_begin(stack, action, *, transition=None):
    """Apply the ``begin_<transition or action>`` transition or raise the state table's
    refusal for ``action``."""
    try:
        getattr(stack, f"begin_{transition or action.lower()}")()
    except TransitionNotAllowed:
        raise st.refusal_for(stack, action) from None


def live_resources(stack):
    """The stack's resource rows that are not deleted."""
    return list(Resource.objects.filter(stack=stack).exclude(state="DELETE_COMPLETE"))


def stack_converge(stack, definition, raw, *, existing, reason, cas_fields, unchanged=False,
                   seed=None, old_raw=None):
    """Resource rows for new names, the graph, the CAS save and the traversal.

    ``unchanged``: the stack already is what the definition says, so the
    traversal has no resource nodes (it completes at once: O(1) tasks).
    ``seed``: ``{name: row fields}`` new rows start with (an adopt's physical ids).
    ``old_raw`` (an update): resources that would find themselves unchanged and
    stand alone get no node (``stacks.services.settled``).
    """
    current = {r.name: r for r in existing if r.replaced_by_id is None}
    names = definition.resources if definition else {}
    seed = seed or {}
    new_rows = [Resource(stack=stack, name=n, type=d.type, template=raw, **seed.get(n, {}))
                for n, d in names.items() if n not in current]
    Resource.objects.bulk_create(new_rows, batch_size=500)
    by_name = {**current, **{r.name: r for r in new_rows}}
    new_requires = {
        by_name[n].pk: sorted(by_name[d].pk for d in d_.depends_on if d in names)
        for n, d_ in names.items()}
    existing_requires = {r.pk: list(r.requires) for r in existing}
    settled = settled_resources(current=current, definition=definition, raw=raw,
                                old_raw=old_raw, new_requires=new_requires,
                                existing_requires=existing_requires) \
        if old_raw is not None and not unchanged else set()
    graph = Graph() if unchanged else converge_graph(
        new_requires={k: v for k, v in new_requires.items() if k not in settled},
        existing_requires={k: v for k, v in existing_requires.items() if k not in settled},
        in_new_template={by_name[n].pk for n in names if n in current} - settled,
        no_cleanup=_never_replaced(definition, current))
    traversal_id = new_traversal_id()
    stack_save_cas(stack, current_traversal=traversal_id, **cas_fields)
    traversal_begin(stack, traversal_id=traversal_id, graph=graph, reason=reason)


def _never_replaced(definition, current):
    """Kept resources that no update can replace (their cleanup node would do nothing)."""
    if definition is None:
        return set()
    return {res.pk for name, res in current.items()
            if name in definition.resources and definition.resources[name].type == res.type
            and res.action != "DELETE" and res.status != st.IN_PROGRESS
            and res.state != "CHECK_FAILED"  # marked unhealthy: the update replaces it
            and res.engine_id is None and definition.plugins[name].never_replaced()}


def stop_waiting_if_superseded(stack, old_state):
    """The new traversal supersedes one in progress: its waiting resources stop waiting at
    the next poll round, now (not when their own wait would next be looked at)."""
    if st.split(old_state)[1] == st.IN_PROGRESS:
        stack_stopped(stack)
