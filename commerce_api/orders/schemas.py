"""Order request, import and response schemas."""

import marshmallow as ma

from ..http.lists import (
    FieldsArgsSchema,
    ListArgsSchema,
    envelope_schema,
    fields_arg,
    list_schema,
)
from ..http.schemas import (
    BulkErrorSchema,
    FullMatch,
    IsoTimestamp,
    StrictDecimal,
    StrictInteger,
    StrictSchema,
    Timestamp,
)
from .models import CANCELLATION_REASONS, FULFILLMENT_METHODS, ORDER_STATUSES
from .reading import DETAIL_FIELDS, ORDER_FIELDS
from .shapes import AddressSchema, OrderDetailSchema, OrderSchema

BULK_SHIPMENT_MAX = 100


# Import shape (orders import, and what connectors deliver) ----------------------------


class ImportLineSchema(StrictSchema):
    external_line_item_id = ma.fields.String(validate=ma.validate.Length(min=1, max=200))
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))
    title = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    quantity = StrictInteger(required=True, validate=ma.validate.Range(min=1, max=100_000))
    unit_price = StrictDecimal(places=2, load_default=None, validate=ma.validate.Range(min=0))
    line_total = StrictDecimal(places=2, load_default=None, validate=ma.validate.Range(min=0))
    # read-only fields of the API's own output, accepted and ignored on import
    shipped_quantity = ma.fields.Raw(load_only=True)


class ImportReturnSchema(StrictSchema):
    sku = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=64))
    quantity = StrictInteger(required=True, validate=ma.validate.Range(min=1, max=100_000))
    reason = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=64))
    reason_text = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=2000))
    created_at = IsoTimestamp(required=True)
    id = ma.fields.Raw(load_only=True)  # ignored: ours are assigned


