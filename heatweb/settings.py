"""Settings for heatweb.

Two run modes, one code path, chosen by environment variables:

* embedded (default): SQLite in WAL mode and Celery on kombu's filesystem
  transport, both under ``HEATWEB_DATA_DIR`` (``./var``); no server needed.
* distributed: ``DATABASE_URL=postgres://...`` and
  ``CELERY_BROKER_URL=redis://...`` (or ``amqp://...``); any number of web
  processes and workers on any number of machines.
"""
import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("HEATWEB_DATA_DIR", BASE_DIR / "var")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _env_bool(name, default=False):
    return os.environ.get(name, str(default)).lower() in ("1", "true", "yes", "on")


def _secret_key():
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        import secrets

        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "*").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "heatweb",
    "stacks",
    "convergence",
    "softwareconfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "heatweb.urls"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "heatweb.wsgi.application"

# Database ---------------------------------------------------------------------

SQLITE_PATH = DATA_DIR / "heatweb.sqlite3"
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{SQLITE_PATH}", conn_max_age=60, conn_health_checks=True)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + busy timeout + IMMEDIATE transactions: the web process and the
    # worker processes can all write without "database is locked" errors.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test_heatweb.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Celery -------------------------------------------------------------------------

BROKER_DIR = DATA_DIR / "broker"
# heatwebfs:// is kombu's filesystem transport made atomic (heatweb/broker.py).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "heatwebfs://")
if CELERY_BROKER_URL.startswith(("heatwebfs", "filesystem")):
    for sub in ("queue", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # How often an idle worker looks for new task files (kombu's default is 1 s).
        "polling_interval": float(os.environ.get("HEATWEB_BROKER_POLL", 0.1)),
    }
else:
    # Longer than the longest resource action, so an unacked task of a live
    # worker is not redelivered to another one.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", 7200))}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Several deployments (or test runs) may share one broker: each can name its queue.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("HEATWEB_QUEUE", "heatweb")

# REST API -----------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["heatweb.auth.TokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "heatweb.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "heatweb Orchestration API v1",
    "DESCRIPTION": "Heat-compatible orchestration API (OpenStack Orchestration API v1).",
    "VERSION": "1.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# heatweb limits and engine settings -------------------------------------------------

HEATWEB = {
    "MAX_TEMPLATE_BYTES": int(os.environ.get("HEATWEB_MAX_TEMPLATE_BYTES", 512 * 1024)),
    "MAX_RESOURCES_PER_STACK": int(os.environ.get("HEATWEB_MAX_RESOURCES", 1000)),
    "MAX_NESTED_DEPTH": int(os.environ.get("HEATWEB_MAX_NESTED_DEPTH", 5)),
    "MAX_YAML_ALIASES": int(os.environ.get("HEATWEB_MAX_YAML_ALIASES", 100)),
    "TOKEN_TTL_HOURS": int(os.environ.get("HEATWEB_TOKEN_TTL_HOURS", 24 * 30)),
    "POLL_INTERVAL": float(os.environ.get("HEATWEB_POLL_INTERVAL", 0.5)),
    "BATCH_SIZE": int(os.environ.get("HEATWEB_BATCH_SIZE", 50)),
    "ENGINE_HEARTBEAT_SECONDS": float(os.environ.get("HEATWEB_HEARTBEAT", 10)),
    "ENGINE_DEAD_AFTER_SECONDS": float(os.environ.get("HEATWEB_DEAD_AFTER", 30)),
    # The heartbeat thread runs the recovery sweep every N beats; a stack in
    # progress with no live engine and no event for STALL_SECONDS is failed.
    "SWEEP_EVERY_BEATS": int(os.environ.get("HEATWEB_SWEEP_EVERY_BEATS", 3)),
    "STALL_SECONDS": float(os.environ.get("HEATWEB_STALL_SECONDS", 300)),
    "PUBLIC_URL": os.environ.get("HEATWEB_PUBLIC_URL", "http://127.0.0.1:8004"),
    # Simulated cloud latency (seconds; 0 = instant): until a new server is
    # ACTIVE, until a deleted one is gone, until suspend/resume take effect,
    # and the round trip added to every cloud API call.
    "SIM_BOOT_SECONDS": float(os.environ.get("HEATWEB_SIM_BOOT_SECONDS", 0)),
    "SIM_DELETE_SECONDS": float(os.environ.get("HEATWEB_SIM_DELETE_SECONDS", 0)),
    "SIM_SUSPEND_SECONDS": float(os.environ.get("HEATWEB_SIM_SUSPEND_SECONDS", 0)),
    "SIM_RESUME_SECONDS": float(os.environ.get("HEATWEB_SIM_RESUME_SECONDS", 0)),
    "SIM_API_SECONDS": float(os.environ.get("HEATWEB_SIM_API_SECONDS", 0)),
    # Waiting resources are polled together, one round per project: the
    # interval grows from WAIT_MIN to WAIT_MAX seconds as a wait gets longer.
    "WAIT_MIN_SECONDS": float(os.environ.get("HEATWEB_WAIT_MIN_SECONDS", 1)),
    "WAIT_MAX_SECONDS": float(os.environ.get("HEATWEB_WAIT_MAX_SECONDS", 10)),
    # The cloud behind physical resources: "simulated" (default, in this
    # service's database) or "openstack" (openstacksdk; the connection from
    # clouds.yaml's OS_CLOUD or the OS_* variables, as for OpenStack's tools).
    "CLOUD_DRIVER": {
        "simulated": "stacks.cloud.simulated.SimulatedCloud",
        "openstack": "stacks.cloud.openstack.OpenStackCloud",
    }[os.environ.get("HEATWEB_CLOUD", "simulated")],
    "OS_CLOUD": os.environ.get("OS_CLOUD", ""),
}

# Auth, i18n, static ---------------------------------------------------------------------

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
AUTH_PASSWORD_VALIDATORS = []
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# gunicorn serves the pages' CSS and JS through WhiteNoise; the finders let it
# serve them straight from static/ too, so collectstatic is not required.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("HEATWEB_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
