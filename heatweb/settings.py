"""Settings for heatweb.

Two run modes, one code path, chosen by environment variables:

* embedded (default): SQLite in WAL mode and Celery on kombu's filesystem
  transport, both under ``HEATWEB_DATA_DIR`` (``./var``); no server needed.
* distributed: ``DATABASE_URL=postgres://...`` and
  ``CELERY_BROKER_URL=redis://...`` (or ``amqp://...``); any number of web
  processes and workers on any number of machines.
"""
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

from heatweb.public_url import public_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("HEATWEB_DATA_DIR", BASE_DIR / "var")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _env_float(name, default):
    return float(os.environ.get(name, default))


def _env_bool(name, default=False):
    return os.environ.get(name, str(default)).lower() in ("1", "true", "yes", "on")


def allowed_hosts(configured, public_url):
    """DJANGO_ALLOWED_HOSTS when set, else the host of the address it serves (and loopback)."""
    if configured:
        return [h.strip() for h in configured.split(",") if h.strip()]
    host = urlsplit(public_url).hostname or "127.0.0.1"
    return list(dict.fromkeys([host, "127.0.0.1", "localhost", "[::1]"]))


def _secret_key():
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _env_bool("DJANGO_DEBUG", False)
PUBLIC_URL = public_url(DATA_DIR)  # heatweb/public_url.py: the env, what serve recorded, PORT
ALLOWED_HOSTS = allowed_hosts(os.environ.get("DJANGO_ALLOWED_HOSTS"), PUBLIC_URL)
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# Served over HTTPS (the public URL says so, or HEATWEB_HTTPS=1 behind a proxy):
# cookies only travel encrypted and browsers are told to stay on HTTPS.
HTTPS = _env_bool("HEATWEB_HTTPS", PUBLIC_URL.startswith("https://"))
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = int(os.environ.get("HEATWEB_HSTS_SECONDS", 31536000)) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = False
if HTTPS and _env_bool("HEATWEB_BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Pages load only their own scripts and styles (static/), no inline code.
CONTENT_SECURITY_POLICY = os.environ.get("HEATWEB_CSP", "; ".join((
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
    "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'")))

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
    "heatweb.middleware.RequestBudgetMiddleware",
    "heatweb.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Sessions, the signed-in user and messages: for pages only, the API goes past them.
    "heatweb.middleware.PageSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "heatweb.middleware.PageAuthenticationMiddleware",
    "heatweb.middleware.PageMessageMiddleware",
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
# Seconds a connection is kept between requests or tasks (0: closed after each one, so
# idle threads and pool processes hold none; the test suite's services use 0 so that two
# run modes side by side stay within PostgreSQL's max_connections).
DB_CONN_MAX_AGE = int(os.environ.get("HEATWEB_DB_CONN_MAX_AGE", "60"))
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{SQLITE_PATH}", conn_max_age=DB_CONN_MAX_AGE,
        conn_health_checks=True)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + busy timeout + IMMEDIATE transactions: the web process and the
    # worker processes can all write without "database is locked" errors.
    # Connections are kept (CONN_MAX_AGE from above), as for PostgreSQL: a new
    # one per request cost the web server ~8% of its CPU (open, schema parse,
    # the PRAGMAs); outside a transaction a kept connection reads the latest
    # commit, so nothing is read stale.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test_heatweb.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Celery -------------------------------------------------------------------------

BROKER_DIR = DATA_DIR / "broker"
# A message a worker took and did not acknowledge within this many seconds
# goes back to the queue for another worker: a dead worker's tasks run again.
# Tasks are short (resource actions are polled, never waited for), so it is
# twice the dead-engine window; a longer task may run twice, which is safe
# (every task is idempotent and resources are locked).
BROKER_VISIBILITY_TIMEOUT = float(os.environ.get("CELERY_VISIBILITY_TIMEOUT") or
                                 2 * _env_float("HEATWEB_DEAD_AFTER", 30))
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
        "polling_interval": _env_float("HEATWEB_BROKER_POLL", 0.1),
        "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": BROKER_VISIBILITY_TIMEOUT}
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
    "DEFAULT_PARSER_CLASSES": ["heatweb.parsers.StrictJSONParser"],
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

def _env_int(name, default):
    return int(os.environ.get(name, default))



