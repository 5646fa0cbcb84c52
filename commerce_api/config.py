"""Configuration: safe defaults, overridden by ``COMMERCE_*`` environment variables."""

import os

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
    # How long a process keeps an API key row. Changes are seen at once all the same: every
    # request reads the tenant's auth_version, and a changed one drops the cached row.
    "AUTH_CACHE_SECONDS": 300,
    "REDIS_URL": None,
    "RATE_LIMIT_ENABLED": True,
    "RATE_LIMIT_KEY_PREFIX": "commerce:rl",  # Redis keys of the rate-limit counters
    "JOB_QUEUE_CAPACITY": 100,
    "WORKER_LEASE_SECONDS": 30,
    "WORKER_POLL_INTERVAL": 0.5,
    "WORKER_SHUTDOWN_GRACE_SECONDS": 30,
    "WORKER_MAX_ATTEMPTS": 4,  # the first try plus three retries
    "WORKER_CONCURRENCY": 4,  # jobs one worker process runs at once (threads)
    "WORKER_RETRY_BACKOFF_SECONDS": 5.0,  # first retry delay; doubles per attempt
    "JOB_PRIORITY_AGING_SECONDS": 300,  # a waiting job gains one priority level per this
    "JOB_DEFAULT_TIMEOUT_SECONDS": 600,  # for handlers that declare no TIMEOUT_SECONDS
    "EXTRA_TASK_MODULES": "",  # comma list of modules registering more job types (tests)
    "ORDER_PULL_INTERVAL_SECONDS": 60,
    "MARKETPLACE_CONNECT_TIMEOUT": 3.0,
    "MARKETPLACE_READ_TIMEOUT": 10.0,
    "WEBHOOK_ALLOW_PRIVATE_TARGETS": False,
    "LOG_LEVEL": "INFO",
}

_INT_KEYS = {
    "JWT_LEEWAY_SECONDS",
    "JWT_MAX_LIFETIME_SECONDS",
    "MAX_BODY_BYTES",
    "JOB_QUEUE_CAPACITY",
    "WORKER_LEASE_SECONDS",
    "WORKER_SHUTDOWN_GRACE_SECONDS",
    "WORKER_MAX_ATTEMPTS",
    "WORKER_CONCURRENCY",
    "JOB_PRIORITY_AGING_SECONDS",
    "JOB_DEFAULT_TIMEOUT_SECONDS",
    "ORDER_PULL_INTERVAL_SECONDS",
}
_FLOAT_KEYS = {
    "AUTH_CACHE_SECONDS",
    "WORKER_POLL_INTERVAL",
    "WORKER_RETRY_BACKOFF_SECONDS",
    "MARKETPLACE_CONNECT_TIMEOUT",
    "MARKETPLACE_READ_TIMEOUT",
}
_BOOL_KEYS = {"RATE_LIMIT_ENABLED", "WEBHOOK_ALLOW_PRIVATE_TARGETS"}


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
