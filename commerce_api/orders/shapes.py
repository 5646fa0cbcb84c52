"""What an order looks like in answers: documented and serialized from here.

The shipping address, shipment and cancellation are JSON columns that hold the shown form
(``as_stored``); their schemas document them.
"""

import marshmallow as ma

from ..marketplaces.shapes import SyncAttemptSchema
from ..shapes import AS_STORED
from .models import FULFILLMENT_METHODS, ORDER_STATUSES

STORED = {AS_STORED: True}


class AddressSchema(ma.Schema):
    """A shipping address: as imported (unknown fields refused) and as shown."""

    class Meta:
        unknown = ma.RAISE

    name = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=200))
    line1 = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=200))
    line2 = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=200))
    city = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=100))
    region = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=100))
    postal_code = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=20))
    country = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=2, min=2))


class LineItemSchema(ma.Schema):
    external_line_item_id = ma.fields.String()
    sku = ma.fields.String()
    title = ma.fields.String(allow_none=True)
    quantity = ma.fields.Integer()
    unit_price = ma.fields.Float()
    line_total = ma.fields.Float()
    shipped_quantity = ma.fields.Integer()


class ReturnSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "ret_01JD3Q9Z7G0000000000000000"})
    sku = ma.fields.String()
    quantity = ma.fields.Integer()
    reason = ma.fields.String(allow_none=True)
    reason_text = ma.fields.String(allow_none=True)
    created_at = ma.fields.DateTime(attribute="returned_at")


class CancellationSchema(ma.Schema):
    status = ma.fields.String(validate=ma.validate.OneOf(("requested", "approved", "rejected")))
    reason = ma.fields.String()
    requested_at = ma.fields.DateTime()
    requested_by = ma.fields.String(allow_none=True)
    decided_at = ma.fields.DateTime(allow_none=True)
    message = ma.fields.String(allow_none=True)
    job_id = ma.fields.String(allow_none=True)


class ShipmentInfoSchema(ma.Schema):
    carrier = ma.fields.String()
    tracking_number = ma.fields.String()
    shipped_date = ma.fields.DateTime()
    # the request's line schema (orders/schemas.py: its strict integers are the web
    # layer's), named, not imported: only the document resolves it, never the serializer
    line_items = ma.fields.List(ma.fields.Nested("commerce_api.orders.schemas.ShipmentLineSchema"))
    confirmation_id = ma.fields.String(allow_none=True)
    confirmed_at = ma.fields.DateTime()
    confirmed_by = ma.fields.String(allow_none=True)


class OrderSchema(ma.Schema):
    id = ma.fields.String(metadata={"example": "ord_01JD3Q9Z7G0000000000000000"})
    external_order_id = ma.fields.String()
    marketplace = ma.fields.String()
    status = ma.fields.String(validate=ma.validate.OneOf(ORDER_STATUSES))
    fulfillment_method = ma.fields.String(validate=ma.validate.OneOf(FULFILLMENT_METHODS))
    total_amount = ma.fields.Float()
    currency = ma.fields.String()
    created_at = ma.fields.DateTime(
        attribute="placed_at", metadata={"description": "Placement time."}
    )
    updated_at = ma.fields.DateTime()
    has_returns = ma.fields.Boolean()
    stock_shortage = ma.fields.Boolean()
    line_items = ma.fields.List(ma.fields.Nested(LineItemSchema))


class OrderDetailSchema(OrderSchema):
    shipping_address = ma.fields.Nested(AddressSchema, allow_none=True, metadata=STORED)
    shipment = ma.fields.Nested(ShipmentInfoSchema, allow_none=True, metadata=STORED)
    cancellation = ma.fields.Nested(CancellationSchema, allow_none=True, metadata=STORED)
    returns = ma.fields.List(ma.fields.Nested(ReturnSchema))
    sync_history = ma.fields.List(ma.fields.Nested(SyncAttemptSchema))
