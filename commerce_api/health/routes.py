"""GET /api/health."""

from importlib.metadata import PackageNotFoundError, version

import marshmallow as ma
from flask.views import MethodView

from ..auth.middleware import public
from ..http.blueprint import Blueprint
from ..http.envelope import json_response
from ..timeutil import format_ms, now_ms

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
    @blp.response(200, HealthSchema)
    @blp.doc(security=[])
    def get(self):
        """Report that the service is up"""
        return json_response({"status": "ok", "version": VERSION, "timestamp": format_ms(now_ms())})
