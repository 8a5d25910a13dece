"""Playwright on Debian's chromium against the live service (gunicorn + Celery workers).

No browser is downloaded: ``/usr/bin/chromium`` must exist (``./test``
installs it), and a missing one fails the tests rather than skipping them.
"""
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

CHROMIUM = Path("/usr/bin/chromium")
# Screenshots go under pytest's temporary directory (--basetemp), never into the checkout.
SCREENSHOTS = None
VIEWPORT = {"width": 1000, "height": 700}
PASSWORD = "correct horse battery"
TIMEOUT_MS = 15_000


@pytest.fixture(scope="session", autouse=True)
def screenshot_dir(tmp_path_factory):
    global SCREENSHOTS
    SCREENSHOTS = tmp_path_factory.mktemp("screenshots", numbered=False)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), (f"{CHROMIUM} is missing: the browser tests need Debian's "
                               f"chromium (apt-get install chromium; ./test installs it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


@pytest.fixture
def context(browser, live_service):
    with browser_context(browser, live_service, viewport=VIEWPORT) as context:
        yield context


@contextmanager
def browser_context(browser, live_service, **options):
    """A browser context on the live service (another viewport, JavaScript off...)."""
    context = browser.new_context(base_url=live_service.url, **options)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context):
    return context.new_page()


def make_user(live_service, username, project, role="member"):
    """A user with PASSWORD and a membership; returns issue_token's JSON (project id...)."""
    info = live_service.issue_token(username, project, role)
    done = live_service.manage("shell", "-c", (
        "from django.contrib.auth import get_user_model\n"
        f"user = get_user_model().objects.get(username={username!r})\n"
        f"user.set_password({PASSWORD!r})\n"
        "user.save()\n"))
    assert done.returncode == 0, done.stderr
    return info


def api_stack_create(info, name, template, **body):
    """A stack created through the API by make_user's user: ``(session, id, stack URL)``."""
    session = requests.Session()
    session.headers.update({"X-Auth-Token": info["token"]})
    resp = session.post(info["endpoint"] + "/stacks",
                        json={"stack_name": name, "template": template, **body})
    assert resp.status_code == 201, resp.text
    stack_id = resp.json()["stack"]["id"]
    return session, stack_id, f"{info['endpoint']}/stacks/{name}/{stack_id}"


@pytest.fixture
def unique():
    return uuid.uuid4().hex[:6]


def sign_in(page, username):
    page.goto("/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")


def screenshot(page, name, *, full_page=False):
    """A PNG of the page in the session's screenshot directory; returns its path."""
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def assert_accessible(page, what):
    """axe-core (shipped in the axe-playwright-python wheel) finds no violation on the page."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    violations = results.response["violations"]
    assert not violations, f"{what}: axe-core violations:\n" + "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} at "
        f"{[n['target'] for n in v['nodes']][:5]}" for v in violations)
