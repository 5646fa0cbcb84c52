"""The events feed: /api/events, so an integration can catch up on what it missed."""

from flask import current_app, g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, resource_page
from . import feed
from .schemas import (
    EventEnvelopeSchema,
    EventFieldsArgsSchema,
    EventListArgsSchema,
    EventListSchema,
)

blp = Blueprint(
    "events",
    __name__,
    url_prefix="/api/events",
    description="Every event of the tenant kept for `COMMERCE_WEBHOOK_RETENTION_DAYS`, with the "
    "bodies webhooks carry; each listed only to a caller holding its domain's read scope.",
)


def _readers():
    """What the feed filters by: the caller's scopes and the retention."""
    return g.auth.has_scope, current_app.config["WEBHOOK_RETENTION_DAYS"]


@blp.route("")
class EventViews(MethodView):
    @require_scope(*feed.READ_SCOPES)
    @blp.arguments(EventListArgsSchema, location="query")
    @blp.returns(200, EventListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List events, newest first"""
        return list_page(args, feed.EVENT_FIELDS, feed.list_events, g.auth.tenant_id, *_readers())


@blp.route("/<string:event_id>")
class EventByIdViews(MethodView):
    @require_scope(*feed.READ_SCOPES)
    @blp.arguments(EventFieldsArgsSchema, location="query")
    @blp.returns(200, EventEnvelopeSchema)
    @blp.errors("EVENT_NOT_FOUND", "VALIDATION_ERROR")
    def get(self, args, event_id):
        """Get an event"""
        return resource_page(
            args, feed.EVENT_FIELDS, feed.get_event, g.auth.tenant_id, event_id, *_readers()
        )