# Budgets: every one is checked before the work it bounds, and refused with a
# 400 or 413 in Heat's error format (README, "Limits").
HEATWEB = {
    # Heat's heat_metadata_server_url: what a HEAT_CFNTOOLS server's cfn-metadata-server
    # and boto config name (heatweb's public URL when unset).
    "CFN_METADATA_SERVER_URL": os.environ.get("HEATWEB_CFN_METADATA_SERVER_URL", ""),
    "MAX_REQUEST_BYTES": _env_int("HEATWEB_MAX_REQUEST_BYTES", 2 * 1024 * 1024),
    # The query string: parameters in all (within Django's own 1000,
    # DATA_UPLOAD_MAX_NUMBER_FIELDS, a 500 when exceeded) and values of one
    # parameter, each comma-separated item counted (a thousand OR'ed tags was
    # a 500 in SQLite: "Expression tree is too large").
    "MAX_QUERY_PARAMS": _env_int("HEATWEB_MAX_QUERY_PARAMS", 200),
    "MAX_FILTER_VALUES": _env_int("HEATWEB_MAX_FILTER_VALUES", 100),
    # The web server (heatweb.web): a connection must send a whole request head
    # within HEADER_READ_SECONDS (also how long an idle kept-alive one stays
    # open) and its body within BODY_READ_SECONDS, or it is closed (408).
    "HEADER_READ_SECONDS": _env_float("HEATWEB_HEADER_READ_SECONDS", 10),
    "BODY_READ_SECONDS": _env_float("HEATWEB_BODY_READ_SECONDS", 30),
    # A web worker process is replaced after about this many requests (0: never;
    # idle workers give their freed memory back, see heatweb/buffering.py).
    "WEB_MAX_REQUESTS": _env_int("HEATWEB_WEB_MAX_REQUESTS", 0),
    "MAX_TEMPLATE_BYTES": _env_int("HEATWEB_MAX_TEMPLATE_BYTES", 512 * 1024),
    "MAX_ENVIRONMENT_BYTES": _env_int("HEATWEB_MAX_ENVIRONMENT_BYTES", 512 * 1024),
    "MAX_FILE_BYTES": _env_int("HEATWEB_MAX_FILE_BYTES", 512 * 1024),
    "MAX_FILES_BYTES": _env_int("HEATWEB_MAX_FILES_BYTES", 1024 * 1024),
    "MAX_RESOURCES_PER_STACK": _env_int("HEATWEB_MAX_RESOURCES", 1000),
    "MAX_TAGS": _env_int("HEATWEB_MAX_TAGS", 100),
    # Heat's hidden_stack_tags: stacks with one of these tags are left out of stack
    # lists unless ?show_hidden=true (comma separated; empty: none hidden).
    "HIDDEN_STACK_TAGS": [t.strip() for t in os.environ.get(
        "HEATWEB_HIDDEN_STACK_TAGS", "data-processing-cluster").split(",") if t.strip()],
    "MAX_NESTED_DEPTH": _env_int("HEATWEB_MAX_NESTED_DEPTH", 5),
    "MAX_YAML_ALIASES": _env_int("HEATWEB_MAX_YAML_ALIASES", 100),
    # Nodes of a parsed document with its aliases expanded (each scalar, list, map is one).
    "MAX_DOCUMENT_NODES": _env_int("HEATWEB_MAX_DOCUMENT_NODES", 100_000),
    # Nesting of lists and maps in a body, template, environment or JSON parameter.
    "MAX_NESTING": _env_int("HEATWEB_MAX_NESTING", 64),
    # Size (text length plus 8 per item) of one function's value, and of all
    # values resolved while validating one template.
    "MAX_VALUE_BYTES": _env_int("HEATWEB_MAX_VALUE_BYTES", 1024 * 1024),
    "MAX_RESOLVED_BYTES": _env_int("HEATWEB_MAX_RESOLVED_BYTES", 4 * 1024 * 1024),
    # Heat's [yaql] options (limit_iterators, memory_quota), and the seconds one yaql
    # evaluation, and all of one validation or resolve, may take (stacks/hot/yaql_expressions.py).
    "YAQL_LIMIT_ITERATORS": _env_int("HEATWEB_YAQL_LIMIT_ITERATORS", 200),
    "YAQL_MEMORY_QUOTA": _env_int("HEATWEB_YAQL_MEMORY_QUOTA", 10000),
    "YAQL_SECONDS": _env_float("HEATWEB_YAQL_SECONDS", 1.0),
    "YAQL_TOTAL_SECONDS": _env_float("HEATWEB_YAQL_TOTAL_SECONDS", 5.0),
    "MAX_TIMEOUT_MINS": _env_int("HEATWEB_MAX_TIMEOUT_MINS", 7 * 24 * 60),
    # How long one minute of timeout_mins lasts, in seconds: tests shorten it.
    "MINUTE_SECONDS": _env_float("HEATWEB_MINUTE_SECONDS", 60),
    "TOKEN_TTL_HOURS": int(os.environ.get("HEATWEB_TOKEN_TTL_HOURS", 24 * 30)),
    "POLL_INTERVAL": _env_float("HEATWEB_POLL_INTERVAL", 0.5),
    "BATCH_SIZE": int(os.environ.get("HEATWEB_BATCH_SIZE", 50)),
    "ENGINE_HEARTBEAT_SECONDS": _env_float("HEATWEB_HEARTBEAT", 10),
    "ENGINE_DEAD_AFTER_SECONDS": _env_float("HEATWEB_DEAD_AFTER", 30),
    # The heartbeat thread runs the recovery sweep every N beats; a stack in
    # progress with no live engine and no event for STALL_SECONDS is failed.
    "SWEEP_EVERY_BEATS": int(os.environ.get("HEATWEB_SWEEP_EVERY_BEATS", 1)),
    # Engines publish outbox messages left behind by a dead writer every
    # RELAY_SECONDS; a writer's own claim on what it just wrote lasts
    # OUTBOX_CLAIM_SECONDS (convergence/outbox.py).
    "RELAY_SECONDS": _env_float("HEATWEB_RELAY_SECONDS", 1),
    "OUTBOX_CLAIM_SECONDS": _env_float("HEATWEB_OUTBOX_CLAIM_SECONDS", 5),
    # A stack in progress that nobody worked on for RESTART_AFTER_SECONDS (a
    # task was lost between two nodes) has its action started over in a new
    # traversal; after the broker's visibility timeout had its chance.
    "RESTART_AFTER_SECONDS": float(os.environ.get("HEATWEB_RESTART_AFTER") or
                                   3 * _env_float("HEATWEB_DEAD_AFTER", 30)),
    "STALL_SECONDS": _env_float("HEATWEB_STALL_SECONDS", 300),
    "PUBLIC_URL": PUBLIC_URL,
    # Locks that expire: the longest window a lock may be taken for, and how
    # many times the engine tries to unlock an expired lock before it reports
    # that it gave up (each try is recorded in the stack's lock history).
    "MAX_LOCK_SECONDS": _env_float("HEATWEB_MAX_LOCK_SECONDS", 366 * 24 * 3600),
    "LOCK_EXPIRY_ATTEMPTS": _env_int("HEATWEB_LOCK_EXPIRY_ATTEMPTS", 5),
    # Fleet locks: how many stacks one batch lock or unlock may take.
    "MAX_FLEET_STACKS": _env_int("HEATWEB_MAX_FLEET_STACKS", 100),
    # Locks that heal: how often the engines check that each physical lock a
    # locked stack holds is still in place, and what they do when one is gone:
    # "heal" (record an event and lock it again) or "report" (record only).
    "LOCK_VERIFY_SECONDS": _env_float("HEATWEB_LOCK_VERIFY_SECONDS", 60),
    "LOCK_HEAL": os.environ.get("HEATWEB_LOCK_HEAL", "heal"),
    # A create repeated (same user, name and request) within this many seconds
    # gets the stack the first one made instead of 409 (stacks/services/create_replay.py).
    "CREATE_REPLAY_SECONDS": _env_float("HEATWEB_CREATE_REPLAY_SECONDS", 600),
    # Simulated cloud latency (seconds; 0 = instant): until a new server is
    # ACTIVE, until a deleted one is gone, until suspend/resume take effect,
    # and the round trip added to every cloud API call.
    "SIM_BOOT_SECONDS": _env_float("HEATWEB_SIM_BOOT_SECONDS", 0),
    "SIM_DELETE_SECONDS": _env_float("HEATWEB_SIM_DELETE_SECONDS", 0),
    "SIM_SUSPEND_SECONDS": _env_float("HEATWEB_SIM_SUSPEND_SECONDS", 0),
    "SIM_RESUME_SECONDS": _env_float("HEATWEB_SIM_RESUME_SECONDS", 0),
    "SIM_API_SECONDS": _env_float("HEATWEB_SIM_API_SECONDS", 0),
    # How long server_create takes to answer once the server exists (a caller
    # that dies meanwhile leaves a server it does not know the id of).
    "SIM_CREATE_SECONDS": _env_float("HEATWEB_SIM_CREATE_SECONDS", 0),
    # Waiting resources are polled together, one round per project: the
    # interval grows from WAIT_MIN to WAIT_MAX seconds as a wait gets longer
    # (a fifth of the time waited so far). One list call per project a round,
    # whatever the number of waits: a short first interval costs little.
    "WAIT_MIN_SECONDS": _env_float("HEATWEB_WAIT_MIN_SECONDS", 0.5),
    "WAIT_MAX_SECONDS": _env_float("HEATWEB_WAIT_MAX_SECONDS", 10),
    # A real cloud: how many of a batch's calls (creates, deletes, ...) an
    # engine has in flight at once; the simulated cloud makes them one by one.
    "CLOUD_PARALLEL_CALLS": int(_env_float("HEATWEB_CLOUD_PARALLEL_CALLS", 10)),
    # Before a server on a port is replaced, how long Nova may take to detach the port.
    "PORT_DETACH_SECONDS": _env_float("HEATWEB_PORT_DETACH_SECONDS", 60),
    # How long a software deployment waits for its agent's signal when its stack
    # has no timeout_mins (Heat's default stack timeout).
    "DEPLOYMENT_TIMEOUT_MINS": _env_float("HEATWEB_DEPLOYMENT_TIMEOUT_MINS", 60),
    # The cloud behind physical resources: "simulated" (default, in this
    # service's database) or "openstack" (openstacksdk; the connection from
    # clouds.yaml's OS_CLOUD or the OS_* variables, as for OpenStack's tools).
    "CLOUD_DRIVER": {
        "simulated": "stacks.cloud.simulated.SimulatedCloud",
        "openstack": "stacks.cloud.openstack.OpenStackCloud",
    }[os.environ.get("HEATWEB_CLOUD", "simulated")],
    "OS_CLOUD": os.environ.get("OS_CLOUD", ""),
    # The name heatweb's requests to the cloud carry first in their User-Agent
    # ("heatweb keystoneauth1/..."): tells them from others in the services' logs.
    "CLOUD_APP_NAME": os.environ.get("HEATWEB_CLOUD_APP_NAME", "heatweb"),
    "OS_REGION": os.environ.get("OS_REGION_NAME", "RegionOne"),
    # Heat's enable_stack_abandon / enable_stack_adopt (off by default in Heat):
    # on here, so `openstack stack abandon` / `stack adopt` work out of the box.
    "ENABLE_STACK_ABANDON": _env_bool("HEATWEB_ENABLE_STACK_ABANDON", True),
    "ENABLE_STACK_ADOPT": _env_bool("HEATWEB_ENABLE_STACK_ADOPT", True),
    # Heat's max_snapshots_per_stack (cloud admins are not limited; -1: no limit).
    "MAX_SNAPSHOTS_PER_STACK": _env_int("HEATWEB_MAX_SNAPSHOTS_PER_STACK", 32),
    # Heat's default_software_config_transport and default_deployment_signal_transport:
    # a server's and a deployment's transport when the template gives none (Heat's
    # defaults are POLL_SERVER_CFN and CFN_SIGNAL; heatweb's server default needs no EC2
    # key pair, and an operator moving from Heat sets Heat's).
    "DEFAULT_SOFTWARE_CONFIG_TRANSPORT": os.environ.get(
        "HEATWEB_DEFAULT_SOFTWARE_CONFIG_TRANSPORT", "POLL_SERVER_HEAT"),
    "DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT": os.environ.get(
        "HEATWEB_DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT", "CFN_SIGNAL"),
}

