"""Configuration: safe defaults, overridden by ``COMMERCE_*`` environment variables."""

import importlib.util
import os
from urllib.parse import urlparse

DEFAULTS = {
    # A SQLite file under ./instance/ unless a postgresql:// URL is given.
    "DATABASE_URL": "sqlite:///instance/commerce.db",
    "JWT_PUBLIC_KEY_FILE": None,
    "JWT_JWKS_URL": None,
    "JWT_ISSUER": None,
    "JWT_AUDIENCE": None,
    "JWT_LEEWAY_SECONDS": 30,
    "JWT_MAX_LIFETIME_SECONDS": 24 * 3600 + 60,  # exp - iat; the spec's 24 h and a minute
    "MAX_BODY_BYTES": 1024 * 1024,
    # Encrypts marketplace API tokens at rest (commerce_api/crypto.py); unset: a key file.
    "SECRET_KEY": None,
    "TRUSTED_PROXIES": "",  # comma list of CIDRs whose X-Forwarded-For is believed
    # comma list of origins (https://console.example.com) whose browsers may call the API;
    # empty: no CORS headers at all (http/cors.py)
    "CORS_ORIGINS": "",
    # How long a process keeps an API key row. Changes are seen at once all the same: every
    # request reads the tenant's auth_version, and a changed one drops the cached row.
    "AUTH_CACHE_SECONDS": 300,
    "REDIS_URL": None,
    "RATE_LIMIT_ENABLED": True,
    "RATE_LIMIT_KEY_PREFIX": "commerce:rl",  # Redis keys of the rate-limit counters
    # a list filtered by more than its status counts at most this many rows for its total
    # (null past it); 0: no cap. Unfiltered and status-filtered big lists keep exact counts.
    "LIST_COUNT_CAP": 10_000,
    # SQLite: the job worker checkpoints the WAL from a thread of its own once this many
    # frames wait (commits keep SQLite's own checkpoint at 1,000 as the backstop); 0: off
    "SQLITE_CHECKPOINT_FRAMES": 200,
    "JOB_QUEUE_CAPACITY": 100,
    "INTERNAL_JOB_CAPACITY": 100,  # queued internal jobs (syncs, cancellations) per tenant
    "WORKER_LEASE_SECONDS": 30,
    "WORKER_POLL_INTERVAL": 0.5,
    "WORKER_SHUTDOWN_GRACE_SECONDS": 30,
    "WORKER_MAX_ATTEMPTS": 4,  # the first try plus three retries
    "WORKER_CONCURRENCY": 4,  # jobs one worker process runs at once (threads)
    "WORKER_MAX_HUNG_RUNNERS": 0,  # hung runner threads before the worker exits; 0: 4 x conc.
    "WORKER_RETRY_BACKOFF_SECONDS": 5.0,  # first retry delay; doubles per attempt
    # a worker loop with no successful pass for this long is reported stalled (readiness,
    # /metrics, the worker's log)
    "WORKER_STALL_SECONDS": 60.0,
    "JOB_FAIR_SPACING_MS": 1000,  # claim-key gap between one tenant's queued jobs (fairness)
    "JOB_PRIORITY_AGING_SECONDS": 300,  # a waiting job gains one priority level per this
    "JOB_DEFAULT_TIMEOUT_SECONDS": 600,  # for job types registered without a timeout
    "EXTRA_TASK_MODULES": "",  # comma list of modules registering more job types (tests)
    "ORDER_PULL_INTERVAL_SECONDS": 60,
    "MARKETPLACE_CONNECT_TIMEOUT": 3.0,
    "MARKETPLACE_READ_TIMEOUT": 10.0,
    "MARKETPLACE_DEADLINE_SECONDS": 10.0,  # wall clock of one outbound call, however it trickles
    "MARKETPLACE_BULK_DEADLINE_SECONDS": 30.0,  # wall clock of a whole bulk-shipment request
    "MARKETPLACE_TENANT_CONCURRENCY": 2,  # outbound calls of one tenant at once, per process
    # a shipment, cancellation or price apply holds its order/recommendation this long at
    # most (always at least the marketplace deadline plus a second): a crash frees it
    "CLAIM_LEASE_SECONDS": 30.0,
    "MARKETPLACE_SLOT_WAIT_SECONDS": 600.0,  # how long background work waits for a tenant slot
    "MARKETPLACE_CONNECTION_CONCURRENCY": 4,  # listing pushes in flight per connection
    "MARKETPLACE_PUSH_POLL_INTERVAL": 0.2,  # seconds between looks for pending listings
    # seconds between looks for orders a marketplace notification named (DESIGN 13)
    "ORDER_NOTIFIED_POLL_INTERVAL": 0.1,
    "MARKETPLACE_LISTING_PUSH_SPACING_SECONDS": 0.6,  # a listing changing on is pushed this often
    # real marketplaces' usage plans kept fleet-wide (database, or Redis when REDIS_URL)
    "MARKETPLACE_RATE_BUDGETS": True,
    "MARKETPLACE_BUDGET_WAIT_SECONDS": 60.0,  # how long background work waits for a budget
    "COMPETITOR_MAX_AGE_SECONDS": 86400,  # older competitor offers are stale (pricing)
    "PRICING_CHUNK_SIZE": 500,  # SKUs per chunk of a repricing job (fixed queries per chunk)
    "PRICING_MIN_CHANGE": "0.5%",  # smaller changes are not recommended; or an amount: 0.05
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": False,
    # seconds between attempts; one attempt more than entries (8 over about 27 h)
    "WEBHOOK_RETRY_SCHEDULE": "5,300,1800,7200,18000,36000,36000",
    "WEBHOOK_TIMEOUT_SECONDS": 10.0,  # total time of one attempt
    "WEBHOOK_SEND_CONCURRENCY": 8,  # sending threads per worker process
    "WEBHOOK_BATCH_SIZE": 200,  # events fanned out / deliveries claimed per statement
    "WEBHOOK_POLL_INTERVAL": 0.1,  # seconds between looks at the outbox when idle
    "WEBHOOK_LEASE_SECONDS": 60,  # a claimed delivery is another worker's after this
    "WEBHOOK_SECRET_GRACE_SECONDS": 86400,  # the old secret still signs after a rotation
    "WEBHOOK_RETENTION_DAYS": 30,  # finished deliveries and delivered events kept this long
    "WEBHOOK_MAX_ENDPOINTS": 20,  # per tenant
    "WEBHOOK_ENDPOINT_CONCURRENCY": 2,  # sends in flight to one endpoint, fleet-wide
    "WEBHOOK_DISABLE_AFTER_DAYS": 5.0,  # an endpoint failing this long is disabled
    # llm_visibility_score: an OpenAI-compatible chat completions API
    "LLM_BASE_URL": None,  # e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1
    "LLM_API_KEY": None,  # sent as a Bearer token when set
    "LLM_MODELS": "",  # comma list of the models (assistants) to ask
    "LLM_TIMEOUT_SECONDS": 60.0,  # per request, and never past the job's own time-out
    "LLM_MAX_RETRIES": 4,  # per request, on 429, 5xx and network errors
    "LLM_RETRY_MAX_WAIT_SECONDS": 30.0,  # longest backoff or Retry-After waited for
    "LLM_CONCURRENCY": 4,  # requests one job has in flight
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "text",  # or "json": one JSON object per line (http/logs.py)
    "METRICS_ENABLED": False,  # GET /metrics in the Prometheus text format
    "METRICS_TOKEN": None,  # when set, /metrics wants "Authorization: Bearer <token>"
    # the merchant console (/console): a session ends after this long without a request,
    # and after the second figure whatever the activity
    "CONSOLE_SESSION_IDLE_SECONDS": 1800,
    "CONSOLE_SESSION_MAX_SECONDS": 12 * 3600,
    # sign-in to the console through an OpenID Connect identity provider (authorization code
    # + PKCE); unset issuer: API keys only. The token forwarded to the API (``access_token``
    # or ``id_token``) is checked as the API checks user JWTs (COMMERCE_JWT_*).
    "OIDC_ISSUER": None,
    "OIDC_CLIENT_ID": None,
    "OIDC_CLIENT_SECRET": None,
    "OIDC_REDIRECT_URI": None,  # default: this server's /console/oidc/callback
    "OIDC_SCOPES": "openid email profile",
    "OIDC_TOKEN": "access_token",
}

