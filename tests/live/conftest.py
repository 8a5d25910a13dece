"""The live service (real gunicorn + Celery worker processes) lives in tests/conftest.py.

It is there so that every test directory (tests/live, browser tests) gets the
``live_service`` session fixture; the names are re-exported here for tests
that start a service of their own (``from tests.live.conftest import LiveService``).
"""
from tests.conftest import LiveService, PostgresDatabase, RedisDatabase  # noqa: F401