for _name, _allowed in (
        ("DEFAULT_SOFTWARE_CONFIG_TRANSPORT",
         ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")),
        ("DEFAULT_DEPLOYMENT_SIGNAL_TRANSPORT",
         ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL"))):
    if HEATWEB[_name] not in _allowed:
        raise ValueError(f"HEATWEB_{_name}={HEATWEB[_name]!r}: use one of {', '.join(_allowed)}")

if HEATWEB["LOCK_HEAL"] not in ("heal", "report"):
    raise ValueError(f"HEATWEB_LOCK_HEAL={HEATWEB['LOCK_HEAL']!r}: use 'heal' or 'report'")

# Django reads form bodies (pages, admin) within the same budget.
DATA_UPLOAD_MAX_MEMORY_SIZE = HEATWEB["MAX_REQUEST_BYTES"]
# Django's own count stays above the query budget, which answers first (a 400, not a 500).
DATA_UPLOAD_MAX_NUMBER_FIELDS = max(1000, HEATWEB["MAX_QUERY_PARAMS"])

# Auth, i18n, static ---------------------------------------------------------------------

LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
AUTH_PASSWORD_VALIDATORS = []
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# ISO 8601 dates everywhere, the admin too (heatweb/formats/en/formats.py).
FORMAT_MODULE_PATH = ["heatweb.formats"]
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# The web server serves the pages' CSS and JS through WhiteNoise; the finders let it
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

# Keystone mode (heatweb/keystone.py) ---------------------------------------------------
# HEATWEB_AUTH=keystone: the API takes Keystone tokens (validated by
# keystonemiddleware's auth_token), the pages sign people in with their
# Keystone user name and password, and the engine acts for each stack's owner
# through a Keystone trust to heatweb's service user. The default, "own",
# keeps heatweb's own tokens and users (heatweb/tokens.py).

HEATWEB_AUTH = os.environ.get("HEATWEB_AUTH", "own")
if HEATWEB_AUTH not in ("own", "keystone"):
    raise ValueError(f"HEATWEB_AUTH={HEATWEB_AUTH!r}: use 'own' or 'keystone'")
KEYSTONE = {
    # Keystone's public URL, with or without /v3 (http://keystone:5000/v3).
    "URL": os.environ.get("KEYSTONE_URL", ""),
    "SERVICE_USERNAME": os.environ.get("HEATWEB_SERVICE_USERNAME", "heatweb"),
    "SERVICE_PASSWORD": os.environ.get("HEATWEB_SERVICE_PASSWORD", ""),
    "SERVICE_PROJECT": os.environ.get("HEATWEB_SERVICE_PROJECT", "service"),
    "SERVICE_USER_DOMAIN": os.environ.get("HEATWEB_SERVICE_USER_DOMAIN", "Default"),
    "SERVICE_PROJECT_DOMAIN": os.environ.get("HEATWEB_SERVICE_PROJECT_DOMAIN", "Default"),
    # The domain page sign-ins look user names up in.
    "USER_DOMAIN": os.environ.get("KEYSTONE_USER_DOMAIN", "Default"),
    "REGION": os.environ.get("KEYSTONE_REGION", "RegionOne"),
    # Stack users (heatweb/stack_users.py): their domain, made on first use, and role.
    "STACK_USER_DOMAIN": os.environ.get("HEATWEB_STACK_USER_DOMAIN", "heatweb_stack_users"),
    "STACK_USER_ROLE": os.environ.get("HEATWEB_STACK_USER_ROLE", "heat_stack_user"),
    # Heat's allow_trusts_redelegation: stack trusts Keystone lets their trustee redelegate,
    # so that a service heatweb calls through a stack's trust can make its own trust from
    # that token (Mistral's cron triggers, Aodh's trust+ actions). Off by default, as Heat's.
    "TRUSTS_REDELEGATION": os.environ.get("HEATWEB_TRUSTS_REDELEGATION", "false").lower()
    in ("1", "true", "yes"),
    # keystonemiddleware keeps a validated token this long (-1: never cache).
    "TOKEN_CACHE_SECONDS": int(os.environ.get("KEYSTONE_TOKEN_CACHE_SECONDS", 300)),
}
if HEATWEB_AUTH == "keystone":
    if not KEYSTONE["URL"] or not KEYSTONE["SERVICE_PASSWORD"]:
        raise ValueError("HEATWEB_AUTH=keystone needs KEYSTONE_URL and "
                         "HEATWEB_SERVICE_PASSWORD (heatweb's service user)")
    REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"] = [
        "heatweb.keystone_auth.KeystoneTokenAuthentication"]
    AUTHENTICATION_BACKENDS = ["heatweb.keystone_auth.KeystonePasswordBackend",
                               "django.contrib.auth.backends.ModelBackend"]
    MIDDLEWARE.insert(MIDDLEWARE.index("heatweb.middleware.PageAuthenticationMiddleware")
                      + 1, "heatweb.keystone_auth.KeystoneSessionMiddleware")
