"""Convergence's modules import one way: each only modules of the layers below it
(docs/layout.md). Read from the source's own imports (also those inside functions)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# From the top down; a module imports only modules of lower layers, never its own
# layer's or a higher one's (which would also be a circle waiting to happen).
LAYERS = [
    ("entry points", ["tasks", "apps", "admin"]),
    ("waits completed in batches", ["wait_complete"]),
    ("running nodes, recovering dead engines' work", ["nodes", "recovery"]),
    ("a batch's deferred cloud calls and first looks", ["batch_calls"]),
    ("one resource action under the lock", ["check_resource"]),
    ("traversals, taking a lock over, a batch's row saves", ["services", "takeover",
                                                             "row_saves"]),
    ("waits, hooks, engines, reads", ["waiting", "breakpoints", "engines", "inspect"]),
    ("outbox, sync points and plumbing", ["outbox", "sync_points", "stale", "metrics",
                                          "graph"]),
    ("rows' compare-and-swap statements", ["rows"]),
    ("models", ["models"]),
]
LAYER_OF = {name: depth for depth, (_, names) in enumerate(LAYERS) for name in names}
# What the engine leaves to the stack services above it (convergence imports none:
# they register their handlers at start) and to the pages (the admin alone draws).
ABOVE_CONVERGENCE = ("stacks.services", "stacks.api", "stacks.pages", "stacks.tasks",
                     "softwareconfig")


def imports(path):
    """``[(module, names), ...]`` that ``path`` imports, wherever in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def convergence_imports(path):
    """The modules of convergence that ``path`` imports (``from convergence import nodes``
    too)."""
    modules = set()
    for module, names in imports(path):
        if module == "convergence":
            modules.update(names)
        elif module.startswith("convergence."):
            modules.add(module.split(".")[1])
    return modules


def convergence_modules():
    return sorted(p.stem for p in (ROOT / "convergence").glob("*.py") if p.stem != "__init__")


def test_every_module_has_a_layer():
    assert sorted(set(convergence_modules()) - set(LAYER_OF)) == []


@pytest.mark.parametrize("name", convergence_modules())
def test_a_module_imports_only_the_layers_below_it(name):
    path = ROOT / "convergence" / f"{name}.py"
    wrong = [f"convergence.{other} (layer {LAYER_OF[other]}; {name} is in layer "
             f"{LAYER_OF[name]})" for other in sorted(convergence_imports(path))
             if LAYER_OF.get(other, len(LAYERS)) <= LAYER_OF[name]]
    wrong += [f"{module} (above convergence)" for module, _ in imports(path)
              if module.startswith(ABOVE_CONVERGENCE)]
    assert wrong == []


@pytest.mark.parametrize("name", convergence_modules())
def test_no_private_name_is_imported_from_another_module(name):
    private = [f"{module}.{n}" for module, names in imports(ROOT / "convergence" / f"{name}.py")
               for n in names if n.startswith("_") and module.split(".")[0] in
               ("convergence", "stacks", "heatweb", "softwareconfig")]
    assert private == []


def test_the_celery_app_imports_no_convergence_module():
    """The app is below the engine: the convergence app connects the worker's signals."""
    assert [m for m, _ in imports(ROOT / "heatweb" / "celery.py")
            if m.startswith("convergence")] == []
