"""GET /api/health (liveness) and GET /api/health/ready (readiness)."""

from importlib.metadata import PackageNotFoundError, version

import marshmallow as ma
from flask.views import MethodView

from ..auth.middleware import public
from ..http.blueprint import Blueprint
from ..http.envelope import json_response
from ..timeutil import format_ms, now_ms
from .readiness import check_readiness

blp = Blueprint("health", __name__, url_prefix="/api", description="Service health.")

try:
    VERSION = version("commerce-api")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0+unknown"


class HealthSchema(ma.Schema):
    status = ma.fields.String(metadata={"example": "ok"})
    version = ma.fields.String(metadata={"example": "0.1.0"})
    timestamp = ma.fields.String(metadata={"example": "2026-11-22T10:04:05.123Z"})


@blp.route("/health")
@public
class HealthViews(MethodView):
    @blp.returns(200, HealthSchema)
    @blp.errors(auth=False)  # an unknown query parameter is its 422
    @blp.doc(security=[])
    def get(self):
        """Report that the service is up"""
        return json_response({"status": "ok", "version": VERSION, "timestamp": format_ms(now_ms())})


class ReadinessChecksSchema(ma.Schema):
    database = ma.fields.Dict(
        required=True,
        metadata={
            "description": "`status` ok (with `latency_ms`) or unavailable (with `error`).",
            "example": {"status": "ok", "latency_ms": 0.4},
        },
    )
    migrations = ma.fields.Dict(
        required=True,
        metadata={
            "description": "`status` ok, pending (with the `pending` migration names) or"
            " unknown (the database did not answer).",
            "example": {"status": "ok"},
        },
    )
    secrets = ma.fields.Dict(
        required=True,
        metadata={
            "description": "Whether `COMMERCE_SECRET_KEY` decrypts the stored secrets"
            " (the newest of each kind are tried): `status` ok (with `sampled` and"
            " `readable`), unreadable (with `error`: it reads none of them; the host is"
            " not ready and writes no secret) or unknown.",
            "example": {"status": "ok", "sampled": 3, "readable": 3},
        },
    )
    workers = ma.fields.Dict(
        required=True,
        metadata={
            "description": "The job workers' loops (main loop, runners, heartbeat, webhook"
            " delivery, listing push): `status` ok, stalled (`stalled` lists each loop of a"
            " running worker without a successful pass for `COMMERCE_WORKER_STALL_SECONDS`:"
            " `worker`, `loop`, `seconds_since_pass`), none (no worker running) or unknown"
            " (the database did not answer). A stalled loop does not make this host unready.",
            "example": {"status": "ok", "stalled": []},
        },
    )


class ReadinessSchema(ma.Schema):
    status = ma.fields.String(required=True, metadata={"enum": ["ok", "unavailable"]})
    checks = ma.fields.Nested(ReadinessChecksSchema, required=True)
    worker_heartbeat_age_seconds = ma.fields.Float(
        required=True,
        allow_none=True,
        metadata={"description": "Seconds since the newest job worker heartbeat; null: none."},
    )
    timestamp = ma.fields.String(required=True, metadata={"format": "date-time"})


@blp.route("/health/ready")
@public
class ReadinessViews(MethodView):
    @blp.returns(200, ReadinessSchema)
    @blp.alt_response(
        503,
        schema=ReadinessSchema,
        description="The database did not answer within 1 s, its schema is not at the"
        " latest migration, or `COMMERCE_SECRET_KEY` reads none of the stored secrets;"
        " `checks` names which. Not the error envelope: a load balancer"
        " reads the same shape either way.",
    )
    @blp.errors(auth=False)  # an unknown query parameter is its 422
    @blp.doc(security=[])
    def get(self):
        """Report whether this host can serve requests"""
        readiness = check_readiness()
        body = {
            "status": "ok" if readiness.ready else "unavailable",
            "checks": readiness.checks,
            "worker_heartbeat_age_seconds": readiness.worker_heartbeat_age_seconds,
            "timestamp": format_ms(now_ms()),
        }
        if readiness.ready:
            return json_response(body)
        return json_response(body, 503, {"Retry-After": "5"})
