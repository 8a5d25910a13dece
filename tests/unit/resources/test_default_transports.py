"""Heat's ``default_software_config_transport`` and ``default_deployment_signal_transport``
as heatweb's settings: the default a server's and a deployment's schema give (and so a
template that names none gets), and a value Heat would not take stops the start."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
READ = ("import django, json; django.setup()\n"
        "from stacks.resources.registry import get_plugin\n"
        "print(json.dumps([get_plugin('OS::Nova::Server').properties_schema"
        "['software_config_transport'].default, get_plugin('OS::Heat::SoftwareDeployment')"
        ".properties_schema['signal_transport'].default]))\n")


def _defaults(tmp_path, **env):
    done = subprocess.run([sys.executable, "-c", READ], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "heatweb.settings",
                               "PYTHONPATH": str(ROOT), "HEATWEB_DATA_DIR": str(tmp_path),
                               **env})
    return done.returncode, done.stdout, done.stderr


def test_heatweb_defaults_and_heats_defaults_set_by_the_operator(tmp_path):
    code, out, err = _defaults(tmp_path)
    assert code == 0, err
    assert json.loads(out) == ["POLL_SERVER_HEAT", "CFN_SIGNAL"]
    code, out, err = _defaults(
        tmp_path, HEATWEB_DEFAULT_SOFTWARE_CONFIG_TRANSPORT="POLL_SERVER_CFN",
        HEATWEB_DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT="HEAT_SIGNAL")
    assert code == 0, err
    assert json.loads(out) == ["POLL_SERVER_CFN", "HEAT_SIGNAL"]


def test_a_transport_heat_does_not_know_stops_the_start(tmp_path):
    code, _, err = _defaults(tmp_path, HEATWEB_DEFAULT_SOFTWARE_CONFIG_TRANSPORT="POLL_NOWHERE")
    assert code != 0 and "HEATWEB_DEFAULT_SOFTWARE_CONFIG_TRANSPORT='POLL_NOWHERE'" in err
