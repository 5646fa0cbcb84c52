"""Orders API: /api/orders."""

from flask import g
from flask.views import MethodView

from ..auth.middleware import require_scope
from ..http.blueprint import Blueprint
from ..http.bulk import load_items
from ..http.envelope import list_page, one, resource_page
from . import cancellation, reading, shipping
from .schemas import (
    BulkShipmentEnvelopeSchema,
    BulkShipmentItemSchema,
    BulkShipmentSchema,
    CancelSchema,
    OrderEnvelopeSchema,
    OrderFieldsArgsSchema,
    OrderListArgsSchema,
    OrderListSchema,
    ShipmentSchema,
)

blp = Blueprint(
    "orders",
    __name__,
    url_prefix="/api/orders",
    description="Orders collected from the marketplaces: shipment and cancellation.",
)


@blp.route("")
class OrderViews(MethodView):
    @require_scope("orders:read")
    @blp.arguments(OrderListArgsSchema, location="query")
    @blp.returns(200, OrderListSchema)
    @blp.errors("INVALID_CURSOR", "VALIDATION_ERROR")
    def get(self, args):
        """List orders"""
        return list_page(args, reading.ORDER_FIELDS, reading.list_orders, g.auth.tenant_id)


_bulk_item_schema = BulkShipmentItemSchema()


@blp.route("/bulk-shipment")
class OrderBulkShipmentViews(MethodView):
    @require_scope("orders:write")
    @blp.arguments(BulkShipmentSchema)
    @blp.returns(200, BulkShipmentEnvelopeSchema)
    @blp.errors(body=True)
    def post(self, data):
        """Confirm up to 100 shipments, each on its own"""
        return one(
            shipping.bulk_confirm_shipment(
                g.auth.tenant_id,
                load_items(_bulk_item_schema, data["shipments"], "order_id"),
                g.auth.created_by,
            )
        )


@blp.route("/<string:order_id>")
class OrderByIdViews(MethodView):
    @require_scope("orders:read")
    @blp.arguments(OrderFieldsArgsSchema, location="query")
    @blp.returns(200, OrderEnvelopeSchema)
    @blp.errors("ORDER_NOT_FOUND", "VALIDATION_ERROR")
    def get(self, args, order_id):
        """Get an order with its shipping address, returns and sync history"""
        return resource_page(
            args, reading.DETAIL_FIELDS, reading.get_order, g.auth.tenant_id, order_id
        )


@blp.route("/<string:order_id>/shipment")
class OrderShipmentViews(MethodView):
    @require_scope("orders:write")
    @blp.arguments(ShipmentSchema)
    @blp.returns(200, OrderEnvelopeSchema)
    @blp.errors(
        "ORDER_NOT_FOUND",
        "ALREADY_SHIPPED",
        "CONCURRENT_UPDATE",
        "INVALID_STATUS_TRANSITION",
        "MARKETPLACE_REJECTION",
        "MARKETPLACE_UNAVAILABLE",
        "MARKETPLACE_NOT_CONNECTED",
        body=True,
    )
    def post(self, data, order_id):
        """Confirm the order's shipment (pushed to the marketplace at once)"""
        return one(shipping.confirm_shipment(g.auth.tenant_id, order_id, data, g.auth.created_by))


@blp.route("/<string:order_id>/cancel")
class OrderCancelViews(MethodView):
    @require_scope("orders:write")
    @blp.arguments(CancelSchema)
    @blp.returns(202, OrderEnvelopeSchema)
    @blp.errors(
        "ORDER_NOT_FOUND",
        "INVALID_STATUS_TRANSITION",
        "CONCURRENT_UPDATE",
        "MARKETPLACE_NOT_CONNECTED",
        "QUEUE_FULL",
        body=True,
    )
    def post(self, data, order_id):
        """Request the order's cancellation (the marketplace decides)"""
        return one(
            cancellation.request_cancellation(
                g.auth.tenant_id, order_id, data["reason"], g.auth.created_by
            ),
            202,
        )
