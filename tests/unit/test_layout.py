"""The house's floors (docs/layout.md, scripts/layout): imports run one way.

Read from the source with ``ast`` (nothing imported), function-level imports
included: no import circle, no import from a floor to one above it, no module
taking another's private name, and docs/layout.md's picture drawn from the
imports as they are. The last tests show the checks catch each kind of break.
"""
import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_layout():
    path = str(ROOT / "scripts" / "layout")
    loader = importlib.machinery.SourceFileLoader("heatweb_layout", path)
    spec = importlib.util.spec_from_loader("heatweb_layout", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


layout = _load_layout()


@pytest.fixture(scope="module")
def found():
    return layout.problems()


def _report(lines):
    return "\n" + "\n".join(lines)


def test_every_module_has_a_floor(found):
    assert not found["floor"], _report(found["floor"])


def test_no_import_closes_a_circle(found):
    assert not found["circle"], _report(found["circle"])


def test_no_import_runs_up_a_floor(found):
    assert not found["upward"], _report(found["upward"])


def test_no_module_takes_another_modules_private_name(found):
    assert not found["private"], _report(found["private"])


def test_the_picture_in_docs_layout_is_drawn_from_the_imports():
    text = (ROOT / "docs" / "layout.md").read_text()
    assert layout.with_picture(text) == text, "run scripts/layout --write"


# The checks themselves, on a small made-up app -----------------------------------------

LAYERS = [("top", ["app.views"], ""), ("middle", ["app.services"], ""),
          ("bottom", ["app.models", "=app"], "")]


def _app(tmp_path, files):
    for name, text in {"app/__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return layout.read_project(tmp_path, apps=("app",), skip=())


def test_an_import_inside_a_function_still_closes_a_circle(tmp_path):
    modules, arrows, _ = _app(tmp_path, {
        "app/services.py": "from app import models\n",
        "app/models.py": "def later():\n    from app.services import thing\n"})
    assert layout.circles(modules, arrows) == [["app.models", "app.services"]]
    assert [a.in_function for a in arrows if a.source == "app.models"] == [True]


def test_a_package_import_of_a_module_is_an_arrow_to_that_module(tmp_path):
    modules, arrows, _ = _app(tmp_path, {
        "app/services.py": "from . import models\n", "app/models.py": ""})
    assert [(a.source, a.target) for a in arrows] == [("app.services", "app.models")]
    assert layout.circles(modules, arrows) == []


def test_an_import_from_a_floor_above_is_upward(tmp_path):
    _, arrows, _ = _app(tmp_path, {
        "app/views.py": "from app.services import act\n",
        "app/services.py": "from app.models import Row\n",
        "app/models.py": "import app.views\n"})
    assert [(a.source, a.target) for a in layout.upward_imports(arrows, LAYERS)] == \
        [("app.models", "app.views")]


def test_a_private_name_taken_either_way_is_found(tmp_path):
    _, _, private = _app(tmp_path, {
        "app/models.py": "def _helper():\n    pass\n\n\ndef __getattr__(name):\n    pass\n",
        "app/services.py": "from app.models import _helper, __getattr__\n",
        "app/views.py": "from app import models\n\nmodels._helper()\nmodels.__name__\n"})
    assert sorted((source, attr) for source, _, _, attr in private) == \
        [("app.services", "_helper"), ("app.views", "_helper")]


def test_the_longest_prefix_names_the_floor():
    assert layout.floor_of("app.models.rows", LAYERS) == 2
    assert layout.floor_of("app.views", LAYERS) == 0
    assert layout.floor_of("app", LAYERS) == 2
    assert layout.floor_of("app.other", LAYERS) is None