_INT_KEYS = {
    "CONSOLE_SESSION_IDLE_SECONDS",
    "CONSOLE_SESSION_MAX_SECONDS",
    "LIST_COUNT_CAP",
    "SQLITE_CHECKPOINT_FRAMES",
    "JWT_LEEWAY_SECONDS",
    "JWT_MAX_LIFETIME_SECONDS",
    "MAX_BODY_BYTES",
    "JOB_QUEUE_CAPACITY",
    "INTERNAL_JOB_CAPACITY",
    "WORKER_LEASE_SECONDS",
    "WORKER_SHUTDOWN_GRACE_SECONDS",
    "WORKER_MAX_ATTEMPTS",
    "WORKER_CONCURRENCY",
    "WORKER_MAX_HUNG_RUNNERS",
    "JOB_PRIORITY_AGING_SECONDS",
    "JOB_FAIR_SPACING_MS",
    "JOB_DEFAULT_TIMEOUT_SECONDS",
    "ORDER_PULL_INTERVAL_SECONDS",
    "MARKETPLACE_TENANT_CONCURRENCY",
    "MARKETPLACE_CONNECTION_CONCURRENCY",
    "COMPETITOR_MAX_AGE_SECONDS",
    "PRICING_CHUNK_SIZE",
    "WEBHOOK_SEND_CONCURRENCY",
    "WEBHOOK_BATCH_SIZE",
    "WEBHOOK_LEASE_SECONDS",
    "WEBHOOK_SECRET_GRACE_SECONDS",
    "WEBHOOK_RETENTION_DAYS",
    "WEBHOOK_MAX_ENDPOINTS",
    "WEBHOOK_ENDPOINT_CONCURRENCY",
    "LLM_MAX_RETRIES",
    "LLM_CONCURRENCY",
}
_FLOAT_KEYS = {
    "AUTH_CACHE_SECONDS",
    "WORKER_POLL_INTERVAL",
    "WORKER_RETRY_BACKOFF_SECONDS",
    "WORKER_STALL_SECONDS",
    "MARKETPLACE_CONNECT_TIMEOUT",
    "MARKETPLACE_READ_TIMEOUT",
    "MARKETPLACE_DEADLINE_SECONDS",
    "MARKETPLACE_BULK_DEADLINE_SECONDS",
    "CLAIM_LEASE_SECONDS",
    "MARKETPLACE_SLOT_WAIT_SECONDS",
    "MARKETPLACE_PUSH_POLL_INTERVAL",
    "ORDER_NOTIFIED_POLL_INTERVAL",
    "MARKETPLACE_LISTING_PUSH_SPACING_SECONDS",
    "MARKETPLACE_BUDGET_WAIT_SECONDS",
    "WEBHOOK_TIMEOUT_SECONDS",
    "WEBHOOK_POLL_INTERVAL",
    "WEBHOOK_DISABLE_AFTER_DAYS",
    "LLM_TIMEOUT_SECONDS",
    "LLM_RETRY_MAX_WAIT_SECONDS",
}
_BOOL_KEYS = {
    "RATE_LIMIT_ENABLED",
    "WEBHOOK_ALLOW_PRIVATE_TARGETS",
    "METRICS_ENABLED",
    "MARKETPLACE_RATE_BUDGETS",
}


