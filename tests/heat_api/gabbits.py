"""heat-tempest-plugin's API gabbits, read from its wheel, unmodified.

The wheel (``heat-tempest-plugin==3.0.0``, no dependencies: tempest is not
needed) is downloaded once with pip into a cache folder and its
``heat_tempest_plugin/tests/api/gabbits/*.yaml`` extracted next to it.
"""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "heat-tempest-plugin"
VERSION = "3.0.0"
GABBITS = "heat_tempest_plugin/tests/api/gabbits/"
CACHE = Path(os.environ.get("HEATWEB_CACHE_DIR")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "heatweb")


def gabbits_dir():
    """The folder of the plugin's gabbit YAML files (downloaded on first use)."""
    target = CACHE / f"heat-tempest-plugin-{VERSION}-gabbits"
    if target.is_dir() and any(target.glob("*.yaml")):
        return target
    wheels = CACHE / "wheels"
    wheel = _wheel(wheels)
    if wheel is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                        "-d", str(wheels), f"{PACKAGE}=={VERSION}"], check=True)
        wheel = _wheel(wheels)
    # Extracted aside, then renamed: two test runs at once never see half a folder.
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    partial.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(GABBITS) and name.endswith(".yaml"):
                (partial / Path(name).name).write_bytes(archive.read(name))
    try:
        partial.rename(target)
    except OSError:  # another run got there first
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _wheel(folder):
    found = sorted(folder.glob(f"heat_tempest_plugin-{VERSION}-*.whl")) \
        if folder.is_dir() else []
    return found[0] if found else None


# The files of 3.0.0, for collecting the tests when the wheel cannot be fetched
# (each test then fails with pip's error rather than the whole run at collection).
KNOWN_FILES = ("environments.yaml", "resources.yaml", "resourcetypes.yaml",
               "softwareconfig.yaml", "stacks.yaml", "templates.yaml")


def gabbit_files():
    try:
        return sorted(p.name for p in gabbits_dir().glob("*.yaml"))
    except (OSError, subprocess.CalledProcessError, zipfile.BadZipFile):
        return list(KNOWN_FILES)
