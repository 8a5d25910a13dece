"""Pure pieces of issue 24: suspended under a lock, and the URL the server is reached at."""
import pytest

from heatweb.public_url import bind_public_url, public_url, record_public_url
from stacks.models.states import is_suspended


@pytest.mark.parametrize("state, pre_lock_state, suspended", [
    ("SUSPEND_COMPLETE", "", True),
    ("LOCK_COMPLETE", "SUSPEND_COMPLETE", True),
    ("UNLOCK_COMPLETE", "SUSPEND_COMPLETE", True),
    ("UNLOCK_IN_PROGRESS", "SUSPEND_COMPLETE", True),
    ("UNLOCK_COMPLETE", "CREATE_COMPLETE", False),
    ("RESUME_COMPLETE", "SUSPEND_COMPLETE", False),  # resumed after the unlock
    ("CREATE_COMPLETE", "", False),
    ("SUSPEND_FAILED", "", False),
])
def test_is_suspended(state, pre_lock_state, suspended):
    assert is_suspended(state, pre_lock_state) is suspended


@pytest.mark.parametrize("bind, url", [
    ("127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("0.0.0.0:9000", "http://127.0.0.1:9000"),
    ("[::]:9000", "http://127.0.0.1:9000"),
    ("[::1]:9000", "http://[::1]:9000"),
    ("host.example:80", "http://host.example:80"),
])
def test_bind_public_url(bind, url):
    assert bind_public_url(bind) == url


def test_public_url_takes_the_env_then_the_running_server_then_the_port(tmp_path):
    assert public_url(tmp_path, {}) == "http://127.0.0.1:8004"
    assert public_url(tmp_path, {"PORT": "8100"}) == "http://127.0.0.1:8100"
    assert public_url(tmp_path, {"HEATWEB_BIND": "0.0.0.0:8200", "PORT": "1"}) == \
        "http://127.0.0.1:8200"
    record_public_url(tmp_path, "http://127.0.0.1:8300")
    assert public_url(tmp_path, {"PORT": "8100"}) == "http://127.0.0.1:8300"
    assert public_url(tmp_path, {"HEATWEB_PUBLIC_URL": "https://heat.example"}) == \
        "https://heat.example"