class ImportOrderSchema(StrictSchema):
    """One order as a file or a marketplace delivers it."""

    external_order_id = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=200))
    marketplace = ma.fields.String(
        required=True, validate=FullMatch(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    )
    status = ma.fields.String(load_default="pending", validate=ma.validate.OneOf(ORDER_STATUSES))
    fulfillment_method = ma.fields.String(
        load_default="FBM", validate=ma.validate.OneOf(FULFILLMENT_METHODS)
    )
    total_amount = StrictDecimal(places=2, load_default=None, validate=ma.validate.Range(min=0))
    currency = ma.fields.String(
        load_default="USD", validate=FullMatch(r"^[A-Z]{3}$", error="A 3-letter code.")
    )
    created_at = IsoTimestamp(required=True, metadata={"description": "Placement time."})
    line_items = ma.fields.List(
        ma.fields.Nested(ImportLineSchema),
        required=True,
        validate=ma.validate.Length(min=1, max=500),
    )
    shipping_address = ma.fields.Nested(AddressSchema, allow_none=True, load_default=None)
    returns = ma.fields.List(
        ma.fields.Nested(ImportReturnSchema),
        load_default=list,
        validate=ma.validate.Length(max=500),
    )
    # a marketplace's answer to our cancellation request, when it decides later
    cancellation_status = ma.fields.String(
        allow_none=True, validate=ma.validate.OneOf(("approved", "rejected", "pending"))
    )
    # read-only fields of the API's own output, accepted and ignored on import
    id = ma.fields.Raw(load_only=True)
    updated_at = ma.fields.Raw(load_only=True)
    has_returns = ma.fields.Raw(load_only=True)
    stock_shortage = ma.fields.Raw(load_only=True)
    shipment = ma.fields.Raw(load_only=True)
    cancellation = ma.fields.Raw(load_only=True)
    sync_history = ma.fields.Raw(load_only=True)

    @ma.validates_schema
    def _lines_unique(self, data, **kwargs):
        ids = [line.get("external_line_item_id") for line in data.get("line_items") or []]
        given = [i for i in ids if i is not None]
        if len(given) != len(set(given)):
            raise ma.ValidationError(
                "external_line_item_id values must be unique within an order.", "line_items"
            )


# Requests ----------------------------------------------------------------------------


class OrderListArgsSchema(ListArgsSchema):
    fields = fields_arg(ORDER_FIELDS)
    status = ma.fields.String(validate=ma.validate.OneOf(ORDER_STATUSES))
    marketplace = ma.fields.String(validate=ma.validate.Length(min=1, max=64))
    fulfillment_method = ma.fields.String(validate=ma.validate.OneOf(FULFILLMENT_METHODS))
    start_date = ma.fields.Date(
        metadata={"description": "Placed on or after this date (ISO 8601, UTC)."}
    )
    end_date = ma.fields.Date(
        metadata={"description": "Placed on or before this date (ISO 8601, UTC, inclusive)."}
    )
    has_returns = ma.fields.Boolean()
    external_order_id = ma.fields.String(
        validate=ma.validate.Length(min=1, max=200),
        metadata={"description": "The marketplace's order number (exact)."},
    )
    sku = ma.fields.String(
        validate=ma.validate.Length(min=1, max=64),
        metadata={"description": "Orders with a line item of this SKU."},
    )
    updated_after = Timestamp(
        metadata={
            "description": "Changed at or after this date-time (RFC 3339; with "
            "`sort=updated_at`, the way to poll for changes)."
        }
    )
    sort = ma.fields.String(
        load_default="created_at",
        validate=ma.validate.OneOf(["created_at", "updated_at"]),
        metadata={"description": "`created_at` (placement time, default) or `updated_at`."},
    )

    @ma.validates_schema
    def _dates_in_order(self, data, **kwargs):
        start, end = data.get("start_date"), data.get("end_date")
        if start and end and start > end:
            raise ma.ValidationError("end_date is before start_date.", "end_date")


class OrderFieldsArgsSchema(FieldsArgsSchema):
    fields = fields_arg(DETAIL_FIELDS)


class ShipmentLineSchema(StrictSchema):
    external_line_item_id = ma.fields.String(
        required=True, validate=ma.validate.Length(min=1, max=200)
    )
    quantity = StrictInteger(required=True, validate=ma.validate.Range(min=1))


class ShipmentSchema(StrictSchema):
    carrier = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=100))
    tracking_number = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=100))
    shipped_date = Timestamp(
        metadata={
            "description": "When the parcel left (RFC 3339 date-time); now when omitted.",
            "format": "date-time",
        }
    )
    line_items = ma.fields.List(
        ma.fields.Nested(ShipmentLineSchema),
        validate=ma.validate.Length(min=1, max=500),
        metadata={"description": "Lines and quantities shipped; every line when omitted."},
    )


class BulkShipmentItemSchema(ShipmentSchema):
    order_id = ma.fields.String(required=True, validate=ma.validate.Length(min=1, max=80))


class BulkShipmentSchema(StrictSchema):
    shipments = ma.fields.List(
        ma.fields.Raw(
            allow_none=True,  # like any item that is not an object: that item fails
            metadata={
                "description": "`{order_id, carrier, tracking_number, ...}`",
                "item_schema": BulkShipmentItemSchema,  # the document's item type
            },
        ),
        required=True,
        validate=ma.validate.Length(min=1, max=BULK_SHIPMENT_MAX),
        metadata={"description": f"1 to {BULK_SHIPMENT_MAX} shipments, each applied on its own."},
    )


class CancelSchema(StrictSchema):
    reason = ma.fields.String(required=True, validate=ma.validate.OneOf(CANCELLATION_REASONS))


# Responses (documentation) -------------------------------------------------------------


OrderEnvelopeSchema = envelope_schema("OrderEnvelopeSchema", OrderDetailSchema)


OrderListSchema = list_schema("OrderListSchema", OrderSchema)


class BulkShipmentResultSchema(ma.Schema):
    succeeded = ma.fields.Integer()
    failed = ma.fields.Integer()
    errors = ma.fields.List(ma.fields.Nested(BulkErrorSchema))


BulkShipmentEnvelopeSchema = envelope_schema("BulkShipmentEnvelopeSchema", BulkShipmentResultSchema)
