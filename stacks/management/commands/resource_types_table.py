"""Print the table of resource types and the clouds each is tested on (docs/resource-types.md).

For each type the registry lists: whether it makes objects in a cloud (a
service's type) or is Heat's own (no cloud object: the same on both clouds),
and which test files create it on the simulated cloud (``tests/live``, ``tests/corpus``,
``tests/browser``, ``tests/heat_api``, ``tests/integration``) and on the real
one (``tests/openstack``, with the templates those files import from
``tests.live``). A type is found in a file by its name as written there; the file
named first makes it as a resource's ``type`` (when one does), in a file named for its
kind or service when there is one.
"""
import re
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from stacks.resources import registry

SIMULATED = ("live", "browser", "heat_api", "integration", "corpus")
# Modules of the types whose physical resource is a cloud's object.
CLOUD_MODULES = ("compute", "image", "cinder", "block_devices", "swift", "barbican", "octavia",
                 "neutron", "neutron_extras", "neutron_l3", "keystone", "nova_objects",
                 "cloud_object", "mistral")

# Tests of stacks upstream Heat made and heatweb imported: counted, not named first.
MADE_BY_HEAT = ("test_import_from_heat.py", "test_import_heat.py")


def _texts(folder):
    return {path: path.read_text(errors="ignore") for path in folder.rglob("*")
            if path.is_file() and path.suffix in (".py", ".yaml", ".yml", ".json")}


def _with_imports(texts, tests):
    """Each real-cloud test file's text, followed by the tests.live modules it imports."""
    out = {}
    for path, text in texts.items():
        imported = [tests / "live" / f"{name}.py"
                    for name in re.findall(r"from tests\.live\.(\w+) import", text)]
        out[path] = text + "".join(p.read_text(errors="ignore") for p in imported if p.exists())
    return out


def _words(part):
    """``FloatingIP`` -> {"floating", "ip"}."""
    return {w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]+", part)}


def _named_for(file_name, words):
    stem = file_name.lower().removeprefix("test_")
    parts = {p[:-1] if p.endswith("s") else p for p in re.split(r"[_.]", stem)}
    return bool(words & parts)


def _files(type_name, texts):
    """The files naming the type. The one the table names first makes it as a resource's
    ``type`` (not a schema's key or a list of types), in a file named for its kind when
    there is one (``test_openstack_volumes.py`` for ``OS::Cinder::Volume``), else for its
    service (``test_openstack_zaqar.py`` for ``OS::Zaqar::Queue``), and is not
    one whose stacks upstream Heat makes (``MADE_BY_HEAT``)."""
    pattern = re.compile(re.escape(type_name) + r"(?![\w:])")
    as_type = re.compile(r"""\b[Tt]ype["']?\s*:\s*["']?""" + pattern.pattern)
    service, kind = type_name.split("::")[-2:]
    kind_words, service_words = _words(kind), _words(service) - {"heat"}
    found = {}
    for path, text in texts.items():
        if pattern.search(text):
            found[path.name] = found.get(path.name, False) or bool(as_type.search(text))
    return sorted(found, key=lambda name: (
        name in MADE_BY_HEAT, not found[name], not _named_for(name, kind_words),
        not _named_for(name, service_words), name))


def _makes_cloud_objects(cls):
    """A type of a service module, or a CFN type built on one (``AWS::EC2::Instance``)."""
    return any(base.__module__.startswith("stacks.resources.") and
               base.__module__.rsplit(".", 1)[-1] in CLOUD_MODULES for base in cls.__mro__)


def _cell(files):
    if not files:
        return "not tested"
    return f"`{files[0]}`" + (f" (+{len(files) - 1})" if len(files) > 1 else "")


class Command(BaseCommand):
    help = "Print the Markdown table of resource types and the clouds each is tested on."

    def handle(self, *args, **options):
        tests = Path(settings.BASE_DIR) / "tests"
        simulated = {}
        for folder in SIMULATED:
            simulated.update(_texts(tests / folder))
        real = _with_imports(_texts(tests / "openstack"), tests)
        lines = ["| type | cloud object | simulated cloud | OpenStack cloud |",
                 "|---|---|---|---|"]
        counts = {"sim": 0, "real": 0, "own": 0}
        for type_name in registry.list_types():
            cloud = _makes_cloud_objects(registry.get_plugin(type_name))
            sim_files, real_files = _files(type_name, simulated), _files(type_name, real)
            counts["sim"] += bool(sim_files)
            counts["real"] += bool(real_files) and cloud
            counts["own"] += not cloud
            real_cell = _cell(real_files) if cloud else "same code (no cloud object)"
            lines.append(f"| `{type_name}` | {'yes' if cloud else 'no'} | {_cell(sim_files)} "
                         f"| {real_cell} |")
        total = len(registry.list_types())
        self.stdout.write("\n".join(lines))
        self.stdout.write(f"\n{total} types: {counts['sim']} tested on the simulated cloud; "
                          f"{total - counts['own']} make cloud objects, {counts['real']} of "
                          f"them tested on the OpenStack cloud; {counts['own']} are Heat's "
                          f"own (no cloud object).")
