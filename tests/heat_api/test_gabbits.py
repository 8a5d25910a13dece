"""Heat's own API tests (heat-tempest-plugin's gabbits) against the live service.

Each YAML file is one test here: gabbi builds its unittest suite against the
project's endpoint with a heatweb token, and every step must pass.
"""
import io
import os
import unittest
import uuid

import pytest
from gabbi import driver

from tests.heat_api import fixtures
from tests.heat_api.gabbits import gabbit_files, gabbits_dir

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def heat_token(live_service):
    return live_service.issue_token(f"gabbi-{uuid.uuid4().hex[:6]}",
                                    f"gabbi-{uuid.uuid4().hex[:6]}")


@pytest.mark.parametrize("gabbit", gabbit_files())
def test_heat_tempest_plugin_gabbit(gabbit, heat_token, tmp_path, monkeypatch):
    monkeypatch.setenv("OS_TOKEN", heat_token["token"])
    monkeypatch.setenv("PREFIX", f"api-{uuid.uuid4().hex[:8]}")
    test_dir = tmp_path / "gabbits"
    test_dir.mkdir()
    (test_dir / gabbit).write_bytes((gabbits_dir() / gabbit).read_bytes())
    suite = driver.build_tests(str(test_dir), unittest.TestLoader(),
                               url=heat_token["endpoint"], host="",
                               fixture_module=fixtures, test_loader_name=__name__)
    out = io.StringIO()
    result = unittest.TextTestRunner(stream=out, verbosity=2).run(suite)
    assert result.testsRun > 0
    assert result.wasSuccessful(), out.getvalue()
