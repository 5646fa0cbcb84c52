"""Marketplace connections API: /api/marketplaces."""

import functools

from flask import g, request
from flask.views import MethodView

from ..auth.middleware import public, require_scope
from ..errors import ApiError
from ..http.blueprint import Blueprint
from ..http.envelope import list_page, no_content, one
from ..orders.notified import take_notification
from . import checks, connections, notifications, services
from .schemas import (
    ConnectionCheckEnvelopeSchema,
    ConnectionCreateSchema,
    ConnectionEnvelopeSchema,
    ConnectionListArgsSchema,
    ConnectionListSchema,
    ConnectionUpdateSchema,
    NotificationReceiptEnvelopeSchema,
    SyncHistoryArgsSchema,
    SyncHistoryListSchema,
)

blp = Blueprint(
    "marketplaces",
    __name__,
    url_prefix="/api/marketplaces",
    description="The tenant's marketplace connections and the sync history.",
)

# Sync-history entries tell of orders (carriers, tracking numbers) or of products: each kind
# is shown only to a caller that may read that resource.
HISTORY_SCOPES = {"order": "orders:read", "product": "products:read"}


@blp.route("")
class MarketplaceViews(MethodView):
    @require_scope("marketplaces:read")
    @blp.arguments(ConnectionListArgsSchema, location="query")
    @blp.returns(200, ConnectionListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List the tenant's marketplace connections"""
        return list_page(
            args, services.CONNECTION_FIELDS, services.list_connections, g.auth.tenant_id
        )

    @require_scope("marketplaces:write")
    @blp.arguments(ConnectionCreateSchema)
    @blp.returns(201, ConnectionEnvelopeSchema)
    @blp.errors("MARKETPLACE_ALREADY_CONNECTED", body=True)
    def post(self, data):
        """Connect a marketplace"""
        connection = services.connect_marketplace(
            g.auth.tenant_id,
            data["marketplace"],
            data["connector"],
            base_url=data.get("base_url"),
            api_token=data.get("api_token"),
            settings=data.get("settings"),
            credentials=data.get("credentials"),
            created_by=g.auth.created_by,
            # a tenant may not point the service at private or loopback addresses
            allow_private=False,
        )
        return one(services.serialize_connection(connection), 201)


@blp.route("/sync-history")
class SyncHistoryViews(MethodView):
    @require_scope("marketplaces:read")
    @blp.arguments(SyncHistoryArgsSchema, location="query")
    @blp.returns(200, SyncHistoryListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List exchanges with the marketplaces (pushes and received orders)

        Needs `marketplaces:read`; entries about orders are listed only with `orders:read`
        as well, entries about products only with `products:read`.
        """
        wanted = args.get("resource_type") or ("order" if args.get("order_id") else None)
        if wanted and not g.auth.has_scope(HISTORY_SCOPES[wanted]):
            raise ApiError(
                "INSUFFICIENT_SCOPE",
                f"Sync history of {wanted}s needs the {HISTORY_SCOPES[wanted]} scope.",
                details={"required_scope": HISTORY_SCOPES[wanted]},
            )
        visible = [kind for kind, scope in HISTORY_SCOPES.items() if g.auth.has_scope(scope)]
        list_visible = functools.partial(services.list_attempts, resource_types=visible)
        return list_page(args, services.ATTEMPT_FIELDS, list_visible, g.auth.tenant_id)


@blp.route("/<string:connection_id>")
class MarketplaceByIdViews(MethodView):
    @require_scope("marketplaces:read")
    @blp.returns(200, ConnectionEnvelopeSchema)
    @blp.errors("CONNECTION_NOT_FOUND")
    def get(self, connection_id):
        """Get a marketplace connection"""
        connection = services.get_connection(g.auth.tenant_id, connection_id)
        return one(services.serialize_connection(connection))

    @require_scope("marketplaces:write")
    @blp.arguments(ConnectionUpdateSchema)
    @blp.returns(200, ConnectionEnvelopeSchema)
    @blp.errors("CONNECTION_NOT_FOUND", body=True)
    def patch(self, data, connection_id):
        """Change a connection's base URL, token, settings or status (active, disabled)"""
        connection = connections.update_connection(
            g.auth.tenant_id, connection_id, data, allow_private=False
        )
        return one(services.serialize_connection(connection))

    @require_scope("marketplaces:write")
    @blp.returns(204)
    @blp.errors("CONNECTION_NOT_FOUND")
    def delete(self, connection_id):
        """Disconnect a marketplace (its listings and sync history stay)"""
        connections.delete_connection(g.auth.tenant_id, connection_id)
        return no_content()


@blp.route("/<string:connection_id>/check")
class MarketplaceCheckViews(MethodView):
    @require_scope("marketplaces:read")
    @blp.returns(200, ConnectionCheckEnvelopeSchema)
    @blp.errors("CONNECTION_NOT_FOUND")
    def get(self, connection_id):
        """Check a connection with one cheap authenticated call

        `ok: false` with a plain `detail` when the marketplace refuses the credentials
        (the connection then shows `status_reason`) or cannot be reached.
        """
        connection = services.get_connection(g.auth.tenant_id, connection_id)
        return one(checks.check_connection(connection))


NOTIFICATION_MAX_BYTES = 1024 * 1024
NOTIFICATION_BODY = {
    "required": True,
    "description": "The marketplace's notification, exactly as it signed it (Shopify: the"
    ' order as JSON, signed in `X-Shopify-Hmac-Sha256`; sandbox: `{"order_id": "..."}`,'
    " signed in `X-Sandbox-Hmac-Sha256`). At most 1 MB.",
    "content": {"application/json": {"schema": {"type": "object"}}},
}


@blp.route("/<string:connection_id>/notifications")
@public
class MarketplaceNotificationViews(MethodView):
    raw_body_max_bytes = NOTIFICATION_MAX_BYTES  # read raw: the signature is over the bytes

    @blp.returns(200, NotificationReceiptEnvelopeSchema)
    @blp.doc(security=[], requestBody=NOTIFICATION_BODY)
    @blp.errors(
        "CONNECTION_NOT_FOUND",
        "NOTIFICATION_SIGNATURE_INVALID",
        "NOTIFICATION_BODY_INVALID",
        "NOTIFICATIONS_UNSUPPORTED",
        "PAYLOAD_TOO_LARGE",
        "SECRET_KEY_MISMATCH",
        auth=False,
    )
    def post(self, connection_id):
        """Take a marketplace notification (no API key: the marketplace signs it)

        Sent by the marketplace itself (Shopify's webhooks `orders/create`,
        `orders/updated`, `orders/cancelled`; the sandbox's test notifications). The
        signature over the raw body, with the connection's secret (Shopify:
        `credentials.webhook_secret`; sandbox: `credentials.notification_secret`), is
        checked in constant time before anything else of it is read: a wrong or missing
        one is a 401 and nothing is queued. Each order it names is pulled from the
        marketplace at once by the worker (the body is never trusted beyond the order
        ids); the periodic pull stays the backstop. A notification replayed with the same
        event id is answered 200 again (`duplicate: true`) and queues nothing. Only active
        connections take notifications (404 otherwise, whatever the tenant). Not rate
        limited by API key (there is none); the answer never waits for the marketplace.
        """
        connection = notifications.notified_connection(connection_id)
        raw = request.get_data(cache=True)
        notification = notifications.verify_notification(connection, request.headers, raw)
        taken = take_notification(connection, notification)
        return one(
            {
                "event_id": notification.event_id,
                "topic": notification.topic,
                "order_ids": list(notification.order_ids),
                "duplicate": taken.duplicate,
                "queued": taken.queued,
            }
        )
