"""CORS for browser consoles on the origins in ``COMMERCE_CORS_ORIGINS`` (flask-cors).

Empty (the default): no CORS header on any answer, and browsers keep other origins out.
Configured: a preflight ``OPTIONS`` from a listed origin is answered (204, no auth) with
the allowed methods and headers; every answer to that origin, errors included, carries
``Access-Control-Allow-Origin`` and exposes the headers a client reads (request id, rate
limit, ``Retry-After``, ``Location``, ``Idempotent-Replayed``). An origin not listed gets
no CORS header. Tokens travel in ``Authorization``, never in cookies: no credentials mode.
"""

import re

from flask_cors import CORS

ALLOW_HEADERS = (
    "Authorization",
    "Content-Type",
    "X-Tenant-ID",
    "Idempotency-Key",
    "X-Request-ID",
)
EXPOSE_HEADERS = (
    "X-Request-ID",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "Retry-After",
    "Location",
    "Idempotent-Replayed",
)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
MAX_AGE_SECONDS = 600  # how long a browser may reuse a preflight's answer


_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?")  # no IPv6 literals: [ ]


def origins_of(setting):
    """``"https://a.example, http://localhost:3000"`` -> the origins, each matched exactly
    (or ``*``: any origin). Anything else is a configuration error, raised at start-up:
    flask-cors would read ``https://*.example.com`` as a regular expression."""
    origins = [o.strip().rstrip("/") for o in str(setting or "").split(",") if o.strip()]
    for origin in origins:
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise ValueError(
                f"COMMERCE_CORS_ORIGINS: {origin!r} is not an origin (scheme://host[:port]) or *"
            )
    return origins


def init_app(app):
    origins = origins_of(app.config.get("CORS_ORIGINS"))
    if not origins:
        return
    CORS(
        app,
        origins=origins,
        methods=list(METHODS),
        allow_headers=list(ALLOW_HEADERS),
        expose_headers=list(EXPOSE_HEADERS),
        max_age=MAX_AGE_SECONDS,
        supports_credentials=False,
        vary_header=True,
    )
    if "*" not in origins:
        # the answer depends on Origin whatever the number of origins: flask-cors adds
        # ``Vary: Origin`` only for several, and a shared cache would otherwise give one
        # origin's answer (with or without Access-Control-Allow-Origin) to another
        @app.after_request
        def _vary_on_origin(response):
            response.vary.add("Origin")
            return response