def _coerce(key, raw):
    if key in _INT_KEYS:
        return int(raw)
    if key in _FLOAT_KEYS:
        return float(raw)
    if key in _BOOL_KEYS:
        return raw.strip().lower() in ("1", "true", "yes", "on")
    return raw


def load_config(environ=None):
    """Return the settings dict: defaults, then ``COMMERCE_<KEY>`` overrides."""
    environ = os.environ if environ is None else environ
    config = dict(DEFAULTS)
    for key in DEFAULTS:
        raw = environ.get("COMMERCE_" + key)
        if raw is not None and raw != "":
            config[key] = _coerce(key, raw)
    return config


def current_config():
    """The running app's settings, or the environment's outside an app (CLI, scripts)."""
    from flask import current_app, has_app_context

    return current_app.config if has_app_context() else load_config()


class ConfigError(Exception):
    """A setting the service cannot run with; the message says what to do."""


# URL scheme -> (the driver module it needs, the extra that installs it)
_DRIVERS = {
    "postgres": ("psycopg2", "postgres"),
    "postgresql": ("psycopg2", "postgres"),
    "redis": ("redis", "redis"),
    "rediss": ("redis", "redis"),
    "unix": ("redis", "redis"),
}


def check_drivers(config):
    """Raise ConfigError when a URL setting needs a driver that is not installed."""
    for key in ("DATABASE_URL", "REDIS_URL"):
        url = config.get(key)
        scheme = urlparse(url).scheme if url else ""
        module, extra = _DRIVERS.get(scheme, (None, None))
        if module and not _installed(module):
            raise ConfigError(
                f"COMMERCE_{key} is a {scheme}:// URL but its driver ({module}) is not"
                f" installed: pip install 'commerce-api[{extra}]'"
            )


def _installed(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # blocked (sys.modules[name] = None) or broken
        return False
