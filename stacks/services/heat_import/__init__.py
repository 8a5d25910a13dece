"""Moving from Heat: heatweb takes over the stacks of a Heat 27 database, reading only.

``heat_import`` reads Heat's database (``source``), plans each root stack
tree (``plan``: import, skip and why, already imported) and, unless it is a
dry run, stores each tree to import in its own transaction (``store``). No
call to the cloud is made: the objects stay where Heat made them, now held
by heatweb's resources, and each imported root stack waits for its owner's
consent (``stacks.services.consent``) before heatweb acts on the cloud for it.
"""
from heatweb.exceptions import HeatError
from stacks.services.heat_import.plan import DONE, IMPORT, SKIP, plan_import
from stacks.services.heat_import.source import HeatDatabase, SourceError, connect
from stacks.services.heat_import.store import store_tree

IMPORTED = "imported"


def heat_import(url, *, projects=(), dry_run=False, encryption_key=None):
    """``[(TreePlan, outcome)]``: each root stack of Heat's database at ``url`` and what
    became of it (``imported``, ``import`` on a dry run, ``skip``, ``already imported``).
    Raises ``SourceError`` when the database is not Heat 27's."""
    source = HeatDatabase(connect(url), encryption_key=encryption_key)
    try:
        source.check_schema()
        results = []
        for plan in plan_import(source, projects=projects):
            if plan.verdict != IMPORT or dry_run:
                results.append((plan, plan.verdict))
                continue
            try:
                store_tree(plan, source)
            except HeatError as error:  # an object another resource holds already
                plan.verdict, plan.reason = SKIP, error.message
                results.append((plan, SKIP))
                continue
            results.append((plan, IMPORTED))
        return results
    finally:
        source.close()


def results_table(results):
    """The lines of a plain text table of ``heat_import``'s results."""
    head = ("STACK", "ID", "PROJECT", "HEAT STATE", "OUTCOME", "WHY")
    rows = [(p.name, p.root["id"], p.root["tenant"], f"{p.root['action']}_{p.root['status']}",
             outcome, p.reason) for p, outcome in results]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head) - 1)]
    return [("  ".join(str(v).ljust(w) for v, w in zip(r, widths)) + "  " + str(r[-1])).rstrip()
            for r in [head, *rows]]


__all__ = ["DONE", "IMPORT", "IMPORTED", "SKIP", "SourceError", "heat_import",
           "results_table"]
